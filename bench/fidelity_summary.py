"""The fidelity bench's verdicts: per emulator, which goals were met, the worst errors, the table.

Pure functions over the rows ``bench/fidelity.py`` builds (one per volume, profile and
emulator, see ``profile_row`` there), so the summary can be checked without running anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fidelity_cpu import CPU_DEFINITION
from fidelity_latency import LATENCY_GOALS


def row_id(row: Mapping[str, Any]) -> str:
    return f"{row['volume']} {row['profile']} {column_of(row)}"


def column_of(row: Mapping[str, Any]) -> str:
    """The result column a row belongs to: its emulator, "busy" when measured beside other work."""
    return str(row.get("column", row["emulator"]))


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per emulator: rows meeting every goal, the worst limit ratio and the worst latency errors.

    A row meets its goals when its limit ratio (where the profile is held to a limit) is within
    3 % and every direction's p50/p95/p99 is within its goal of the model's prediction.
    """
    summary: dict[str, Any] = {}
    for emulator in sorted({column_of(row) for row in rows}):
        mine = [row for row in rows if column_of(row) == emulator]
        limited = [row for row in mine if row.get("limit")]
        worst_limit = max(limited, key=lambda r: abs(r["limit"]["ratio"] - 1), default=None)
        worst_latency: dict[str, Any] = {}
        for percentile in LATENCY_GOALS:
            worst: tuple[float, str, float] | None = None
            for row in mine:
                for direction, graded in row["latency"]["directions"].items():
                    error = graded[percentile]["error_pct"]
                    if worst is None or abs(error) > abs(worst[0]):
                        worst = (error, f"{row_id(row)} {direction}", graded[percentile]["measured_ms"])
            if worst is not None:
                worst_latency[percentile] = {"error_pct": worst[0], "row": worst[1], "measured_ms": worst[2]}
        summary[emulator] = {
            "rows": len(mine),
            "rows_meeting_goals": sum(1 for row in mine if row["meets_goals"]),
            "limits_within_3pct": all(row["limit"]["within_3pct"] for row in limited),
            "latency_within_goals": all(row["latency"]["meets_goals"] for row in mine),
            "worst_limit": (
                {"row": row_id(worst_limit), "ratio": worst_limit["limit"]["ratio"]} if worst_limit else None
            ),
            "worst_latency_error": worst_latency,
            "missed": [row_id(row) for row in mine if not row["meets_goals"]],
            "missed_with_twin_stalls": [
                f"{row_id(row)}: {row['twin_stalls']['count']} stalls, {row['twin_stalls']['late_ms']} ms"
                for row in mine
                if not row["meets_goals"] and (row.get("twin_stalls") or {}).get("count")
            ],
            "max_cpu_pressure_some_pct": max(
                (
                    row["cpu_pressure_some_pct"]
                    for row in mine
                    if row.get("cpu_pressure_some_pct") is not None
                ),
                default=None,
            ),
            "max_host_steal_pct": max(
                (row["host_steal_pct"] for row in mine if row.get("host_steal_pct") is not None),
                default=None,
            ),
        }
    return summary


def progress(rows: list[dict[str, Any]], volume: str, emulator: str) -> str:
    """One line per run: each profile's limit ratio and its worst latency error."""
    parts = []
    for row in rows:
        if row["volume"] != volume or column_of(row) != emulator:
            continue
        errors = [g[p]["error_pct"] for g in row["latency"]["directions"].values() for p in LATENCY_GOALS]
        ratio = f"{row['limit']['ratio']:.3f}" if row["limit"] else "-"
        parts.append(f"{row['profile']} {ratio} latency {max(errors, key=abs):+.1f}%")
    return ", ".join(parts)


def best_prewarm(prewarm: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The faster method per (volume, emulator)."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for row in prewarm:
        key = (row["volume"], column_of(row))
        if row["ratio"] > best.get(key, {}).get("ratio", 0):
            best[key] = row
    return best


def emulator_goals(
    emulator: str,
    summary: dict[str, Any],
    best: dict[tuple[str, str], dict[str, Any]],
    knees: list[dict[str, Any]],
) -> dict[str, Any]:
    """Each goal met or not for one emulator (None: the part did not run)."""
    mine = summary.get(emulator)
    knee = next((k for k in knees if k["emulator"] == emulator), None)
    prewarms = [row for (_, e), row in best.items() if e == emulator]
    return {
        "profiles_within_3pct": mine["limits_within_3pct"] if mine else None,
        "latency_within_goals": mine["latency_within_goals"] if mine else None,
        "rows_meeting_goals": f"{mine['rows_meeting_goals']}/{mine['rows']}" if mine else None,
        "prewarm_best_at_least_95pct": all(r["ratio"] >= 0.95 for r in prewarms) if prewarms else None,
        "knee_within_10pct": (knee["error_pct"] is not None and knee["error_pct"] <= 10) if knee else None,
    }


def twin_cpu_summary(volumes: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The twin's CPU per run (its own account) and the costliest and busiest steps (sampled)."""
    per_run = [
        {"volume": v["volume"], "column": label, **figures}
        for v in volumes
        for label, run in v["runs"].items()
        for figures in run.get("twin_cpu", [])
    ]
    per_step = [(row_id(r), r["twin_cpu"]) for r in rows if r["twin_cpu"]]
    costliest = max(per_step, key=lambda item: item[1]["pct_of_one_core_per_1000_iops"] or 0.0, default=None)
    busiest = max(per_step, key=lambda item: item[1]["cpu_share_pct_of_one_core"], default=None)
    return {
        "definition": CPU_DEFINITION,
        "runs": per_run,
        "costliest_step_per_1000_iops": {"row": costliest[0], **costliest[1]} if costliest else None,
        "busiest_step": {"row": busiest[0], **busiest[1]} if busiest else None,
    }


def table(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row and direction: limit ratio, p50/p95/p99 measured/model and error, CPU, pressure."""
    lines = [
        f"{'volume':<13}{'profile':<22}{'emulator':<14}{'dir':<6}{'limit':>7}{'p50 ms meas/model':>22}"
        f"{'p95 ms meas/model':>22}{'p99 ms meas/model':>22}{'cpu%/1k':>8}{'psi%':>6}{'steal%':>7}"
    ]
    for row in rows:
        for direction, graded in row["latency"]["directions"].items():
            cells = "".join(
                f"{graded[p]['measured_ms']:>8.3f}/{graded[p]['model_ms']:<7.3f}{graded[p]['error_pct']:+6.1f}%"
                for p in LATENCY_GOALS
            )
            ratio = f"{row['limit']['ratio']:.3f}" if row["limit"] else "-"
            cpu = row["twin_cpu"]["pct_of_one_core_per_1000_iops"] if row["twin_cpu"] else None
            pressure = row.get("cpu_pressure_some_pct")
            steal = row.get("host_steal_pct")
            lines.append(
                f"{row['volume']:<13}{row['profile']:<22}{column_of(row):<14}{direction:<6}{ratio:>7}"
                f"{cells}{cpu if cpu is not None else '-':>8}{pressure if pressure is not None else '-':>6}"
                f"{steal if steal is not None else '-':>7}"
            )
    return lines
