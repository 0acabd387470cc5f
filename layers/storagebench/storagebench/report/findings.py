"""Findings: what the reader must not miss, in words: the labels collect attached to records
(``analysis.annotate``: burst, knee, delivery, bimodal latency), the run's regression verdicts
(``analysis.regressions``) against the suite's earlier runs, and, before anything else, what the
environment labels say the numbers cannot mean (emulated volumes, directory targets)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.analysis.delivery import INSTANCE_BOUND, NETWORK_BOUND
from storagebench.costs.measures import TOTAL_LABEL
from storagebench.protocol.caveats import EMULATED_LABEL_PREFIX, label_caveats
from storagebench.report.fmt import EMULATED_MARK, num, pct
from storagebench.report.model import METRIC_INFO, Finding, RegressionRow, Report

FINDING_PREFIXES = (
    "burst",
    "baseline",
    "crossed-knee@",
    "delivered:",
    "under-delivered:",
    "over-delivered:",
    INSTANCE_BOUND,  # and NETWORK_BOUND, which starts with it
    "bimodal-latency:",
)
"""Labels that are findings; every other label describes the environment (emulated:gp2:100GiB)."""


def label_findings(
    config_id: str, workload: str, name: str, labels: Mapping[str, int], runs: int
) -> list[Finding]:
    """Findings from the labels collect attached (``analysis.annotate``), counted over repetitions."""
    out: list[Finding] = []
    name = f"{config_id}, {name}"

    def share(count: int) -> str:
        return (
            ""
            if runs <= 1
            else (" in every repetition" if count >= runs else f" in {count} of {runs} repetitions")
        )

    def add(severity: Any, category: str, text: str) -> None:
        out.append(
            Finding(severity=severity, category=category, config_id=config_id, workload=workload, text=text)
        )

    for label, count in labels.items():
        kind, _, detail = label.partition(":")
        if label.startswith("crossed-knee@"):
            at = label.removeprefix("crossed-knee@").removesuffix("s") + " s"
            add(
                "warning",
                "burst",
                f"{name}: the volume ran out of burst credits {at} into the step{share(count)}; "
                "the result mixes burst and baseline performance",
            )
        elif label == "burst":
            add(
                "warning",
                "burst",
                f"{name}: measured on burst credits{share(count)}; sustained (baseline) performance is lower",
            )
        elif label == "baseline":
            add(
                "info",
                "burst",
                f"{name}: measured at baseline, after the burst credits ran out{share(count)}",
            )
        elif kind == "under-delivered":
            add(
                "warning",
                "delivery",
                f"{name}: delivered {ratio(detail)} of the expected ceiling{share(count)} (under-delivered)",
            )
        elif kind == "over-delivered":
            add(
                "info",
                "delivery",
                f"{name}: delivered {ratio(detail)} of the expected ceiling{share(count)}",
            )
        elif label == INSTANCE_BOUND:
            add(
                "info",
                "delivery",
                f"{name}: the instance's EBS limit, not the volume, set the ceiling{share(count)}",
            )
        elif label == NETWORK_BOUND:
            add(
                "info",
                "delivery",
                f"{name}: instance-bound: network: the client's network, not the storage, set the "
                f"ceiling{share(count)}",
            )
        elif label == "too-small":
            add(
                "warning",
                "data",
                f"{name}: too small to measure{share(count)}: under 1 s of I/O, or under 1,000 I/Os for "
                "its latency percentiles; its rates are start-up and cache effects (raise the scale)",
            )
        elif label == "sla-not-met":
            add(
                "warning",
                "sla",
                f"{name}: the latency SLA was not met even at the lowest rate probed{share(count)}",
            )
        elif kind == "bimodal-latency":
            low, _, high = detail.partition("/")
            add(
                "warning",
                "latency",
                f"{name}: latency has two modes (~{us_text(low)} and ~{us_text(high)}){share(count)}; "
                "the mean and p95 hide this, see the histogram",
            )
    return out


def ratio(text: str) -> str:
    try:
        return f"{float(text) * 100:.0f} %"
    except ValueError:
        return text


def us_text(text: str) -> str:
    try:
        return f"{num(float(text.removesuffix('us')) / 1000)} ms"
    except ValueError:
        return text


def cell_flags(labels: Mapping[str, int]) -> list[str]:
    flags: list[str] = []
    for label in labels:
        kind, _, detail = label.partition(":")
        if label.startswith("crossed-knee@"):
            flags.append("crossed burst knee")
        elif label == "burst":
            flags.append("on burst credits")
        elif kind == "under-delivered":
            flags.append(f"under-delivered {ratio(detail)}")
        elif label == INSTANCE_BOUND:
            flags.append("instance-bound")
        elif label == NETWORK_BOUND:
            flags.append("instance-bound: network")
        elif kind == "bimodal-latency":
            flags.append("bimodal latency")
        elif label == "too-small":
            flags.append("too small to measure")
        elif label == "sla-not-met":
            flags.append("SLA not met")
    return sorted(set(flags))


def regression_measurement(entry: Mapping[str, Any], groups: Mapping[str, set[int | None]]) -> str:
    parts = []
    variant = str(entry.get("variant") or "-")
    if variant != "-":
        parts.append(variant)
    if entry.get("phase") not in (None, "", "run"):
        parts.append(f"{entry['phase']} phase")
    direction = entry.get("direction")
    parts.append(TOTAL_LABEL if direction == "mixed" else str(direction))
    if entry.get("group") is not None and len(groups.get(str(entry.get("workload")), ())) > 1:
        parts.append(f"group {entry['group']}")
    return ", ".join(parts)


def read_regressions(
    entries: Sequence[Mapping[str, Any]], groups: Mapping[str, set[int | None]]
) -> tuple[list[RegressionRow], dict[str, int]]:
    counts: dict[str, int] = {}
    rows: list[RegressionRow] = []
    for entry in entries:
        verdict = str(entry.get("verdict"))
        counts[verdict] = counts.get(verdict, 0) + 1
        metric = METRIC_INFO.get(str(entry.get("metric")))
        value = entry.get("value")
        if not entry.get("flagged") or metric is None or not isinstance(value, int | float):
            continue
        band = entry.get("band")
        baseline = entry.get("baseline")
        delta = entry.get("delta_pct")
        rows.append(
            RegressionRow(
                storage_option=str(entry.get("storage_option", "")),
                config_ids=[str(c) for c in entry.get("config_ids") or []],
                workload=str(entry.get("workload", "")),
                measurement=regression_measurement(entry, groups),
                metric=metric,
                verdict=verdict,
                value=float(value),
                baseline=float(baseline) if isinstance(baseline, int | float) else None,
                delta_pct=float(delta) if isinstance(delta, int | float) else None,
                band=(float(band[0]), float(band[1]))
                if isinstance(band, list | tuple) and len(band) == 2
                else None,
                history_n=int(entry.get("history_n") or 0),
                repetitions=int(entry.get("repetitions") or 1),
            )
        )
    rows.sort(key=lambda r: (0 if r.verdict == "regression" else 1, -abs(r.delta_pct or 0.0)))
    return rows, counts


def regression_text(row: RegressionRow) -> str:
    against = f"the median of the last {row.history_n} runs"
    if row.baseline is not None:
        against += f" ({num(row.baseline * row.metric.scale)} {row.metric.unit})"
    band = ""
    if row.band is not None:
        band = (
            f", outside the noise band {num(row.band[0] * row.metric.scale)} to "
            f"{num(row.band[1] * row.metric.scale)} {row.metric.unit}"
        )
    return (
        f"{row.verdict}: {row.metric.label} {num(row.value * row.metric.scale)} {row.metric.unit} is "
        f"{pct(row.delta_pct)} against {against}{band}"
    )


# --- emulation: said first, marked wherever it shapes a grade, verdict or frontier -----------------


def emulated_configs(report: Report) -> frozenset[str]:
    """Configs with at least one target measured on an emulated volume (local mode)."""
    return frozenset(
        row.config_id
        for row in report.configs
        if any(label.startswith(EMULATED_LABEL_PREFIX) for label in row.environment)
    )


def caveats(report: Report) -> list[str]:
    """What the numbers cannot mean, the report's first lines: emulated volumes (their latency is
    not EBS's) and directory targets (the host's file system and page cache), in the words the
    agent prints before it runs (``protocol.caveats``)."""
    return label_caveats({row.config_id: row.environment for row in report.configs})


def mark_emulated(text: str, emulated: bool) -> str:
    """'gp3 is 12 % faster (emulated)': a verdict or frontier computed from emulated volumes."""
    return f"{text} ({EMULATED_MARK})" if emulated else text
