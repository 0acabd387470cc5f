"""The stack's dry run and start against the account's EC2 vCPU quotas (the API reads them): the dry
run prints each quota's need and value, exits 2 naming the quota over it, warns at 80 %; a start over
a quota is refused (422) before anything is launched. Local mode's dry run reads the recorded answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support import api_cli
from tests.support.api_cli import Signed, cli
from tests.support.api_stack import EVENTS, REGION, Stack
from typer.testing import CliRunner

from storagebench.cli.main import app
from storagebench.quotas.recorded import RecordedQuotas

served = api_cli.served
hooks = api_cli.hooks
STANDARD = "L-1216C47A"
NAME = "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"
# local-demo: gp2, gp3 and io1 on c5.4xlarge (16 vCPUs each), 3 at once: 48 vCPUs


def _account(tmp_path: Path, standard: float) -> RecordedQuotas:
    answer = {"Quota": {"ServiceCode": "ec2", "QuotaCode": STANDARD, "QuotaName": NAME, "Value": standard}}
    path = tmp_path / "account.json"
    path.write_text(json.dumps({"answers": {STANDARD: answer}}), encoding="utf-8")
    return RecordedQuotas(path)


def _dry_run_with_quota(stack: Stack, url: str, tmp_path: Path, standard: float) -> Any:
    """The stack's dry run of local-demo with the account's Standard vCPU quota at ``standard``."""
    stack.service.quotas = _account(tmp_path, standard)
    return _dry_run(url)


def _dry_run(url: str, *extra: str) -> Any:
    suite = str(EVENTS / "local-demo.json")
    return cli("run", "--suite", suite, "--api-url", url, "--region", REGION, "--dry-run", *extra)


def _joined(text: str) -> str:
    return " ".join(text.split())


def test_the_dry_run_refuses_a_run_over_a_quota_naming_it(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path
) -> None:
    result = _dry_run_with_quota(stack, served[0], tmp_path, 40)
    assert result.exit_code == 2, result.output
    out, err = _joined(result.stdout), _joined(result.stderr)
    # rich may wrap the long path anywhere: compare without whitespace
    assert f"vCPUquotas(recordedanswer{tmp_path / 'account.json'}):" in "".join(out.split())
    assert (
        f"{STANDARD} {NAME}: 48 vCPUs needed at once (3 config(s)), quota 40 (recorded): over the quota by 8"
        in out
    )
    assert (
        f"over a limit: 48 vCPUs needed at once (3 config(s) at once; per config: gp2 16, gp3 16, io1 16), "
        f"more than the account's {NAME} quota {STANDARD} of 40 vCPUs" in err
    )
    assert "or run at most 2 config(s) at once (max_concurrency)" in err
    started = cli(
        "run", "--suite", str(EVENTS / "local-demo.json"), "--api-url", served[0], "--region", REGION
    )
    assert started.exit_code == 2 and "422 over_limit" in started.stderr and STANDARD in started.stderr
    assert stack.launcher.started == []


def test_the_dry_run_warns_at_80_percent_of_a_quota(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path
) -> None:
    result = _dry_run_with_quota(stack, served[0], tmp_path, 60)
    assert result.exit_code == 0, result.output
    assert "48 vCPUs needed at once (3 config(s)), quota 60 (recorded): 80 % of the quota" in _joined(
        result.stdout
    )
    assert f"note: vCPU quota {STANDARD} ({NAME}): 48 vCPUs needed at once are 80 % of its 60" in _joined(
        result.stderr
    )


def test_the_dry_run_within_a_quota_says_ok(stack: Stack, served: tuple[str, Signed], tmp_path: Path) -> None:
    result = _dry_run_with_quota(stack, served[0], tmp_path, 5000)
    assert result.exit_code == 0, result.output
    assert "quota 5,000 (recorded): ok (1 %)" in _joined(result.stdout)
    assert "quota" not in result.stderr
    preview = json.loads(_dry_run(served[0], "--json").stdout)["preview"]
    assert preview["vcpu_quotas"]["lines"][0]["needed_vcpus"] == 48
    assert preview["vcpu_quotas"]["lines"][0]["status"] == "ok"


def test_a_stack_without_a_quota_reader_prints_no_quota_line(
    stack: Stack, served: tuple[str, Signed]
) -> None:
    url, _ = served
    result = _dry_run(url)
    assert result.exit_code == 0, result.output
    assert "vCPU quotas" not in result.stdout


@pytest.mark.parametrize("as_json", [False, True])
def test_the_local_dry_run_of_the_virtual_san_names_the_vcpus_it_needs(as_json: bool) -> None:
    args = ["run", "--local", "--dry-run", "--suite", str(EVENTS / "virtual-san.json")]
    result = CliRunner().invoke(app, args + (["--json"] if as_json else []), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output  # local mode launches nothing on AWS: told, not refused
    if as_json:
        check = json.loads(result.stdout)["preview"]["vcpu_quotas"]
        assert (
            check["refuses"] is False
            and check["source"] == "recorded answer storagebench/quotas/recorded.json"
        )
        [line] = check["lines"]
        assert (line["code"], line["needed_vcpus"], line["quota_vcpus"], line["status"]) == (
            STANDARD,
            1536,
            5,
            "over",
        )
        return
    out, err = _joined(result.stdout), _joined(result.stderr)
    line = f"{STANDARD} {NAME}: 1,536 vCPUs needed at once (3 config(s)), quota 5 (recorded)"
    assert f"{line}: over the quota by 1,531" in out
    assert (
        "local mode launches nothing on AWS, but a stack in an account with this quota refuses the run" in err
    )
    assert "even i3en-controllers alone needs 864" in err


def test_a_bad_recorded_answer_stops_the_local_dry_run_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from storagebench.quotas import recorded

    bad = {"answers": {STANDARD: {"Quota": {"ServiceCode": "ec2", "QuotaCode": STANDARD, "QuotaName": NAME}}}}
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    original = recorded.RecordedQuotas.__init__

    def bundled_edited(self: RecordedQuotas, _: Path | None = None) -> None:  # the bundled file, broken
        original(self, path)

    monkeypatch.setattr(recorded.RecordedQuotas, "__init__", bundled_edited)
    args = ["run", "--local", "--dry-run", "--suite", str(EVENTS / "local-demo.json")]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert f"the recorded quota answer: {path}: answers.{STANDARD}.Quota.Value: 'missing'" in _joined(
        result.stderr
    )
