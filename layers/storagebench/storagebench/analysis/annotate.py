"""Findings that travel with the records: burst or baseline, delivered or not, bimodal latency.

* Burst: the 1 s IOPS series of every fio phase is searched for a knee; on each target the steps
  before its first knee ran on burst credits, the step holding it crossed it, the steps after ran
  at baseline. A bursting volume type whose knee never came was on burst credits throughout.
* Delivery: a saturating step (intent iops or throughput) is held to the target's expected
  envelope (burst or baseline, the instance's EBS limit included): "instance-bound" says the
  instance, not the volume, was the limit; "instance-bound:network" says the client's network was,
  for storage reached over it (``kinds.reach``: judged in MiB/s at the step's I/O size, since a
  network caps bytes); "under-delivered" says the provisioned performance did not arrive.
* Bimodal latency: two latency modes in a record's histogram (the report-card study's gp2).

Labels are short strings (``burst``, ``baseline``, ``crossed-knee@62s``, ``delivered:0.99``,
``instance-bound``, ``instance-bound:network``, ``under-delivered:0.71``,
``bimodal-latency:1000us/20000us``) so they survive any store.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from storagebench.analysis.bimodal import detect_bimodal
from storagebench.analysis.burst import detect_knee
from storagebench.analysis.delivery import Delivery, bound_label, check_delivery, ebs_bound
from storagebench.catalog.envelope import TargetEnvelope
from storagebench.catalog.network import NetworkEnvelope
from storagebench.core.clock import parse_iso
from storagebench.kinds import kind_of
from storagebench.kinds.reach import target_ceiling
from storagebench.request.model import Config
from storagebench.results.fio_logs import read_timeseries
from storagebench.results.records import ResultRecord

SATURATING = ("iops", "throughput", "mixed")


def _time(text: str | None) -> float | None:
    if not text:
        return None
    return parse_iso(text).timestamp()


def _knee_at(phase_dir: Path, started: float | None) -> float | None:
    """Absolute time of the burst knee in one phase's IOPS series, if there is one."""
    series_dir = phase_dir / "ts"
    if started is None or not series_dir.is_dir():
        return None
    iops = read_timeseries(series_dir).iops
    combined: dict[float, float] = defaultdict(float)
    for points in iops.values():
        for t, value in points:
            combined[t] += value
    knee = detect_knee(sorted(combined.items()))
    return None if knee is None else started + knee.time_to_knee_s


def _step_index(manifest: dict[str, Any]) -> dict[tuple[str, str, str, int], str]:
    """(workload, target, variant, repetition) -> step id: how records find the step they came from."""
    return {
        (
            str(s.get("workload")),
            str(s.get("target")),
            json.dumps(s.get("variant", {}), sort_keys=True),
            int(s.get("repetition", 1)),
        ): str(s.get("id"))
        for s in manifest.get("steps", [])
    }


def _record_key(record: ResultRecord) -> tuple[str, str, str, int]:
    return (record.workload, record.target_id, json.dumps(record.variant, sort_keys=True), record.repetition)


def _bursts(target: Any) -> bool:
    return target is not None and kind_of(target).bursts(target)


def burst_labels(manifest: dict[str, Any], output_dir: Path, config: Config) -> dict[str, list[str]]:
    """step id -> burst, baseline or crossed-knee@<s> (only for targets that can burst)."""
    by_target: dict[str, list[tuple[str, float | None, float | None, float | None]]] = defaultdict(list)
    for step in manifest.get("steps", []):
        start, end = _time(step.get("started_at")), _time(step.get("ended_at"))
        knee = None
        for phase in step.get("phases", []):
            if phase.get("engine") == "fio" and phase.get("dir"):
                knee = knee or _knee_at(output_dir / phase["dir"], _time(phase.get("started_at")))
        by_target[str(step.get("target"))].append((str(step.get("id")), start, end, knee))
    labels: dict[str, list[str]] = {}
    targets = {t.id: t for t in config.targets}
    for target_id, steps in by_target.items():
        knees = [k for _, _, _, k in steps if k is not None]
        first = min(knees) if knees else None
        if first is None and not _bursts(targets.get(target_id)):
            continue
        for step_id, start, end, knee in steps:
            if first is None:
                labels[step_id] = ["burst"]  # the bucket never emptied: every result ran on credits
            elif knee is not None and start is not None:
                labels[step_id] = [f"crossed-knee@{knee - start:.0f}s"]
            elif end is not None and end <= first:
                labels[step_id] = ["burst"]
            elif start is not None and start >= first:
                labels[step_id] = ["baseline"]
    return labels


def _judge(
    members: list[ResultRecord], envelope: TargetEnvelope | NetworkEnvelope, intent: str, at_baseline: bool
) -> Delivery:
    """One step's records against its ceiling: EBS in IOPS or MiB/s as the intent says; storage
    reached over the network in MiB/s at the records' mean I/O size (the network caps bytes)."""
    if isinstance(envelope, NetworkEnvelope):
        measured = sum(r.bw_mibps or 0.0 for r in members)
        ios = sum(r.ios or 0 for r in members)
        io_bytes = sum(r.bytes for r in members) / ios if ios else None
        expected, bound = envelope.ceiling_mibps(io_bytes, sustained=at_baseline)
        return check_delivery(measured, expected, bound, "throughput")
    if intent == "throughput":
        measured = sum(r.bw_mibps or 0.0 for r in members)
        expected = envelope.sustained_mibps if at_baseline else envelope.expected_mibps
        bound = envelope.sustained_mibps_bound_by if at_baseline else envelope.mibps_bound_by
        return check_delivery(measured, expected, bound, "throughput")
    measured = sum(r.iops or 0.0 for r in members)
    expected = envelope.sustained_iops if at_baseline else envelope.expected_iops
    bound = envelope.sustained_iops_bound_by if at_baseline else envelope.iops_bound_by
    return check_delivery(measured, expected, bound, "iops")


def delivery_labels(
    records: Iterable[ResultRecord],
    manifest: dict[str, Any],
    config: Config,
    burst: dict[str, list[str]],
    network_ceilings: bool = True,
) -> dict[tuple[str, int], list[str]]:
    """(step's workload key, repetition) -> delivery labels, for saturating steps on targets with a
    ceiling; without ``network_ceilings`` (local mode: loopback, not the type's network) targets
    reached over the network are not judged."""
    intents = {str(s.get("id")): str(s.get("intent", "")) for s in manifest.get("steps", [])}
    steps_by_key = _step_index(manifest)
    targets = {t.id: t for t in config.targets}
    grouped: dict[tuple[str, str, str, int], list[ResultRecord]] = defaultdict(list)
    for record in records:
        if record.engine != "fio":
            continue
        grouped[_record_key(record)].append(record)
    labels: dict[tuple[str, int], list[str]] = {}
    for key, members in grouped.items():
        step_id = steps_by_key.get(key)
        target = targets.get(key[1])
        intent = intents.get(step_id or "", "")
        envelope = target_ceiling(config, target) if target is not None else None
        if step_id is None or envelope is None or intent not in SATURATING:
            continue
        if isinstance(envelope, NetworkEnvelope) and not network_ceilings:
            continue
        at_baseline = "baseline" in burst.get(step_id, [])
        verdict = _judge(members, envelope, intent, at_baseline)
        found: list[str] = []
        if verdict.ratio is not None:
            found.append(f"{verdict.status}:{verdict.ratio:.2f}")  # measured / expected
        bound = bound_label(verdict)
        if bound is not None:
            found.append(bound)
        said = ebs_bound(members)
        if said is not None:  # EBS's own count of the time each limit held: evidence, not inference
            found.append(f"ebs-{said[0]}:{said[1]:.2f}")
        if found:
            labels[(step_id, key[3])] = found
    return labels


def annotate(
    records: list[ResultRecord], output_dir: Path, config: Config, network_ceilings: bool = True
) -> list[ResultRecord]:
    """The records with their findings added to ``labels`` (nothing removed); ``network_ceilings``
    False where the instances' network is not AWS's (local mode)."""
    try:
        manifest = json.loads((output_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return records
    burst = burst_labels(manifest, output_dir, config)
    delivery = delivery_labels(records, manifest, config, burst, network_ceilings)
    steps_by_key = _step_index(manifest)
    annotated = []
    for record in records:
        step_id = steps_by_key.get(_record_key(record), "")
        extra = [*burst.get(step_id, []), *delivery.get((step_id, record.repetition), [])]
        if record.histogram:
            bimodal = detect_bimodal(record.histogram)
            if bimodal is not None:
                extra.append(f"bimodal-latency:{bimodal.low_mode_us:.0f}us/{bimodal.high_mode_us:.0f}us")
        new = [label for label in extra if label not in record.labels]
        annotated.append(record.model_copy(update={"labels": [*record.labels, *new]}) if new else record)
    return annotated
