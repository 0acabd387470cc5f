"""Storage-only cost deltas beside whole-config ones: field study 3 compared EFS and FSx for Lustre
as storage (EFS Standard 1 TiB at $0.30 per GB-month against FSx for Lustre 1.2 TiB at $0.14,
about 1.8 x), not as storage plus the c5.2xlarge that mounts it (-25 %)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app
from storagebench.costs.compare import compare
from storagebench.costs.cost_delta import monthly_cost_delta
from storagebench.costs.document import cost_document
from storagebench.costs.monthly import is_storage_under_test, monthly_cost, price_request
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import load_request, parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"
GENOMICS = EVENTS / "genomics-file-systems.json"
# The study's own figures (shared/reference/field-workloads.md section 3): EFS Standard 1 TiB at
# $0.30 per GB-month, FSx for Lustre 1.2 TiB at $0.14.
STUDY_EFS_OVER_FSX = (1.0 * 0.30) / (1.2 * 0.14)


def test_genomics_efs_over_fsx_storage_alone_matches_the_study_within_5_percent() -> None:
    request = load_request(GENOMICS)
    costs = price_request(request, SnapshotPriceBook(request.region))
    efs, fsx = costs["efs-standard"], costs["fsx-lustre"]

    ratio = efs.storage_only_usd / fsx.storage_only_usd
    assert ratio == pytest.approx(STUDY_EFS_OVER_FSX, rel=0.05)
    # the whole config's ratio is the instance's as much as the storage's: far from the study
    assert efs.monthly_usd / fsx.monthly_usd < 0.8 * STUDY_EFS_OVER_FSX

    storage = monthly_cost_delta(fsx, efs, part="storage")
    whole = monthly_cost_delta(fsx, efs)
    assert storage.pct == pytest.approx((168.00 - 307.20) / 307.20 * 100)  # -45.3 %
    assert whole.pct is not None and whole.pct > -30  # -25.0 %: the c5.2xlarge counted on both sides


def test_storage_only_leaves_out_instances_and_root_volumes_of_clients_and_nodes() -> None:
    request = load_request(GENOMICS)
    cluster = monthly_cost(request.config("moosefs-cluster"), SnapshotPriceBook(request.region))
    kept = [c for c in cluster.components if is_storage_under_test(c)]
    # only the 3 chunk servers' 410 GiB gp2 chunk volumes: no instance, no root volume
    assert [(c.target_id, c.name, c.count) for c in kept] == [("chunk:chunks", "ebs-storage", 3)]
    assert cluster.storage_only_usd == pytest.approx(3 * 410 * 0.10)
    assert cluster.storage_usd > cluster.storage_only_usd  # the root volumes are storage, not under test


def test_a_file_gateway_counts_its_cache_disks_not_its_root_disk() -> None:
    request = load_request(EVENTS / "file-gateway-io1-vs-gp2.json")
    cost = monthly_cost(request.configs[0], SnapshotPriceBook(request.region))
    kept = {c.target_id for c in cost.components if is_storage_under_test(c)}
    assert kept and all("gateway-cache" in tid for tid in kept)


def test_a_baseline_without_priced_storage_gives_no_storage_delta_and_says_why() -> None:
    request = parse_request(
        {
            "name": "instance-store-baseline",
            "configs": [
                {"id": "nvme", "instance_type": "i3en.large", "targets": [{"kind": "instance_store"}]},
                {
                    "id": "gp3",
                    "instance_type": "i3en.large",
                    "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
                },
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    costs = price_request(request, SnapshotPriceBook(request.region))
    delta = monthly_cost_delta(costs["gp3"], costs["nvme"], part="storage")
    assert delta.pct is None
    assert delta.reason == (
        "no storage-only delta: nvme's instance-store0 is instance store, paid inside its instance-hours"
    )


def test_cost_document_and_table_show_both_deltas() -> None:
    request = load_request(GENOMICS)
    document, _ = cost_document(request, SnapshotPriceBook(request.region))
    fsx = next(c for c in document["configs"] if c["id"] == "fsx-lustre")
    assert fsx["storage_monthly_usd"] == pytest.approx(168.00)
    assert fsx["delta_storage_monthly_pct"] == pytest.approx(-45.3125)
    assert fsx["delta_monthly_pct"] == pytest.approx(-25.03, abs=0.01)

    result = CliRunner().invoke(app, ["cost", "--suite", str(GENOMICS)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    line = next(row for row in result.stdout.splitlines() if "fsx-lustre" in row and "%" in row)
    assert "-25.0 %" in line and "$168.00" in line and "-45.3 %" in line

    as_json = CliRunner().invoke(app, ["cost", "--suite", str(GENOMICS), "--json"])
    entry = next(c for c in json.loads(as_json.stdout)["configs"] if c["id"] == "efs-standard")
    assert entry["storage_monthly_usd"] == pytest.approx(307.20)


def test_the_comparison_carries_the_storage_delta_for_the_report() -> None:
    request = load_request(GENOMICS)
    costs = price_request(request, SnapshotPriceBook(request.region))
    row = compare(request, costs, []).config("fsx-lustre")
    assert row.storage_only_usd == pytest.approx(168.00)
    assert row.delta_storage_pct == pytest.approx(-45.3125)
    assert row.delta_monthly_pct == pytest.approx(-25.03, abs=0.01)


def test_shared_clients_event_compares_storage_alone_at_every_client_count() -> None:
    request = load_request(EVENTS / "genomics-shared-clients.json")
    costs = price_request(request, SnapshotPriceBook(request.region))
    for clients in (1, 4, 8):
        efs, fsx = costs[f"efs-standard-{clients}clients"], costs[f"fsx-lustre-{clients}clients"]
        # the file systems are priced once whatever the clients: the storage ratio stays the study's
        assert efs.storage_only_usd / fsx.storage_only_usd == pytest.approx(STUDY_EFS_OVER_FSX, rel=0.05)
    eight = costs["efs-standard-8clients"]
    assert eight.monthly_usd - eight.storage_only_usd > 8 * 248  # eight c5.2xlarge and their root volumes


def test_a_target_cannot_take_the_root_volumes_name() -> None:
    document = {
        "name": "root-name",
        "configs": [
            {
                "id": "a",
                "instance_type": "c5.large",
                "targets": [{"id": "root", "kind": "ebs", "type": "gp3", "size_gib": 10}],
            }
        ],
        "workloads": [{"profile": "std-randread-4k"}],
    }
    with pytest.raises(ValueError) as raised:
        parse_request(document)
    assert (
        'configs[0].targets[0].id: reserved for the machine\'s root volume; choose another id (got "root")'
        in str(raised.value)
    )


def test_instance_store_has_no_storage_only_delta_it_is_paid_inside_the_instance_hours() -> None:
    # the virtual SAN's i3en controllers serve their own NVMe: a storage-only "$0, -100 %" would
    # say their storage is free
    request = load_request(EVENTS / "virtual-san.json")
    costs = price_request(request, SnapshotPriceBook(request.region))
    i3en, baseline = costs["i3en-controllers"], costs["io2-direct"]
    assert i3en.storage_in_instance_price == ["controller:nvme"]
    assert baseline.storage_in_instance_price == []

    storage = monthly_cost_delta(i3en, baseline, part="storage")
    assert storage.pct is None
    assert storage.reason == (
        "no storage-only delta: i3en-controllers's controller:nvme is instance store, paid inside its "
        "instance-hours"
    )
    assert monthly_cost_delta(i3en, baseline).pct is not None  # the whole config still compares

    result = CliRunner().invoke(
        app, ["cost", "--suite", str(EVENTS / "virtual-san.json")], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("│ i3en-controllers    │ r5n"))
    assert "$0.00 + instance store" in row and "-100" not in row
