"""The bundled price snapshot, SnapshotPriceBook and ``storagebench prices show``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from storagebench.catalog.loader import load_catalog
from storagebench.cli import prices_cmd
from storagebench.prices.book import PriceBook
from storagebench.prices.models import PriceNotFound
from storagebench.prices.products import PriceKey, TierKey
from storagebench.prices.snapshot import (
    SNAPSHOT_PATH,
    Snapshot,
    SnapshotPriceBook,
    load_snapshot,
    merge_snapshots,
)


@pytest.fixture
def book() -> SnapshotPriceBook:
    return SnapshotPriceBook("us-east-1")


def raw() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    return document


# ------------------------------------------------------------------------------ the file


def test_snapshot_is_dated_and_names_its_coverage() -> None:
    snapshot = load_snapshot()
    assert snapshot.as_of == "2026-11-21"
    assert snapshot.snapshot_version.startswith("2026-11-21")
    assert snapshot.coverage.regions == ["us-east-1"] == sorted(snapshot.regions)
    assert "refresh" in (snapshot.coverage.note or "")
    assert "not read from the Price List API" in snapshot.source


def test_every_catalog_instance_has_a_us_east_1_price_equal_to_its_seed(book: SnapshotPriceBook) -> None:
    for name, spec in load_catalog().instances.items():
        price = book.price(PriceKey("ec2_instance_hour", (name,)))
        assert price.usd == spec.on_demand_usd_per_hour_us_east_1, name
        assert (price.unit, price.source, price.as_of) == ("Hrs", "snapshot", "2026-11-21")
        assert raw()["regions"]["us-east-1"]["ec2_instance_hour"][name]["usagetype"] == f"BoxUsage:{name}"


def test_every_catalog_type_that_charges_an_ebs_optimized_fee_has_one(book: SnapshotPriceBook) -> None:
    # Only types where EBS optimisation is optional charge it; no primary source is at hand offline,
    # so it is the published $0.05 per 1,000 Mbps-hour x the type's EBS bandwidth, marked unverified.
    charged = {n: s for n, s in load_catalog().instances.items() if not s.ebs_optimized_by_default}
    assert "r3.4xlarge" in charged
    prices = load_snapshot().regions["us-east-1"]
    assert "ec2_ebs_optimized_hour" not in prices.unseeded
    for name, spec in charged.items():
        fee = book.price(PriceKey("ec2_ebs_optimized_hour", (name,)))
        assert fee.usd == pytest.approx(0.05 * (spec.ebs_max_bandwidth_mbit or 0) / 1000), name
        assert (fee.unit, fee.source) == ("Hrs", "snapshot")
        assert fee.unverified and "$0.05 per 1,000 Mbps" in fee.unverified
        assert "UNVERIFIED" in (fee.description or "")
        entry = raw()["regions"]["us-east-1"]["ec2_ebs_optimized_hour"][name]
        assert (entry["source"], entry["unverified"], entry["usagetype"]) == (
            "no-primary-source",
            True,
            f"EBSOptimized:{name}",
        )
    assert book.price(PriceKey("ec2_ebs_optimized_hour", ("r3.4xlarge",))).usd == pytest.approx(0.10)
    assert book.price(PriceKey("ec2_instance_hour", ("c5.large",))).unverified is None


def test_every_pricebook_question_has_an_answer_in_us_east_1(book: SnapshotPriceBook) -> None:
    answers: PriceBook = book  # the protocol, structurally
    prices = [
        answers.price(PriceKey("ec2_instance_hour", ("c5.large",))),
        *(
            answers.price(PriceKey("ebs_storage", (t,)))
            for t in ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
        ),
        answers.price(PriceKey("efs_storage", (False,))),
        answers.price(PriceKey("efs_storage", (True,))),
        answers.price(PriceKey("efs_provisioned_throughput")),
        answers.price(PriceKey("efs_elastic_transfer", ("read",))),
        answers.price(PriceKey("efs_elastic_transfer", ("write",))),
        answers.price(PriceKey("fsx_lustre_storage", ("SCRATCH_1", None))),
        answers.price(PriceKey("fsx_lustre_storage", ("SCRATCH_2", None))),
        *(answers.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_1", t))) for t in (50, 100, 200)),
        *(answers.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", t))) for t in (125, 250, 500, 1000)),
        answers.price(PriceKey("stepfunctions_transition")),
        answers.price(PriceKey("lambda_gb_second", ("x86_64",))),
        answers.price(PriceKey("lambda_gb_second", ("arm64",))),
        answers.price(PriceKey("lambda_request")),
    ]
    tiers = [
        *answers.price(TierKey("ebs_iops", ("io1",))),
        *answers.price(TierKey("ebs_iops", ("io2",))),
        *answers.price(TierKey("ebs_iops", ("gp3",))),
    ]
    tiers += answers.price(TierKey("ebs_throughput", ("gp3",)))
    prices += [t.price for t in tiers]
    assert all(p.source == "snapshot" and p.region == "us-east-1" and p.as_of == "2026-11-21" for p in prices)
    assert all(p.usd > 0 for p in prices)


@pytest.mark.parametrize(
    ("volume_type", "usd"),
    [
        ("gp3", 0.08),
        ("gp2", 0.10),
        ("io1", 0.125),
        ("io2", 0.125),
        ("st1", 0.045),
        ("sc1", 0.015),
        ("standard", 0.05),
    ],
)
def test_ebs_storage_matches_the_reference(book: SnapshotPriceBook, volume_type: str, usd: float) -> None:
    price = book.price(PriceKey("ebs_storage", (volume_type,)))
    assert (price.usd, price.unit) == (usd, "GB-Mo")


def test_iops_and_throughput_tiers(book: SnapshotPriceBook) -> None:
    assert [(t.begin, t.end, t.price.usd) for t in book.price(TierKey("ebs_iops", ("io2",)))] == [
        (0, 32000, 0.065),
        (32000, 64000, 0.0455),
        (64000, None, 0.03185),
    ]
    assert [(t.begin, t.end, t.price.usd) for t in book.price(TierKey("ebs_iops", ("io1",)))] == [
        (0, None, 0.065)
    ]
    assert [(t.begin, t.end, t.price.usd) for t in book.price(TierKey("ebs_iops", ("gp3",)))] == [
        (3000, None, 0.005)
    ]
    [throughput] = book.price(TierKey("ebs_throughput", ("gp3",)))
    assert (throughput.begin, throughput.end, throughput.price.usd, throughput.price.unit) == (
        125,
        None,
        0.04,
        "MiBps-Mo",
    )
    assert raw()["regions"]["us-east-1"]["ebs_throughput"]["gp3"][0]["api_unit"] == "GiBps-mo"
    assert book.price(TierKey("ebs_iops", ("gp2",))) == [] and book.price(TierKey("ebs_iops", ("st1",))) == []
    assert book.price(TierKey("ebs_throughput", ("io2",))) == []


def test_other_reference_values(book: SnapshotPriceBook) -> None:
    assert book.price(PriceKey("efs_storage", (False,))).usd == 0.30
    assert book.price(PriceKey("efs_storage", (True,))).usd == 0.16
    assert (
        book.price(PriceKey("efs_provisioned_throughput")).usd,
        book.price(PriceKey("efs_provisioned_throughput")).unit,
    ) == (
        6.00,
        "MiBps-Mo",
    )
    assert (
        book.price(PriceKey("efs_elastic_transfer", ("read",))).usd,
        book.price(PriceKey("efs_elastic_transfer", ("write",))).usd,
    ) == (0.03, 0.06)
    assert book.price(PriceKey("fsx_lustre_storage", ("SCRATCH_2", None))).usd == 0.14
    assert (
        book.price(PriceKey("fsx_lustre_storage", ("scratch_2", 200))).usd == 0.14
    )  # scratch has no throughput tiers
    assert [
        book.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", t))).usd for t in (125, 250, 500, 1000)
    ] == [
        0.145,
        0.21,
        0.34,
        0.60,
    ]
    transition = book.price(PriceKey("stepfunctions_transition"))
    assert (transition.usd, transition.unit) == (0.000025, "Transition")


def test_unverified_values_stay_visible(book: SnapshotPriceBook) -> None:
    unverified = load_snapshot().regions["us-east-1"].unverified()
    # What the reference itself marks unverified or approximate:
    for label in (
        "ec2_instance_hour.r5b.large",
        "fsx_lustre_storage.PERSISTENT_2/125",
        "fsx_lustre_storage.PERSISTENT_2/250",
        "fsx_lustre_storage.PERSISTENT_2/500",
        "fsx_lustre_storage.PERSISTENT_2/1000",
    ):
        assert label in unverified
    # What no source at hand gives:
    for label in ("fsx_lustre_storage.SCRATCH_1", "fsx_lustre_storage.PERSISTENT_1/50", "lambda_request"):
        assert label in unverified
    assert "ebs_storage.gp3" not in unverified
    assert "UNVERIFIED" in (book.price(PriceKey("ec2_instance_hour", ("r5b.large",))).description or "")
    assert "UNVERIFIED" in (
        book.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", 500))).description or ""
    )
    assert "UNVERIFIED" not in (book.price(PriceKey("ec2_instance_hour", ("c5.large",))).description or "")
    for rate in raw()["regions"]["us-east-1"]["fsx_lustre_storage"].values():
        assert not rate.get("unverified") or rate["note"]


# ------------------------------------------------------------------------------ what it lacks


def test_a_region_the_snapshot_lacks_names_product_region_and_refresh() -> None:
    book = SnapshotPriceBook("eu-west-1")
    with pytest.raises(PriceNotFound) as caught:
        book.price(PriceKey("ebs_storage", ("gp3",)))
    message = str(caught.value)
    assert "EBS gp3 storage" in message and "eu-west-1" in message
    assert "storagebench prices refresh --region eu-west-1" in message
    assert "us-east-1" in message  # what it does cover
    with pytest.raises(PriceNotFound, match="Lambda arm64 duration in eu-west-1"):
        book.price(PriceKey("lambda_gb_second", ("arm64",)))


def test_a_product_the_snapshot_lacks(book: SnapshotPriceBook) -> None:
    with pytest.raises(PriceNotFound) as caught:
        book.price(PriceKey("ec2_instance_hour", ("m9.huge",)))
    assert "EC2 m9.huge on-demand Linux" in str(caught.value)
    assert "storagebench prices refresh --region us-east-1" in str(caught.value)
    with pytest.raises(PriceNotFound, match="unknown EBS volume type"):
        book.price(TierKey("ebs_iops", ("gp9",)))
    with pytest.raises(PriceNotFound, match="125, 250, 500, 1000"):
        book.price(PriceKey("fsx_lustre_storage", ("PERSISTENT_2", None)))


def test_missing_entries_of_a_refresh_give_their_reason() -> None:
    document = raw()
    prices = document["regions"]["us-east-1"]
    del prices["fsx_lustre_storage"]["SCRATCH_1"]
    prices["missing"] = [
        {
            "product": "FSx for Lustre SCRATCH_1 storage",
            "key": "fsx_lustre_storage.SCRATCH_1",
            "reason": "none of the 12 product(s) the Price List returned matches",
        }
    ]
    book = SnapshotPriceBook("us-east-1", Snapshot.model_validate(document))
    with pytest.raises(PriceNotFound, match="none of the 12 product"):
        book.price(PriceKey("fsx_lustre_storage", ("SCRATCH_1", None)))


# ------------------------------------------------------------------------------ the model


def test_snapshot_model_refuses_inconsistent_documents() -> None:
    document = raw()
    document["coverage"]["regions"] = ["us-east-1", "eu-west-1"]
    with pytest.raises(ValueError, match="coverage"):
        Snapshot.model_validate(document)

    document = raw()
    document["regions"]["us-east-1"]["ebs_storage"]["gp3"]["unverified"] = True
    document["regions"]["us-east-1"]["ebs_storage"]["gp3"].pop("note", None)
    with pytest.raises(ValueError, match="needs a note"):
        Snapshot.model_validate(document)

    document = raw()
    document["regions"]["us-east-1"]["ebs_iops"]["io2"][1]["begin"] = 40000
    with pytest.raises(ValueError, match="not contiguous"):
        Snapshot.model_validate(document)


def test_merge_keeps_the_regions_not_refreshed() -> None:
    base = load_snapshot()
    document = raw()
    document["snapshot_version"] = "2026-12-01.api.000000"
    document["as_of"] = "2026-12-01"
    document["regions"] = {"eu-west-1": {**document["regions"]["us-east-1"], "as_of": "2026-12-01"}}
    document["coverage"]["regions"] = ["eu-west-1"]
    merged = merge_snapshots(base, Snapshot.model_validate(document))
    assert merged.coverage.regions == ["eu-west-1", "us-east-1"]
    assert merged.as_of == "2026-11-21"  # the oldest region's date
    assert SnapshotPriceBook("eu-west-1", merged).as_of == "2026-12-01"
    assert (
        SnapshotPriceBook("us-east-1", merged).price(PriceKey("ebs_storage", ("gp3",))).as_of == "2026-11-21"
    )


# ------------------------------------------------------------------------------ prices show


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    prices_cmd.register(app)
    return app


def test_prices_show_lists_date_coverage_and_prices(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["prices", "show"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "2026-11-21" in result.stdout and "us-east-1" in result.stdout
    assert "BoxUsage:c5.large" in result.stdout
    assert "unverified ec2_instance_hour.r5b.large" in result.stdout


def test_prices_show_json(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["prices", "show", "--region", "us-east-1", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["as_of"] == "2026-11-21"
    assert shown["coverage"]["regions"] == ["us-east-1"]
    assert shown["regions"]["us-east-1"]["ebs_storage"]["gp3"]["usd"] == 0.08
    assert "fsx_lustre_storage.PERSISTENT_2/250" in shown["unverified"]["us-east-1"]


def test_prices_show_an_uncovered_region_exits_2(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["prices", "show", "--region", "ap-south-1"])
    assert result.exit_code == 2
    assert "storagebench prices refresh --region ap-south-1" in result.stderr


def test_prices_show_a_snapshot_file(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(raw()), encoding="utf-8")
    assert CliRunner().invoke(app, ["prices", "show", "--file", str(path), "--json"]).exit_code == 0
    path.write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(app, ["prices", "show", "--file", str(path)])
    assert result.exit_code == 2 and "not a price snapshot" in result.stderr
