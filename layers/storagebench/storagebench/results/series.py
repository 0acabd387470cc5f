"""How a config's repetitions stopped, read from the agent's output directory.

* Adaptive series: the agent's own record (``manifest.json`` ``adaptive``, ``agent.adaptive``):
  repetitions spent, the values judged and why the series stopped.
* fio's steady-state detection: each job's ``steadystate`` section of a phase's ``fio.json`` (``ss``
  the criterion asked, ``attained`` 0 or 1, ``duration`` the window); the job's runtime says how
  soon fio stopped it.

A record that cannot be read becomes a problem line naming it, never an exception: the
measurements themselves are collected whatever happens here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from storagebench.core.series import SeriesOutcome, SteadyStateOutcome


def read_series(manifest: Mapping[str, Any]) -> tuple[list[SeriesOutcome], list[str]]:
    """The adaptive series the manifest records, and a problem line per unreadable entry."""
    entries = manifest.get("adaptive") or []
    if not isinstance(entries, list):
        return [], [f"adaptive: expected a list, got {type(entries).__name__}"]
    series: list[SeriesOutcome] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        try:
            series.append(SeriesOutcome.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"adaptive[{index}]: {where}: {first['msg']}")
    return series, problems


def _seconds(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def steady_states(
    root: Path, step_id: str, phase: Mapping[str, Any]
) -> tuple[list[SteadyStateOutcome], list[str]]:
    """fio's steady-state verdict for each job of one collected fio phase that asked for one."""
    path = root / str(phase.get("dir")) / "fio.json"
    name = str(phase.get("name"))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], []  # the records' parser reports an unreadable fio.json
    found: list[SteadyStateOutcome] = []
    problems: list[str] = []
    if not isinstance(document, Mapping):
        return [], []
    # the plan puts ss= in the [global] section (``planning.steps.with_steady_state``): fio echoes
    # it under "global options", by its long names (steadystate, steadystate_ramp_time)
    given = document.get("global options")
    shared: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for job in document.get("jobs") or []:
        section = job.get("steadystate") if isinstance(job, Mapping) else None
        if not isinstance(section, Mapping):
            continue
        own = job.get("job options") if isinstance(job.get("job options"), Mapping) else {}
        options = {**shared, **own}
        runtime_ms = _seconds(job.get("job_runtime"))
        try:
            found.append(
                SteadyStateOutcome(
                    step=step_id,
                    phase=name,
                    job=str(job.get("jobname")),
                    criterion=str(options.get("steadystate") or section["ss"]),
                    attained=bool(int(section["attained"])),
                    duration_s=float(section["duration"]),
                    ramp_s=_seconds(options.get("steadystate_ramp_time")),
                    runtime_s=runtime_ms / 1000 if runtime_ms is not None else None,
                )
            )
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            problems.append(
                f"step {step_id} phase {name}: fio's steadystate section of {job.get('jobname')!r}: {exc}"
            )
    return found, problems
