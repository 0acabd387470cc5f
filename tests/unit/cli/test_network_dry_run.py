"""The dry run and validate name each network-reached target's ceiling and warn when the client's
network caps below the storage: the virtual SAN study on a 25 Gbps and on a 100 Gbps client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app

EVENTS = Path(__file__).resolve().parents[3] / "events"
R5B = "r5b.24xlarge network 25 Gbps (3,125 MB/s, 2,980 MiB/s each way)"
R5N = "r5n.24xlarge network 100 Gbps (12,500 MB/s, 11,921 MiB/s each way)"


@pytest.fixture(autouse=True)
def in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # local mode's state directory stays out of the checkout


def virtual_san(tmp_path: Path, client: str | None = None, controllers: int | None = None) -> str:
    document = json.loads((EVENTS / "virtual-san.json").read_text(encoding="utf-8"))
    for config in document["configs"]:
        if config["id"] == "r5b-io2-controllers":
            config["instance_type"] = client or config["instance_type"]
            config["nodes"][0]["count"] = controllers or config["nodes"][0]["count"]
    path = tmp_path / "virtual-san.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def run(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result


def joined(text: str) -> str:
    return " ".join(text.split())


def warnings(output: str, config_id: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(f"warning: {config_id}: client")]


def test_a_25_gbit_client_is_named_and_warned(tmp_path: Path) -> None:
    result = run("run", "--local", "--dry-run", "--suite", virtual_san(tmp_path, "r5b.24xlarge"))
    assert (
        "network: r5b-io2-controllers/vsan-multipath: over the network of r5b.24xlarge: 2,980 MiB/s "
        "(network-bound)" in (joined(result.stdout))
    )
    assert R5B in result.stdout
    (warning,) = warnings(result.output, "r5b-io2-controllers")
    assert warning == (
        f"warning: r5b-io2-controllers: client {R5B} caps below what its storage could deliver, 14,901 MiB/s "
        "(5 controller r5b.24xlarge: ebs 7,153 MiB/s, network 2,980 MiB/s each; shared Multi-Attach "
        "volumes 20,000 MiB/s, 1,280,000 IOPS in all): results will be instance-bound: network"
    )


def test_the_shipped_event_runs_on_a_100_gbit_client_and_names_its_ceiling(tmp_path: Path) -> None:
    result = run("run", "--local", "--dry-run", "--suite", str(EVENTS / "virtual-san.json"))
    text = joined(result.stdout)
    assert "r5b-io2-controllers: r5n.24xlarge + 5 controller r5b.24xlarge" in text
    ceiling = "network: r5b-io2-controllers/vsan-multipath: over the network of r5n.24xlarge: 11,921 MiB/s"
    assert ceiling in text
    assert R5N in text and R5B not in text
    # 5 controllers of 25 Gbps (125 Gbps) still send more than 100 Gbps: said with the figures
    (warning,) = warnings(result.output, "r5b-io2-controllers")
    assert f"client {R5N} caps below what its storage could deliver, 14,901 MiB/s" in warning


def test_a_100_gbit_client_that_takes_what_the_storage_sends_is_not_warned(tmp_path: Path) -> None:
    suite = virtual_san(tmp_path, "r5n.24xlarge", controllers=3)  # 3 x 25 Gbps under 100 Gbps
    result = run("run", "--local", "--dry-run", "--suite", suite)
    assert "over the network of r5n.24xlarge: 8,941 MiB/s (storage-bound)" in joined(result.stdout)
    assert warnings(result.output, "r5b-io2-controllers") == []
    # the same config on the 25 Gbps client is warned: the client type alone makes the difference
    slow = run("run", "--local", "--dry-run", "--suite", virtual_san(tmp_path, "r5b.24xlarge", controllers=3))
    assert len(warnings(slow.output, "r5b-io2-controllers")) == 1


def test_the_preview_document_and_validate_carry_the_checks(tmp_path: Path) -> None:
    suite = virtual_san(tmp_path, "r5b.24xlarge")
    preview = json.loads(run("run", "--local", "--dry-run", "--suite", suite, "--json").stdout)["preview"]
    checks = {c["config_id"]: c for c in preview["network"]}
    assert set(checks) == {"r5b-io2-controllers", "i3en-controllers"}  # io2-direct is EBS: not here
    check = checks["r5b-io2-controllers"]
    assert (check["client"], check["client_baseline_gbps"], check["client_burst_gbps"]) == (
        "r5b.24xlarge",
        25,
        25,
    )
    assert check["warning"].startswith("r5b-io2-controllers: client r5b.24xlarge network 25 Gbps")
    summary = json.loads(run("validate", "--suite", suite, "--json").stdout)
    assert check["warning"] in summary["warnings"]
    vsan = next(c for c in summary["configs"] if c["id"] == "r5b-io2-controllers")["targets"][0]
    assert vsan["envelope"].startswith("over the network of r5b.24xlarge: 2,980 MiB/s (network-bound)")


@pytest.mark.parametrize("client", ["r5b.24xlarge", "r5n.24xlarge"])
def test_the_ebs_baseline_is_not_a_network_target(tmp_path: Path, client: str) -> None:
    preview = json.loads(
        run("run", "--local", "--dry-run", "--suite", virtual_san(tmp_path, client), "--json").stdout
    )["preview"]
    assert "io2-direct" not in {c["config_id"] for c in preview["network"]}
