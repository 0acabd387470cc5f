"""PriceListClient, ApiPriceBook and build_snapshot on a real botocore ``pricing`` client with the
Stubber, answering with the GetProducts responses under tests/data/pricing (recorded where
public code had them, constructed otherwise: see the README there)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import typer
from botocore.stub import Stubber
from typer.testing import CliRunner

from storagebench.adapters.aws import pricing as api
from storagebench.adapters.aws.pricing import (
    ApiPriceBook,
    PriceListAccessError,
    PriceListClient,
    build_snapshot,
    cache_key,
)
from storagebench.cli import prices_cmd
from storagebench.core.errors import ThrottledError
from storagebench.prices import pricelist as pl
from storagebench.prices.models import PriceNotFound
from storagebench.prices.products import PriceKey, TierKey
from storagebench.prices.snapshot import Snapshot, SnapshotPriceBook

DATA = Path(__file__).resolve().parents[2] / "data" / "pricing"
START = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)


def response(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return document


def request(query: pl.Query, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "ServiceCode": query.service_code,
        "Filters": query.api_filters(),
        "FormatVersion": "aws_v1",
        "MaxResults": 100,
    }
    if token:
        params["NextToken"] = token
    return params


class FakeClock:
    def __init__(self, now: datetime = START) -> None:
        self.moment = now

    def now(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


@pytest.fixture(autouse=True)
def offline_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials, no shared config, no instance metadata: nothing here reaches AWS."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_PRICING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def pricing() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("pricing", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


Answering = Callable[[Any, "str | dict[str, Any]", str], ApiPriceBook]


@pytest.fixture
def answering(pricing: tuple[Any, Stubber], clock: FakeClock, tmp_path: Path) -> Answering:
    """An API price book in a region whose one GetProducts call, for the query, answers the file
    (a path under tests/data/pricing) or the response given."""

    def book(query: Any, answer: str | dict[str, Any], region: str) -> ApiPriceBook:
        client, stubber = pricing
        answered = response(answer) if isinstance(answer, str) else answer
        stubber.add_response("get_products", answered, request(query))
        return ApiPriceBook(client, region, tmp_path, clock)

    return book


# ------------------------------------------------------------------------------ PriceListClient


def test_pagination_follows_next_token_to_the_last_page(pricing: tuple[Any, Stubber]) -> None:
    client, stubber = pricing
    query = pl.ebs_storage_query("ca-central-1", "io1")
    first = response("recorded/botocore-examples-getproducts-io1-storage-ca-central-1.json")
    second = response("recorded/awscli-example-getproducts-io1-storage-ap-southeast-1.json")
    stubber.add_response("get_products", first, request(query))
    stubber.add_response("get_products", second, request(query, first["NextToken"]))
    stubber.add_response(
        "get_products", response("constructed/empty-page.json"), request(query, second["NextToken"])
    )

    entries = PriceListClient(client).get_products(query)

    assert len(entries) == 2 and all(isinstance(e, str) for e in entries)
    found = pl.parse_price_list(entries)
    assert [p.usagetype for p in found] == ["CAN1-EBS:VolumeUsage.piops", "APS1-EBS:VolumeUsage.piops"]


def test_errors_become_workflow_errors(pricing: tuple[Any, Stubber]) -> None:
    client, stubber = pricing
    query = pl.efs_query("us-east-1")
    stubber.add_client_error(
        "get_products", "AccessDeniedException", "not authorized to perform pricing:GetProducts"
    )
    stubber.add_client_error("get_products", "ThrottlingException", "Rate exceeded", http_status_code=400)
    with pytest.raises(PriceListAccessError, match="AccessDeniedException"):
        PriceListClient(client).get_products(query)
    with pytest.raises(ThrottledError, match="ThrottlingException"):
        PriceListClient(client).get_products(query)


# ------------------------------------------------------------------------------ ApiPriceBook


def test_instance_hour_from_a_recorded_response(answering: Answering) -> None:
    query = pl.ec2_instance_query("us-east-1", "m5.large")
    book = answering(query, "recorded/cloudlint-getproducts-m5-large-us-east-1.json", "us-east-1")

    price = book.price(PriceKey("ec2_instance_hour", ("m5.large",)))

    assert (price.usd, price.unit, price.sku) == (0.096, "Hrs", "6C86BEPQVG73ZGGR")
    assert (price.source, price.region, price.as_of) == (
        "price-list-api",
        "us-east-1",
        "2026-11-21T08:00:00Z",
    )


def test_io2_tiers_and_the_region_prefix_in_us_east_2(answering: Answering) -> None:
    query, answer = pl.ebs_iops_query("us-east-2"), "constructed/ebs-iops-us-east-2.json"
    book = answering(query, answer, "us-east-2")

    io2 = book.price(TierKey("ebs_iops", ("io2",)))  # one GetProducts call answers io1, io2 and gp3
    assert [(t.begin, t.end, t.price.usd) for t in io2] == [
        (0, 32000, 0.065),
        (32000, 64000, 0.0455),
        (64000, None, 0.03185),
    ]
    assert {t.price.region for t in io2} == {"us-east-2"}
    assert [(t.begin, t.price.usd) for t in book.price(TierKey("ebs_iops", ("gp3",)))] == [(3000, 0.005)]
    assert [t.price.usd for t in book.price(TierKey("ebs_iops", ("io1",)))] == [0.065]
    assert book.price(TierKey("ebs_iops", ("gp2",))) == []  # no IOPS charge, no API call


def test_gp3_throughput_in_mibps_month(answering: Answering) -> None:
    query = pl.ebs_throughput_query("us-east-1")
    book = answering(query, "constructed/ebs-throughput-gp3-us-east-1.json", "us-east-1")
    [tier] = book.price(TierKey("ebs_throughput", ("gp3",)))
    assert (tier.begin, tier.end, tier.price.unit) == (125, None, "MiBps-Mo")
    assert tier.price.usd == pytest.approx(40.96 / 1024)


def test_the_cache_serves_a_day_then_reads_the_api_again(
    pricing: tuple[Any, Stubber], clock: FakeClock, tmp_path: Path
) -> None:
    client, stubber = pricing
    query = pl.efs_query("us-east-1")
    efs = response("constructed/efs-us-east-1.json")
    stubber.add_response("get_products", efs, request(query))

    first = ApiPriceBook(client, "us-east-1", tmp_path, clock).price(PriceKey("efs_storage", (False,)))
    stubber.assert_no_pending_responses()
    assert (tmp_path / cache_key(query)).is_file()

    clock.advance(hours=23, minutes=59)
    again = ApiPriceBook(client, "us-east-1", tmp_path, clock)  # a new process: only the file cache
    assert (
        again.price(PriceKey("efs_storage", (False,))) == first
    )  # no API call: the Stubber has nothing queued
    assert again.price(PriceKey("efs_elastic_transfer", ("write",))).usd == 0.06
    assert (
        again.price(PriceKey("efs_provisioned_throughput")).as_of == "2026-11-21T08:00:00Z"
    )  # when the API was read

    clock.advance(minutes=2)  # 24 h and 1 min after the read
    stubber.add_response("get_products", efs, request(query))
    refreshed = again.price(PriceKey("efs_storage", (True,)))
    stubber.assert_no_pending_responses()
    assert refreshed.as_of == "2026-11-22T08:01:00Z"


def test_the_cache_key_is_service_region_and_filters() -> None:
    keys = {
        cache_key(pl.efs_query("us-east-1")),
        cache_key(pl.efs_query("us-east-2")),
        cache_key(pl.ebs_storage_query("us-east-1", "gp3")),
        cache_key(pl.ebs_storage_query("us-east-1", "gp2")),
    }
    assert len(keys) == 4
    assert cache_key(pl.efs_query("us-east-2")).startswith("AmazonEFS-us-east-2-")


def test_a_corrupt_cache_file_is_read_again(answering: Answering, tmp_path: Path) -> None:
    query = pl.stepfunctions_query("us-east-1")
    (tmp_path / cache_key(query)).write_text("{not json", encoding="utf-8")
    book = answering(query, "constructed/states-us-east-1.json", "us-east-1")
    price = book.price(PriceKey("stepfunctions_transition"))
    assert (price.usd, price.unit) == (0.000025, "Transition")


def test_a_missing_product_says_what_where_and_how_it_was_asked(answering: Answering) -> None:
    query = pl.ec2_instance_query("eu-west-3", "r3.4xlarge")
    book = answering(query, "constructed/empty-page.json", "eu-west-3")
    with pytest.raises(PriceNotFound) as caught:
        book.price(PriceKey("ec2_instance_hour", ("r3.4xlarge",)))
    message = str(caught.value)
    assert "EC2 r3.4xlarge on-demand Linux" in message and "eu-west-3" in message
    assert "instanceType=r3.4xlarge" in message and "none of the 0 product(s)" in message


def test_ambiguous_price_list_data_is_a_price_not_found_with_the_reason(answering: Answering) -> None:
    query = pl.efs_query("us-east-1")
    efs = response("constructed/efs-us-east-1.json")
    standard = json.loads(efs["PriceList"][0])  # a second Standard product at another price
    standard["product"]["sku"] = "TESTEFSSTANDARD2"
    dimension = next(iter(next(iter(standard["terms"]["OnDemand"].values()))["priceDimensions"].values()))
    dimension["pricePerUnit"]["USD"] = "0.3300000000"
    efs["PriceList"].append(json.dumps(standard))
    book = answering(query, efs, "us-east-1")
    with pytest.raises(PriceNotFound, match=r"unusable Price List data.*different prices"):
        book.price(PriceKey("efs_storage", (False,)))
    assert book.price(PriceKey("efs_storage", (True,))).usd == 0.16  # the rest of the answer is usable


def test_unknown_arguments_fail_before_any_api_call(clock: FakeClock, tmp_path: Path) -> None:
    book = ApiPriceBook(object(), "us-east-1", tmp_path, clock)  # a client that cannot be called
    with pytest.raises(PriceNotFound, match="gp9 storage in us-east-1"):
        book.price(PriceKey("ebs_storage", ("gp9",)))
    with pytest.raises(PriceNotFound, match="PERSISTENT_2 storage in us-east-1"):
        book.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", 300)))
    assert book.price(TierKey("ebs_throughput", ("st1",))) == []


# ------------------------------------------------------------------------------ build_snapshot


def stub_build(stubber: Stubber, region: str = "us-east-1", missing_instance: str | None = None) -> None:
    """The GetProducts calls of build_snapshot for one region, in its order (each query once)."""
    stubber.add_response(
        "get_products",
        response("recorded/cloudlint-getproducts-m5-large-us-east-1.json"),
        request(pl.ec2_instance_query(region, "m5.large")),
    )
    if missing_instance:
        stubber.add_response(
            "get_products",
            response("constructed/empty-page.json"),
            request(pl.ec2_instance_query(region, missing_instance)),
        )
    stubber.add_response(
        "get_products",
        response("constructed/ec2-rhel-m5-large-us-east-1.json"),
        request(pl.ec2_os_instance_query(region, "m5.large", "RHEL")),
    )
    if missing_instance:
        stubber.add_response(
            "get_products",
            response("constructed/empty-page.json"),
            request(pl.ec2_os_instance_query(region, missing_instance, "RHEL")),
        )
    # m5.large and c7g.large are EBS-optimized by default: no fee is asked for
    for volume_type in pl.EBS_VOLUME_TYPES:
        name = (
            "recorded/awspricing-items-ebs-gp2-storage-us-east-1.json"
            if volume_type == "gp2"
            else f"constructed/ebs-storage-{volume_type}-us-east-1.json"
        )
        stubber.add_response(
            "get_products", response(name), request(pl.ebs_storage_query(region, volume_type))
        )
    for query, name in (
        (pl.ebs_iops_query(region), "constructed/ebs-iops-io2-ranged-us-east-1.json"),
        (pl.ebs_throughput_query(region), "constructed/ebs-throughput-gp3-us-east-1.json"),
        (pl.efs_query(region), "constructed/efs-us-east-1.json"),
        (pl.fsx_lustre_query(region), "constructed/fsx-lustre-us-east-1.json"),
        (pl.stepfunctions_query(region), "constructed/states-us-east-1.json"),
        (pl.lambda_query(region), "constructed/lambda-us-east-1.json"),
    ):
        stubber.add_response("get_products", response(name), request(query))


def test_build_snapshot_loads_in_snapshot_price_book(pricing: tuple[Any, Stubber], clock: FakeClock) -> None:
    client, stubber = pricing
    stub_build(stubber, missing_instance="c7g.large")

    document = build_snapshot(client, ["us-east-1"], clock=clock, instance_types=["m5.large", "c7g.large"])

    snapshot = Snapshot.model_validate(document)  # the structure of prices/snapshot.json
    assert snapshot.coverage.regions == ["us-east-1"]
    assert snapshot.as_of == "2026-11-21"
    book = SnapshotPriceBook("us-east-1", snapshot)
    m5 = book.price(PriceKey("ec2_instance_hour", ("m5.large",)))
    assert (m5.usd, m5.sku, m5.source, m5.as_of) == (0.096, "6C86BEPQVG73ZGGR", "snapshot", "2026-11-21")
    assert book.price(PriceKey("ebs_storage", ("gp2",))).usd == 0.10
    assert [(t.begin, t.end, t.price.usd) for t in book.price(TierKey("ebs_iops", ("io2",)))] == [
        (0, 32000, 0.065),
        (32000, 64000, 0.0455),
        (64000, None, 0.03185),
    ]
    assert book.price(TierKey("ebs_throughput", ("gp3",)))[0].price.usd == pytest.approx(0.04)
    assert book.price(PriceKey("efs_elastic_transfer", ("read",))).usd == 0.03
    assert book.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", 250))).usd == 0.21
    assert book.price(PriceKey("lambda_gb_second", ("arm64",))).usd == 0.0000133334
    assert book.price(PriceKey("stepfunctions_transition")).usd == 0.000025
    # The product the API did not have is recorded, and the book says why.
    rhel = book.price(PriceKey("ec2_os_instance_hour", ("m5.large", "RHEL")))
    assert (rhel.usd, rhel.sku) == (0.1248, "TESTRHELM5LARGE")
    assert [m.key for m in snapshot.regions["us-east-1"].missing] == [
        "ec2_instance_hour.c7g.large",
        "ec2_os_instance_hour.RHEL:c7g.large",
    ]
    with pytest.raises(PriceNotFound, match="none of the 0 product"):
        book.price(PriceKey("ec2_instance_hour", ("c7g.large",)))
    assert snapshot.regions["us-east-1"].unverified() == []
    raw = document["regions"]["us-east-1"]
    assert raw["ebs_throughput"]["gp3"][0]["api_unit"] == "GiBps-mo"
    assert raw["ec2_instance_hour"]["m5.large"]["usagetype"] == "BoxUsage:m5.large"


# ------------------------------------------------------------------------------ prices refresh


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    prices_cmd.register(app)
    return app


def test_refresh_without_credentials_exits_2(app: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = CliRunner().invoke(app, ["prices", "refresh", "--region", "us-east-1"])
    assert result.exit_code == 2
    assert "no AWS credentials found" in result.stderr and "pricing:GetProducts" in result.stderr


def test_refresh_without_network_exits_2(app: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    result = CliRunner().invoke(app, ["prices", "refresh", "--region", "us-east-1"])
    assert result.exit_code == 2
    assert "cannot reach the AWS Price List API" in result.stderr


def test_refresh_refuses_an_api_region_without_an_endpoint(app: typer.Typer) -> None:
    result = CliRunner().invoke(
        app, ["prices", "refresh", "--region", "us-east-1", "--api-region", "us-west-2"]
    )
    assert result.exit_code == 2 and "us-east-1, eu-central-1, ap-south-1" in result.stderr


def test_refresh_writes_a_snapshot_and_keeps_other_regions(
    app: typer.Typer, monkeypatch: pytest.MonkeyPatch, pricing: tuple[Any, Stubber], tmp_path: Path
) -> None:
    client, stubber = pricing
    stub_build(stubber)
    monkeypatch.setattr(prices_cmd, "_pricing_client", lambda api_region: client)
    monkeypatch.setattr(api, "_catalog_instance_types", lambda: ["m5.large"])
    out = tmp_path / "snapshot.json"
    out.write_text(
        json.dumps(
            {
                "snapshot_version": "old",
                "as_of": "2026-01-01",
                "source": "older",
                "coverage": {"regions": ["eu-west-1"]},
                "regions": {"eu-west-1": {"ebs_storage": {"gp3": {"usd": 0.088, "unit": "GB-Mo"}}}},
            }
        ),
        encoding="utf-8",
    )

    result = CliRunner().invoke(app, ["prices", "refresh", "--region", "us-east-1", "--out", str(out)])

    assert result.exit_code == 0, result.output
    assert "us-east-1: every price read" in result.stderr
    written = Snapshot.model_validate_json(out.read_text(encoding="utf-8"))
    assert written.coverage.regions == ["eu-west-1", "us-east-1"]
    assert SnapshotPriceBook("eu-west-1", written).price(PriceKey("ebs_storage", ("gp3",))).usd == 0.088
    assert (
        SnapshotPriceBook("us-east-1", written).price(PriceKey("ec2_instance_hour", ("m5.large",))).usd
        == 0.096
    )


# ------------------------------------------------------------------------------ launch surcharges


def test_the_ebs_optimized_fee_is_its_own_usage_type_not_the_instance_listed_beside_it(
    answering: Answering,
) -> None:
    query = pl.ec2_ebs_optimized_query("us-east-1", "r3.4xlarge")
    book = answering(query, "constructed/ec2-ebs-optimized-r3-4xlarge-us-east-1.json", "us-east-1")
    fee = book.price(PriceKey("ec2_ebs_optimized_hour", ("r3.4xlarge",)))
    assert (fee.usd, fee.unit, fee.sku) == (0.1, "Hrs", "TESTEBSOPTR34XL")


def test_the_rhel_hour_is_read_with_the_linux_filters_but_rhel(answering: Answering) -> None:
    query = pl.ec2_os_instance_query("us-east-1", "m5.large", "RHEL")
    assert dict(query.filters)["operatingSystem"] == "RHEL"
    assert {k: v for k, v in query.filters if k != "operatingSystem"} == {
        k: v for k, v in pl.ec2_instance_query("us-east-1", "m5.large").filters if k != "operatingSystem"
    }
    book = answering(query, "constructed/ec2-rhel-m5-large-us-east-1.json", "us-east-1")
    hour = book.price(PriceKey("ec2_os_instance_hour", ("m5.large", "RHEL")))
    assert (hour.usd, hour.sku) == (0.1248, "TESTRHELM5LARGE")


def test_an_operating_system_without_a_licence_price_is_refused_by_name() -> None:
    with pytest.raises(PriceNotFound, match="operating system 'Ubuntu' has no licence price"):
        SnapshotPriceBook("us-east-1").price(PriceKey("ec2_os_instance_hour", ("m5.large", "Ubuntu")))
