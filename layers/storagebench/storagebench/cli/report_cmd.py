"""``storagebench report RUN_ID``: a run's report in HTML, Markdown or CSV, from what is stored.

Rebuilt from the store and the artifacts each time (so it reflects the latest code and the
regression verdicts as recorded); Finalize already wrote one next to the run's artifacts.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from storagebench.cli.console import fail, out, print_json
from storagebench.cli.results_cmd import ROOT_OPTION, local_store
from storagebench.cli.stack_client import ApiUrlOption, StackRegionOption

EXTENSIONS: dict[str, str] = {"html": "html", "markdown": "md", "csv": "csv"}


def report(
    run_id: Annotated[str, typer.Argument(help="the run (as `storagebench results` lists it)")],
    formats: Annotated[
        list[str] | None,
        typer.Option("--format", "-f", help="html, markdown or csv; repeat for several (default: all)"),
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="directory to write to (default: <root>/reports/<run>)")
    ] = None,
    open_it: Annotated[bool, typer.Option("--open", help="open the HTML report in a browser")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print where each file went")] = False,
    root: Annotated[Path, ROOT_OPTION] = Path(".storagebench"),
    stack: Annotated[
        str | None,
        typer.Option("--stack", help="download the report Finalize wrote on this deployed stack (SigV4)"),
    ] = None,
    api_url: ApiUrlOption = None,
    region: StackRegionOption = None,
    link_only: Annotated[
        bool, typer.Option("--link", help="with --stack: print the presigned links, download nothing")
    ] = False,
) -> None:
    """Write a run's report: comparison table with grades and verdicts, charts with confidence
    intervals, latency percentiles and histograms, IOPS series with burst knees, cost against
    performance with the Pareto frontier, and warnings. Locally it is rebuilt from the results; with
    --stack the one the run's Finalize step wrote is downloaded (GET /runs/{id}/report)."""
    chosen = formats or list(EXTENSIONS)
    unknown = [f for f in chosen if f not in EXTENSIONS]
    if unknown:
        raise fail(f"--format {unknown[0]!r} is not one of {', '.join(EXTENSIONS)}")
    if link_only and stack is None and api_url is None:
        raise fail("--link prints the presigned links of a stack's report: give --stack NAME")
    if stack is not None or api_url is not None:
        from storagebench.cli.stack_report import download_report

        directory = out_dir or Path("reports") / run_id
        written = download_report(
            stack, api_url, region, run_id, list(dict.fromkeys(chosen)), directory, link_only
        )
    else:
        written = _rebuild_locally(run_id, chosen, out_dir, root)
    if as_json:
        print_json({"run_id": run_id, ("links" if link_only else "files"): written})
    else:
        for name, where in written.items():
            out.print(Text(f"{name}: {where}"), highlight=False, soft_wrap=True)
    if open_it and "html" in written:
        where = written["html"]
        webbrowser.open(where if link_only else Path(where).resolve().as_uri())


def _rebuild_locally(run_id: str, chosen: list[str], out_dir: Path | None, root: Path) -> dict[str, str]:
    from storagebench.report import build_report, render_csv, render_html, render_markdown
    from storagebench.workflow.run_outputs import report_inputs
    from storagebench_local.adapters.artifacts import LocalArtifacts

    with local_store(root) as store:
        try:
            stored = store.get_run(run_id, histograms=True)  # the latency charts
        except KeyError:
            raise fail(f"no run {run_id!r} in the local results under {root}") from None
        built = build_report(**report_inputs(stored, LocalArtifacts(root / "artifacts"), store))
    renderers = {"html": render_html, "markdown": render_markdown, "csv": render_csv}
    directory = out_dir or root / "reports" / run_id
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for name in dict.fromkeys(chosen):
        target = directory / f"report.{EXTENSIONS[name]}"
        target.write_text(renderers[name](built), encoding="utf-8")
        written[name] = str(target)
    return written


def register(app: typer.Typer) -> None:
    app.command()(report)
