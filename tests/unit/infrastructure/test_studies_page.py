"""docs/studies.md quotes figures the code computes from the shipped events: each is recomputed here
(through the CLI's JSON, as a user would get it), so a change to a price, the catalog or an event
that moves a figure fails until the page says the new one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "studies.md").read_text()


def _json(*args: str) -> Any:
    result = CliRunner().invoke(app, [*args, "--json"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _cost(event: str) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in _json("cost", "--suite", str(ROOT / "events" / event))["configs"]}


def _preview(event: str) -> dict[str, Any]:
    preview: dict[str, Any] = _json("run", "--local", "--dry-run", "--suite", str(ROOT / "events" / event))[
        "preview"
    ]
    return preview


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _on_page(*figures: str) -> None:
    missing = [f for f in figures if f not in PAGE]
    assert missing == [], f"docs/studies.md no longer quotes {missing}: the code now computes them"


def test_file_gateway_row() -> None:
    costs = _cost("file-gateway-io1-vs-gp2.json")
    alpha, beta = costs["alpha-io1"], costs["beta-gp2"]
    _on_page(
        f"{_usd(alpha['gateway_monthly_usd'])} vs {_usd(beta['gateway_monthly_usd'])}",
        f"**{beta['delta_gateway_monthly_pct']:.1f} %**",
        f"client -{abs(beta['delta_monthly_pct']):.1f} %",
        f"storage alone -{abs(beta['delta_storage_monthly_pct']):.1f} %",
    )


def test_virtual_san_row() -> None:
    preview = _preview("virtual-san.json")
    ceilings = {c["config_id"]: c["ceiling"] for c in preview["network"]}
    assert "11,921 MiB/s (network-bound)" in ceilings["r5b-io2-controllers"]
    assert "storage 14,901 MiB/s" in ceilings["r5b-io2-controllers"]
    assert "storage 95,367 MiB/s" in ceilings["i3en-controllers"]
    needed = preview["vcpu_quotas"]["lines"][0]["needed_vcpus"]
    _on_page("**11,921 MiB/s**", "14,901 MiB/s", "95,367 MiB/s", f"**{needed:,} vCPUs at once**")
    costs = _cost("virtual-san.json")
    _on_page(
        _usd(costs["r5b-io2-controllers"]["monthly_usd"]),
        _usd(costs["i3en-controllers"]["monthly_usd"]),
        _usd(costs["io2-direct"]["monthly_usd"]),
    )


def test_genomics_row() -> None:
    costs = _cost("genomics-file-systems.json")
    efs, fsx = costs["efs-standard"]["storage_monthly_usd"], costs["fsx-lustre"]["storage_monthly_usd"]
    study = (1.0 * 0.30) / (1.2 * 0.14)
    assert efs / fsx == pytest.approx(study, rel=0.05)
    _on_page(
        f"EFS {_usd(efs)}, FSx {_usd(fsx)}",
        f"**{efs / fsx:.2f}x**",
        f"({abs(efs / fsx / study - 1) * 100:.1f} % from the study's {study:.2f})",
        f"-{abs(costs['fsx-lustre']['delta_monthly_pct']):.1f} %",
    )


def test_report_card_row() -> None:
    costs = _cost("report-card.json")
    knee = _preview("report-card.json")["knees"][0]
    _on_page(
        f"**{_usd(costs['io1']['monthly_usd'])}**",
        f"Magnetic -{abs(costs['magnetic']['delta_monthly_pct']):.1f} %",
        f"gp2 -{abs(costs['gp2']['delta_monthly_pct']):.1f} %",
        f"**{knee['full_load_s']:,.0f} s**",
        f"about {round(knee['left_pct'] / 5) * 5:.0f} % of gp2's bucket",
    )
    assert knee["observed"] is False and "is not observed" in PAGE
