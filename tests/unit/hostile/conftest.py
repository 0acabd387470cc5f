"""The hostile tier's fixtures: the API on moto and its signed CLI server (from tests.support), and
the figures every run of the tier prints in pytest's summary (issue 11's closing note takes them)."""

from __future__ import annotations

import pytest
from tests.support.api_cli import hooks, served
from tests.support.api_stack import stack

__all__ = ["hooks", "served", "stack"]
FIGURES: dict[str, dict[str, int]] = {}  # channel -> figure -> count, filled by the tests


@pytest.fixture(scope="session")
def hostile_figures() -> dict[str, dict[str, int]]:
    return FIGURES


def summary_line() -> str | None:
    if not FIGURES:
        return None
    total = {key: sum(f.get(key, 0) for f in FIGURES.values()) for key in next(iter(FIGURES.values()))}
    channels = ", ".join(f"{name} {f['tried']}" for name, f in sorted(FIGURES.items()))
    return (
        f"hostile requests: {total['tried']} tried ({channels}), {total['refused_named']} of "
        f"{total['refused']} refusals named their field, {total['started']} started ({total['stored']} with "
        "injections stored as free text), "
        f"{total['tracebacks']} tracebacks, {total['5xx']} 5xx, "
        f"{total['unprivileged_shell_launches']} unprivileged shell launches"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if (line := summary_line()) is not None:
        terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under xdist the line goes to the controller, which prints it (tests/conftest.py); ``--dist loadfile``
    keeps this module on one worker, so one line carries both channels."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None and (line := summary_line()) is not None:
        output.setdefault("summary_lines", []).append(line)
