"""``storagebench cost``: a request priced without launching anything (table and JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from reference_book import ReferenceBook
from typer.testing import CliRunner

from storagebench.cli import cost_cmd

EVENTS = Path(__file__).resolve().parents[3] / "events"
STUDY1 = str(EVENTS / "file-gateway-io1-vs-gp2.json")


def make_app() -> typer.Typer:
    """A fresh app with only the cost command (cli/main.py registers it in the product)."""
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """test root"""

    cost_cmd.register(app)
    return app


@pytest.fixture
def books(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Price with the reference book; records the regions asked for."""
    regions: list[str] = []

    def factory(region: str) -> Any:
        regions.append(region)
        return ReferenceBook(region)

    monkeypatch.setattr(cost_cmd, "price_book", factory)
    return regions


def run(*args: str) -> Any:
    return CliRunner().invoke(make_app(), ["cost", *args])


def test_json_study1_with_hours(books: list[str]) -> None:
    result = run("--suite", STUDY1, "--json", "--hours", "24")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["baseline"], document["region"], document["currency"]) == (
        "alpha-io1",
        "us-east-1",
        "USD",
    )
    assert books == ["us-east-1"]
    assert document["price_source"] == "snapshot" and document["price_date"] == "2026-11-21"
    configs = {c["id"]: c for c in document["configs"]}
    assert [c["id"] for c in document["configs"]] == ["alpha-io1", "beta-gp2"]
    alpha, beta = configs["alpha-io1"], configs["beta-gp2"]
    # Each config: the c5.large client ($62.05 + 8 GiB gp3 root $0.64) and its gateway.
    client = 0.085 * 730 + 8 * 0.08
    assert alpha["monthly_usd"] == pytest.approx(client + 927.90)
    assert beta["monthly_usd"] == pytest.approx(client + 555.60)
    assert alpha["delta_monthly_pct"] == 0
    assert beta["delta_monthly_pct"] == pytest.approx((555.60 - 927.90) / (client + 927.90) * 100, abs=1e-4)
    # The gateways alone, as the study compared them: "nearly 40 %".
    assert (alpha["gateway_monthly_usd"], beta["gateway_monthly_usd"]) == pytest.approx((927.90, 555.60))
    assert alpha["delta_gateway_monthly_pct"] == 0
    assert beta["delta_gateway_monthly_pct"] == pytest.approx(-40.12, abs=0.01)
    assert alpha["hours_usd"] == pytest.approx((client + 927.90) * 24 / 730)
    assert beta["hours_usd"] == pytest.approx((client + 555.60) * 24 / 730)
    assert (alpha["price_source"], alpha["price_date"], alpha["complete"]) == ("snapshot", "2026-11-21", True)
    names = [(c["name"], c["target_id"]) for c in alpha["components"]]
    assert names == [
        ("instance", None),
        ("ebs-storage", "root"),
        ("gateway-instance", "share"),
        ("ebs-storage", "share/gateway-root"),
        ("ebs-iops", "share/gateway-root"),
        ("ebs-storage", "share/gateway-cache"),
        ("ebs-iops", "share/gateway-cache"),
    ]
    assert sum(c["monthly_usd"] for c in alpha["components"]) == pytest.approx(alpha["monthly_usd"])
    assert {"source", "as_of", "unit", "unit_usd", "quantity", "detail"} <= set(alpha["components"][0])


def test_json_without_hours_has_no_hours_usd(books: list[str]) -> None:
    result = run("--suite", STUDY1, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["hours"] is None
    assert all("hours_usd" not in c for c in document["configs"])


def test_table(books: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = run("--suite", STUDY1, "--hours", "24")
    assert result.exit_code == 0, result.output
    texts = ("alpha-io1", "beta-gp2", "$990.59", "$618.29", "-37.6 %", "baseline", "$32.57", "24 h")
    for text in (*texts, "gateway monthly", "$927.90", "$555.60", "-40.1 %"):
        assert text in result.stdout
    assert "io1 IOPS: 4,000 of 4,000 x $0.065/IOPS-Mo" in result.stdout


def test_region_option_prices_in_that_region(books: list[str]) -> None:
    result = run("--suite", STUDY1, "--json", "--region", "eu-west-1")
    assert result.exit_code == 0, result.output
    assert books == ["eu-west-1"]
    assert json.loads(result.stdout)["region"] == "eu-west-1"


def test_unpriced_targets_are_listed(books: list[str], tmp_path: Path) -> None:
    document = json.loads((EVENTS / "genomics-file-systems.json").read_text(encoding="utf-8"))
    moosefs = next(c for c in document["configs"] if c["id"] == "moosefs-ebs")
    assert moosefs["targets"][1]["backed_by"] == ["chunks"]  # the MooseFS the hook builds on its chunks
    result = run("--suite", str(EVENTS / "genomics-file-systems.json"), "--json")
    assert result.exit_code == 0, result.output
    configs = {c["id"]: c for c in json.loads(result.stdout)["configs"]}
    assert configs["moosefs-ebs"]["unpriced"] == []
    assert (
        "shared: local path /mnt/moosefs is backed by chunks, priced as such"
        in configs["moosefs-ebs"]["notes"]
    )
    assert configs["moosefs-ebs"]["monthly_usd"] == pytest.approx(248.20 + 0.64 + 122.90)
    assert configs["fsx-lustre"]["monthly_usd"] == pytest.approx(248.20 + 0.64 + 168.00)
    del moosefs["targets"][1]["backed_by"]  # whatever backs the path is then billed elsewhere
    suite = tmp_path / "unbacked.json"
    suite.write_text(json.dumps(document), encoding="utf-8")
    unbacked = {c["id"]: c for c in json.loads(run("--suite", str(suite), "--json").stdout)["configs"]}
    assert "/mnt/moosefs not priced" in unbacked["moosefs-ebs"]["unpriced"][0]


def test_missing_prices_exit_1_and_say_what(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        cost_cmd, "price_book", lambda region: ReferenceBook(region, missing=frozenset({"ebs"}))
    )
    result = run("--suite", STUDY1, "--json")
    assert result.exit_code == cost_cmd.EXIT_MISSING_PRICES == 1
    document = json.loads(result.stdout)
    assert document["complete"] is False
    assert document["configs"][0]["missing_prices"]


def test_invalid_input_exits_2(books: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "configs": [], "workloads": []}), encoding="utf-8")
    assert run("--suite", str(bad)).exit_code == 2
    assert run("--suite", str(tmp_path / "missing.json")).exit_code == 2
    assert run("--suite", STUDY1, "--region", "mars").exit_code == 2
    assert run("--suite", STUDY1, "--hours", "-1").exit_code == 2
    assert books == []


def test_default_book_is_the_bundled_snapshot() -> None:
    pytest.importorskip("storagebench.prices.snapshot")
    result = run("--suite", STUDY1, "--json")
    assert result.exit_code == 0, result.output
    configs = {c["id"]: c for c in json.loads(result.stdout)["configs"]}
    assert configs["beta-gp2"]["gateway_monthly_usd"] == pytest.approx(555.60)
    assert configs["beta-gp2"]["monthly_usd"] == pytest.approx(555.60 + 62.05 + 0.64)
    assert configs["beta-gp2"]["price_source"] == "snapshot"


def test_unverified_prices_are_flagged_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    # the bundled snapshot: the report card's EBS-optimized fee has no primary source
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line, whatever the terminal
    result = run("--suite", str(EVENTS / "report-card.json"))
    assert result.exit_code == 0, result.output
    fee_lines = [line for line in result.stdout.splitlines() if "EBS-optimized fee: 730 h" in line]
    assert len(fee_lines) == 3 and all("$73.00 *" in line for line in fee_lines)
    assert "* unverified price (why: below)" in result.stdout
    # the console may wrap the note at any width: read it as one text
    text = " ".join(result.stdout.split())
    assert text.count("unverified: ") == 1
    why = text[text.index("unverified: ") :]
    assert "magnetic, gp2, io1" in why and "$0.05 per 1,000 Mbps" in why
    assert "(incomplete)" not in result.stdout
    components = json.loads(run("--suite", str(EVENTS / "report-card.json"), "--json").stdout)
    fee = next(c for c in components["configs"][0]["components"] if c["name"] == "ebs-optimized")
    assert fee["unverified"] and fee["monthly_usd"] == pytest.approx(73.0)
    root = next(c for c in components["configs"][0]["components"] if c["target_id"] == "root")
    assert root["unverified"] is None


def test_expected_prices_each_config_for_its_expected_duration(books: list[str], tmp_path: Path) -> None:
    from storagebench.planning.duration import estimate_duration
    from storagebench.request import load_request

    # Study 1's disks benchmarked directly as EBS targets: every step has a catalog rate.
    disks = {
        "name": "gateway-disks",
        "configs": [
            {
                "id": cid,
                "instance_type": "c5.4xlarge",
                "root_volume": {"type": kind, "size_gib": 80, **({"iops": 4000} if kind == "io1" else {})},
                "targets": [{"id": "cache", "kind": "ebs", "type": kind, "size_gib": 512, **extra}],
            }
            for cid, kind, extra in (("alpha-io1", "io1", {"iops": 1500}), ("beta-gp2", "gp2", {}))
        ],
        "workloads": [{"profile": "dd-seq-write-1g-dsync"}, {"profile": "fio-randrw-4k-25read"}],
    }
    path = tmp_path / "disks.json"
    path.write_text(json.dumps(disks), encoding="utf-8")
    suite = str(path)
    result = run("--suite", suite, "--json", "--expected", "--hours", "24")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    expected = document["expected"]
    request = load_request(suite)
    concurrency = request.max_concurrency or len(request.configs)
    duration = estimate_duration(request, concurrency)
    assert expected["wall_hours"] == pytest.approx(duration.wall_hours, abs=1e-6)
    assert expected["concurrency"] == concurrency and expected["complete"] is True
    for entry in document["configs"]:
        run_ = expected["configs"][entry["id"]]
        assert run_["usd"] == pytest.approx(entry["monthly_usd"] * run_["hours"] / 730, rel=1e-6)
        assert 0 < run_["usd"] < entry["hours_usd"]
    table = run("--suite", suite, "--expected")
    assert table.exit_code == 0, table.output
    assert "expected h" in table.stdout
    assert f"expected run: {duration.wall_hours:.1f} h wall time" in table.stdout


def test_expected_of_the_file_gateway_study_is_a_floor(books: list[str]) -> None:
    """The NFS share's rate is the gateway's (cache, upload): not in the catalog, so dd and fio steps
    are not estimated and the figures say they are lower bounds."""
    document = json.loads(run("--suite", STUDY1, "--json", "--expected").stdout)
    expected = document["expected"]
    assert expected["complete"] is False
    assert any("on share (file_gateway): not estimated" in note for note in expected["notes"])
    assert all(run_["hours"] > 0 for run_ in expected["configs"].values())
