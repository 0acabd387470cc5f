"""The genomics report shows each config's storage-only cost and delta beside its whole-config
delta (field study 3 compared the file systems alone: EFS 1 TiB against FSx for Lustre 1.2 TiB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.report.build import build_report
from storagebench.report.html import render_html
from storagebench.report.markdown import render_markdown
from storagebench.report.model import Report
from storagebench.request import load_request

GENOMICS = Path(__file__).resolve().parents[3] / "events" / "genomics-file-systems.json"


def _report() -> Report:
    request = load_request(GENOMICS)
    run = {"run_id": "r-genomics", "suite": request.name, "status": "SUCCEEDED"}
    stored = {"run": run, "configs": [], "results": []}
    return build_report(stored, request=request)  # the comparison priced here from the bundled snapshot


def test_rows_carry_storage_only_and_whole_config_deltas() -> None:
    rows = {row.config_id: row for row in _report().configs}
    fsx = rows["fsx-lustre"]
    assert fsx.storage_only_usd == pytest.approx(168.00)
    assert fsx.delta_storage_pct is not None and round(fsx.delta_storage_pct, 1) == -45.3
    assert fsx.delta_monthly_pct is not None and round(fsx.delta_monthly_pct, 1) == -25.0
    assert rows["efs-standard"].storage_only_usd == pytest.approx(307.20)


def test_markdown_and_html_show_both() -> None:
    report = _report()
    markdown = render_markdown(report)
    fsx_line = next(line for line in markdown.splitlines() if "fsx\\-lustre" in line or "fsx-lustre" in line)
    assert "-25 %" in fsx_line and "storage only $168.00 (-45 %)" in fsx_line
    html = render_html(report)
    assert "storage only $168.00, -45 % vs baseline" in html
    assert "storage only $307.20<" in html  # the baseline: its storage, no delta
