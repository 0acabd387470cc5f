"""The agent's own AWS calls: SigV4 against published vectors and botocore, IMDSv2, retries, sync."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from tests.support.fake_aws import ROLE, FakeAws, environment

from storagebench.agent.aws.client import AwsError, Client
from storagebench.agent.aws.credentials import CredentialSource, InstanceMetadata
from storagebench.agent.aws.s3 import S3, DirectorySync, parse_s3_uri
from storagebench.agent.aws.sigv4 import Credentials, sha256_hex, sign
from storagebench.agent.aws.states import StepFunctions, TaskGoneError

SUITE_KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
SUITE_TIME = datetime(2015, 8, 30, 12, 36, tzinfo=timezone.utc)


def no_sleep(_: float) -> None:
    pass


# ---------------------------------------------------------------- SigV4


def test_sigv4_matches_the_published_suite_vector() -> None:
    """AWS's SigV4 test suite, get-header-key-duplicate (repeated values folded, order kept)."""
    signed = sign(
        "GET",
        "https://example.amazonaws.com/",
        {"My-Header1": "value2,value2,value1"},
        sha256_hex(b""),
        "us-east-1",
        "service",
        SUITE_KEYS,
        SUITE_TIME,
    )
    assert signed["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;my-header1;x-amz-date, "
        "Signature=c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"
    )


@pytest.mark.parametrize(
    "service, method, url, body, headers",
    [
        (
            "s3",
            "PUT",
            "https://bucket.s3.us-east-1.amazonaws.com/runs/r%201/a+b/manifest.json",
            b'{"a": 1}',
            {"Content-Type": "application/json"},
        ),
        (
            "states",
            "POST",
            "https://states.eu-west-1.amazonaws.com/",
            b'{"taskToken": "t"}',
            {
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": "AWSStepFunctions.SendTaskHeartbeat",
            },
        ),
        ("s3", "GET", "https://bucket.s3.us-east-1.amazonaws.com/k?list-type=2&prefix=a%2Fb", b"", {}),
    ],
)
def test_sigv4_agrees_with_botocore(service: str, method: str, url: str, body: bytes, headers: dict) -> None:
    botocore_auth = pytest.importorskip("botocore.auth")
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    region = url.split(".")[-3] if service == "states" else "us-east-1"
    keys = Credentials("AKIAEXAMPLE", "secret/key+x", "session-token")
    now = datetime(2026, 11, 25, 10, 0, tzinfo=timezone.utc)
    ours = sign(method, url, headers, sha256_hex(body), region, service, keys, now)

    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
    request.headers["X-Amz-Date"] = amz_date
    request.headers["X-Amz-Security-Token"] = "session-token"
    if service == "s3":
        request.headers["X-Amz-Content-SHA256"] = sha256_hex(body)
    request.context["timestamp"] = amz_date
    signer_class = botocore_auth.S3SigV4Auth if service == "s3" else botocore_auth.SigV4Auth
    signer = signer_class(BotoCredentials("AKIAEXAMPLE", "secret/key+x", "session-token"), service, region)
    canonical = signer.canonical_request(request)
    signature = signer.signature(signer.string_to_sign(request, canonical), request)
    names = signer.signed_headers(signer.headers_to_sign(request))
    assert ours["Authorization"].endswith(f"SignedHeaders={names}, Signature={signature}"), canonical


# ---------------------------------------------------------------- credentials


def test_credentials_come_from_imdsv2_token_first(fake_server: FakeAws) -> None:
    source = CredentialSource(environ=environment(fake_server))
    credentials = source.get()
    assert (credentials.access_key, credentials.token) == ("ASIA1", "session-1")
    assert fake_server.imds_reads == [
        "/latest/meta-data/iam/security-credentials/",
        f"/latest/meta-data/iam/security-credentials/{ROLE}",
    ]
    source.get()
    assert fake_server.credential_fetches == 1  # cached until close to expiry


def test_credentials_are_refreshed_before_they_expire(fake_server: FakeAws) -> None:
    soon = datetime.now(timezone.utc) + timedelta(minutes=3)
    fake_server.expiration = soon.strftime("%Y-%m-%dT%H:%M:%SZ")
    source = CredentialSource(environ=environment(fake_server))
    assert source.get().access_key == "ASIA1"
    assert source.get().access_key == "ASIA2"  # within five minutes of expiry: fetched again


def test_environment_keys_win_over_the_metadata_service(fake_server: FakeAws) -> None:
    env = environment(fake_server, {"AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "s"})
    assert CredentialSource(environ=env).get().access_key == "AKIAENV"
    assert fake_server.imds_reads == []


def test_no_metadata_service_is_a_named_error() -> None:
    client = Client(
        "s3", "us-east-1", environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9"}, sleep=no_sleep
    )
    with pytest.raises(AwsError) as caught:
        S3(client).put("s3://b/k", b"x")
    assert caught.value.code == "NoCredentials"
    assert "instance metadata http://127.0.0.1:9" in str(caught.value)


def test_imds_without_a_token_is_refused(fake_server: FakeAws) -> None:
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(fake_server.url + "/latest/meta-data/iam/security-credentials/")
    assert InstanceMetadata(fake_server.url).get("/latest/meta-data/iam/security-credentials/") == ROLE


# ---------------------------------------------------------------- S3 and Step Functions


def test_put_is_signed_path_style_on_an_endpoint_override(fake_server: FakeAws) -> None:
    s3 = S3(Client("s3", "us-east-1", environ=environment(fake_server), sleep=no_sleep))
    s3.put("s3://bucket/runs/r 1/out.json", b"{}")
    assert fake_server.objects == {"bucket/runs/r 1/out.json": b"{}"}
    assert fake_server.unsigned == []


def test_virtual_hosted_addresses_on_aws() -> None:
    s3 = S3(Client("s3", "eu-west-1", environ={}))
    assert s3.url("bucket", "a b/c") == "https://bucket.s3.eu-west-1.amazonaws.com/a%20b/c"
    assert s3.url("my.bucket", "k") == "https://s3.eu-west-1.amazonaws.com/my.bucket/k"


def test_server_errors_are_retried_then_named(fake_server: FakeAws) -> None:
    fake_server.fail["PutObject"] = 503
    s3 = S3(Client("s3", "us-east-1", environ=environment(fake_server), sleep=no_sleep))
    with pytest.raises(AwsError) as caught:
        s3.put("s3://bucket/k", b"x")
    assert caught.value.status == 503 and "after 5 attempts" in str(caught.value)


def test_a_missing_bucket_is_not_retried(fake_server: FakeAws) -> None:
    fake_server.missing_buckets.add("gone")
    slept = []
    s3 = S3(Client("s3", "us-east-1", environ=environment(fake_server), sleep=slept.append))
    with pytest.raises(AwsError) as caught:
        s3.put("s3://gone/k", b"x")
    assert (caught.value.status, caught.value.code, slept) == (404, "NoSuchBucket", [])


def test_task_calls_and_a_task_that_is_gone(fake_server: FakeAws) -> None:
    states = StepFunctions(
        Client("states", "us-east-1", environ=environment(fake_server), sleep=no_sleep), "tok"
    )
    states.heartbeat()
    states.success({"status": "completed"})
    states.failure("AgentError", "x" * 40_000)
    assert fake_server.actions() == ["SendTaskHeartbeat", "SendTaskSuccess", "SendTaskFailure"]
    assert fake_server.calls[1][1] == {"taskToken": "tok", "output": '{"status": "completed"}'}
    assert len(fake_server.calls[2][1]["cause"]) == 32_768  # SendTaskFailure's limit: the end is kept
    fake_server.fail["SendTaskHeartbeat"] = 400
    with pytest.raises(TaskGoneError):
        states.heartbeat()


def test_sync_uploads_new_and_changed_files_only(fake_server: FakeAws, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("1")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.log").write_text("x")
    sync = DirectorySync(
        S3(Client("s3", "us-east-1", environ=environment(fake_server))), str(tmp_path), "s3://b/p"
    )
    assert sync.run() == 2
    assert sync.run() == 0
    (tmp_path / "a.json").write_text("22")
    os.utime(tmp_path / "a.json", ns=(1, 1))
    assert sync.run() == 1
    assert set(fake_server.objects) == {"b/p/a.json", "b/p/sub/b.log"}
    assert fake_server.objects["b/p/a.json"] == b"22"


def test_s3_addresses_are_checked() -> None:
    assert parse_s3_uri("s3://b/k/x") == ("b", "k/x")
    with pytest.raises(ValueError, match="not an s3:// address"):
        parse_s3_uri("https://b/k")
