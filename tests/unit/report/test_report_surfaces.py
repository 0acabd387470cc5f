"""A config matrix in the report: its points laid out along the matrix's axes (one grid per value of
the third), with each point's headline mean and monthly cost and the skipped points' reasons."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support import report_runs as fx

from storagebench.report import build_report, render_html
from storagebench.report.surface_models import SurfaceCell
from storagebench.request import parse_request
from storagebench.results.records import ResultRecord

EVENTS = Path(__file__).resolve().parents[3] / "events"
RUN_ID = "gp3-matrix-20261125T030000Z-0a1b2c"


def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / "gp3-matrix.json").read_text(encoding="utf-8"))
    return loaded


def iops_of(config_id: str) -> float:
    """A made-up but recognisable rate per point: its provisioned IOPS plus its size."""
    config = parse_request(document()).config(config_id)
    target = config.targets[0]
    return float(target.iops or 0) + float(target.size_gib)  # type: ignore[union-attr]


def records() -> list[ResultRecord]:
    (base,) = [r for r in fx._captured("std-randread-4k") if r.direction == "read"][:1]
    out = []
    for config in parse_request(document()).configs:
        for repetition in (1, 2):
            out.append(
                base.model_copy(
                    update={
                        "config_id": config.id,
                        "repetition": repetition,
                        "iops": iops_of(config.id) + repetition - 1.5,
                        "started_at": fx.STARTED,
                    }
                )
            )
    return out


def stored() -> dict[str, Any]:
    recs = records()
    ids = [c.id for c in parse_request(document()).configs]
    run = {
        "type": "run",
        "run_id": RUN_ID,
        "suite": "gp3-matrix",
        "status": "SUCCEEDED",
        "configs": ids,
        "started_at": fx.STARTED,
        "ended_at": fx.ENDED,
        "records": len(recs),
        "request": document(),  # the document as started: the report expands it again
    }
    results = [
        {
            **fx.result_item(r),
            "run_id": RUN_ID,
            "labels": {"storage_option": r.config_id, "suite": "gp3-matrix"},
        }
        for r in recs
    ]
    return {"run": run, "configs": [], "results": results}


def test_a_matrix_reads_as_grids_along_its_axes() -> None:
    report = build_report(stored())
    randread = [s for s in report.surfaces if s.workload == "std-randread-4k"]
    (surface,) = randread
    assert surface.base_id == "gp3" and surface.metric == "iops" and surface.skipped == 7
    assert surface.axes == ["size_gib", "iops", "throughput_mibps"]
    assert [t.fixed for t in surface.tables] == [{"throughput_mibps": "250"}, {"throughput_mibps": "1000"}]
    first = surface.tables[0]
    assert (first.rows_axis, first.rows, first.columns_axis, first.columns) == (
        "size_gib",
        ["20", "100", "500"],
        "iops",
        ["3000", "12000", "40000"],
    )
    cell = first.cells[1][2]  # 100 GiB, 40,000 IOPS, 250 MiB/s
    assert cell.config_id == "gp3-100g-40000iops-250mibps"
    assert cell.value == 40100.0 and cell.n == 2
    row = next(r for r in report.configs if r.config_id == cell.config_id)
    assert cell.monthly_usd == row.monthly_usd and cell.monthly_usd is not None and cell.monthly_usd > 0
    skipped = first.cells[0][1]  # 20 GiB at 12,000 IOPS: above 500 IOPS per GiB
    assert skipped.config_id is None and skipped.skipped is not None
    assert skipped.skipped.startswith("iops: gp3 allows 3,000..10,000 IOPS for 20 GiB")
    second = surface.tables[1]
    assert all(isinstance(c, SurfaceCell) and c.skipped for c in (second.cells[0][0], second.cells[1][0]))
    assert second.cells[2][2].config_id == "gp3-500g-40000iops-1000mibps"


def test_the_html_report_has_a_section_of_surfaces() -> None:
    html = render_html(build_report(stored()))
    assert '<section id="surfaces"><h2>Matrix surfaces</h2>' in html
    assert '<a href="#surfaces">Matrix surfaces</a>' in html
    assert "<caption>throughput_mibps 1000</caption>" in html
    assert "size_gib \\ iops" in html
    assert "40,100" in html and "gp3-100g-40000iops-250mibps" in html
    assert 'skipped<div class="sub">iops: gp3 allows 3,000..10,000 IOPS for 20 GiB' in html


def test_a_run_without_a_matrix_has_no_surfaces() -> None:
    report = build_report(fx.stored(), comparison=fx.comparison())
    assert report.surfaces == []
    assert 'id="surfaces"' not in render_html(report)


def test_one_varied_field_gives_one_column() -> None:
    single = document()
    single["configs"][0]["matrix"] = {"size_gib": [100, 500], "iops": [12000], "throughput_mibps": [250]}
    data = stored()
    data["run"]["request"] = single
    ids = [c.id for c in parse_request(single).configs]
    assert ids == ["gp3-100g", "gp3-500g"]
    base = data["results"][0]
    data["results"] = [
        {**base, "config_id": cid, "record": {**base["record"], "config_id": cid, "iops": 1000.0 * (i + 1)}}
        for i, cid in enumerate(ids)
    ]
    data["run"]["configs"] = ids
    (surface,) = [s for s in build_report(data).surfaces if s.workload == "std-randread-4k"]
    (table,) = surface.tables
    assert table.columns_axis is None and table.columns == [] and table.rows == ["100", "500"]
    assert [row[0].value for row in table.cells] == [1000.0, 2000.0]


def test_the_markdown_report_has_the_same_grids() -> None:
    from storagebench.report import render_markdown

    text = render_markdown(build_report(stored()))
    assert "## Matrix surfaces" in text
    assert "throughput\\_mibps 250:" in text
    assert "| size\\_gib \\\\ iops | 3000 | 12000 | 40000 |" in text
    assert re.search(r"\| 20 \| 3,020 · \$[\d,]+\.\d\d/mo \| skipped \| skipped \|", text)
    assert "| 100 | skipped | 12,100 · $" in text


def test_text_from_the_request_is_escaped() -> None:
    from storagebench.report.html_surfaces import surfaces_html
    from storagebench.report.surface_models import Surface, SurfaceTable

    hostile = "<script>alert(1)</script>"
    table = SurfaceTable(
        fixed={"image": hostile},
        rows_axis="size_gib",
        rows=[hostile],
        columns_axis="iops",
        columns=[hostile],
        cells=[[SurfaceCell(config_id=None, skipped=hostile)]],
    )
    surface = Surface(
        base_id="gp3",
        workload="w",
        workload_name=hostile,
        metric="iops",
        axes=["size_gib", "iops", "image"],
        tables=[table],
        skipped=1,
    )
    html = surfaces_html([surface])
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
