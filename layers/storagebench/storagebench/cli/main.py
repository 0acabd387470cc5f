"""The ``storagebench`` command line.

Every command that reads a request goes through ``storagebench.request`` (the same model the
API and the schedules use), so the CLI can never accept what the service would refuse.
Exit status: 0 success, 1 a run finished with failures, 2 invalid input (every problem named).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from storagebench.cli import listing, render
from storagebench.cli.console import EXIT_INVALID, err, out, print_json
from storagebench.cli.listing import FORMAT_HELP, output_format

app = typer.Typer(
    name="storagebench",
    help="Benchmark cloud storage, price it, compare it.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
)


def package_version() -> str:
    """The installed distribution's version; the package's own when it runs from a source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("storagebench")
    except PackageNotFoundError:
        from storagebench import __version__

        return __version__


def _print_version(asked: bool) -> None:
    if asked:
        out.print(Text(f"storagebench {package_version()}"), highlight=False)
        raise typer.Exit()


@app.callback()
def _command_line(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="print the version and exit"),
    ] = False,
) -> None:
    """Benchmark cloud storage, price it, compare it."""


@app.command()
def validate(
    suite: Annotated[Path, typer.Option("--suite", "-s", help="request file (JSON)")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable result (--format json)")] = False,
    fmt: Annotated[str | None, typer.Option("--format", help="table or json")] = None,
) -> None:
    """Check a request: exit 0 when valid, 2 with every problem, its field path and what is allowed."""
    from storagebench.cli.request_summary import summarize_request
    from storagebench.request import RequestError, load_request

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"

    try:
        request = load_request(suite)
    except RequestError as exc:
        if as_json:
            print_json({"valid": False, "file": str(suite), "errors": [e.as_dict() for e in exc.errors]})
        else:
            err.print(Text(f"{suite}: {len(exc.errors)} problem(s)", style="bold red"), highlight=False)
            for problem in exc.errors:
                err.print(Text(f"  {problem}"), highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INVALID) from None
    summary = summarize_request(request)
    if as_json:
        print_json({"valid": True, "file": str(suite), **summary})
    else:
        render.request_summary(out, str(suite), summary)


@app.command()
def schema() -> None:
    """Print the request's JSON Schema (the contract of the API, schedules and CLI)."""
    from storagebench.request import BenchmarkRequest

    print_json(BenchmarkRequest.model_json_schema())


@app.command()
def workloads(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable library (--format json)")] = False,
    fmt: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP)] = None,
    columns: Annotated[
        str | None, typer.Option("--columns", help="the table's columns, comma-separated")
    ] = None,
) -> None:
    """List the workload profiles and suites."""
    from storagebench.workloads.describe import describe_library

    chosen = output_format(fmt, as_json)
    library = describe_library()
    listing.show(out, render.workload_listing(library), chosen, library, columns)
    if chosen == "table":
        render.suite_lines(out, library)


from storagebench.cli import (  # noqa: E402
    agent_cmd,
    compare_cmd,
    cost_cmd,
    prices_cmd,
    recommend_cmd,
    report_cmd,
    results_cmd,
    run_cmd,
    stack_runs,
)

for command in (
    agent_cmd,
    run_cmd,
    stack_runs,
    results_cmd,
    recommend_cmd,
    compare_cmd,
    report_cmd,
    cost_cmd,
    prices_cmd,
):
    command.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # python -m storagebench.cli.main, as the installed `storagebench` runs it
    main()
