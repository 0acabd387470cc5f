"""The agent's output directory (``manifest.json`` plus raw files) into ResultRecords.

``collect`` reads every phase with status ``ok`` and turns its raw files into records:

* fio phases: ``fio.json`` (json+) through ``storagebench.results.fio``, one record per job
  group and direction, cross-checked against fio's own summary in ``fio.txt``;
* fio phases of a multi-client step (the plan step's ``clients``, or ``fio.json`` holding fio's
  client/server output): a record per client, group and direction plus one aggregate per group
  and direction (``storagebench.results.clients``), cross-checked against fio's "All clients";
  a missing or failed client is a problem line and withholds the aggregate, the others' records
  are kept;
* dd phases: one record per phase. ``jobs`` is the number of dd threads, ``bytes`` the sum of
  what each thread's dd reported, ``runtime_s`` the agent's wall time for the phase
  (``timing.json`` real_s) so ``bw_mibps`` = all bytes / real_s; the slowest and fastest
  thread (dd's own bytes / seconds) go to ``job_bw_min/max_mibps``;
* command phases: one ``mixed`` record with real/user/sys, and bytes/files when the agent's
  timing has them per thread (else the planner's ``accounting`` of the whole phase);
* pre-warm entries: one ``prewarm`` read record per target; a target given the sampled
  cold-read check instead of a full read carries its cold and warm passes in ``cold_read``
  (``storagebench.results.cold_read``).

One bad phase never costs the others: a failed phase, a missing or unparsable file, or a
record fio's own summary disagrees with becomes a line in ``Collection.problems``. Only a
missing or invalid ``manifest.json`` raises (ManifestError): without it nothing can be named.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from storagebench.core.series import SeriesOutcome, SteadyStateOutcome
from storagebench.protocol.manifest import MANIFEST_VERSION, STATUS_FAILED, STATUS_OK
from storagebench.protocol.measurable import LABEL as TOO_SMALL
from storagebench.protocol.measurable import too_small
from storagebench.results.collect_fio import SLA_NOT_MET, fio_records, search_records
from storagebench.results.collect_phase import Identity, PhaseDirOutsideError, PhaseError, phase_dir
from storagebench.results.collect_prewarm import prewarm_records
from storagebench.results.collect_timed import command_records, dd_records
from storagebench.results.errors import ManifestError, ParseError
from storagebench.results.node_loss_records import with_node_loss
from storagebench.results.records import ResultRecord
from storagebench.results.series import read_series, steady_states
from storagebench.results.volume import DeviceView, parse_views, volume_side

__all__ = ["SLA_NOT_MET", "Collection", "PhaseDirOutsideError", "collect", "phase_dir", "read_manifest_file"]


class Collection(BaseModel):
    """What one agent output directory yielded."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    config_id: str
    records: list[ResultRecord] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="one line per phase that yielded nothing")
    warnings: list[str] = Field(
        default_factory=list,
        description="measurements kept but to be read with care (too small to measure): labelled, not lost",
    )
    series: list[SeriesOutcome] = Field(
        default_factory=list, description="adaptive series: repetitions spent and why each stopped"
    )
    steady_state: list[SteadyStateOutcome] = Field(
        default_factory=list, description="fio's steady-state verdict of each job that asked for one"
    )


def read_manifest_file(output_dir: str | Path) -> dict[str, Any]:
    """``manifest.json`` of an agent output directory, checked enough to be walked safely."""
    path = Path(output_dir) / "manifest.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(
            path, "missing: not an agent output directory, or the agent never started"
        ) from None
    except OSError as exc:
        raise ManifestError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(path, f"not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ManifestError(path, f"expected a JSON object, got {type(document).__name__}")
    if document.get("manifest_version") != MANIFEST_VERSION:
        raise ManifestError(
            path, f"manifest_version {document.get('manifest_version')!r} is not {MANIFEST_VERSION}"
        )
    if not isinstance(document.get("config_id"), str) or not document["config_id"]:
        raise ManifestError(path, "config_id: a non-empty string is required")
    for key in ("steps", "targets", "prewarm"):
        if document.get(key) is not None and not isinstance(document[key], list):
            raise ManifestError(path, f"{key}: expected a list, got {type(document[key]).__name__}")
    return document


def collect(output_dir: str | Path) -> Collection:
    """Every record the output directory yields, plus a problem line for each phase that did not."""
    root = Path(output_dir)
    manifest = read_manifest_file(root)
    collection = Collection(
        run_id=manifest.get("run_id") if isinstance(manifest.get("run_id"), str) else None,
        config_id=manifest["config_id"],
    )
    labels = _target_labels(manifest)
    plan_phases = _plan_phases(root)
    plan_clients = _plan_clients(root)

    _prewarms(collection, root, manifest, labels)
    for index, step in enumerate(manifest.get("steps") or []):
        if not isinstance(step, Mapping):
            collection.problems.append(f"steps[{index}]: expected an object")
            continue
        step_id = step.get("id", f"steps[{index}]")
        phases = step.get("phases") or []
        if not isinstance(phases, list):
            collection.problems.append(f"step {step_id}: phases is not a list")
            continue
        if step.get("status") == STATUS_FAILED and not any(
            isinstance(p, Mapping) and p.get("status") == STATUS_FAILED for p in phases
        ):
            collection.problems.append(f"step {step_id} failed: {step.get('error') or 'no error recorded'}")
        for phase_index, phase in enumerate(phases):
            if not isinstance(phase, Mapping):
                collection.problems.append(f"step {step_id} phases[{phase_index}]: expected an object")
                continue
            name = phase.get("name", f"phases[{phase_index}]")
            where = f"step {step_id} phase {name}"
            status = phase.get("status")
            if status == STATUS_FAILED:
                rc = f" (rc={phase['rc']})" if phase.get("rc") is not None else ""
                collection.problems.append(f"{where} failed{rc}: {phase.get('error') or 'no error recorded'}")
                continue
            if status != STATUS_OK:
                continue  # skipped (or still running): nothing was measured
            try:
                identity = _identity(manifest["config_id"], step, phase, labels)
                plan_phase = plan_phases.get((str(step_id), str(name)), {})
                clients = _step_clients(step, plan_clients.get(str(step_id)))
                records, notes = _phase_records(root, step, phase, plan_phase, identity, clients)
                records, small = _flag_too_small(records)
                records, unmeasured = with_node_loss(records, phase, plan_phase)
                notes = [*notes, *unmeasured]
                collection.warnings.extend(f"{where}: {note}" for note in small)
                views, bad = parse_views(phase.get("volume"))
                collection.records.extend(_with_volume(records, views))
                collection.problems.extend(f"{where}: {note}" for note in [*notes, *bad])
                if phase.get("engine") == "fio":
                    _steady_state(collection, root, str(step_id), phase, where)
            except Exception as exc:
                collection.problems.append(f"{where}: {_describe(exc)}")
    series, unread = read_series(manifest)
    collection.series = series
    collection.problems.extend(unread)
    return collection


def _prewarms(
    collection: Collection, root: Path, manifest: Mapping[str, Any], labels: dict[str, list[str]]
) -> None:
    """The pre-warm reads and cold-read checks of the manifest; a bad entry is a problem line."""
    for index, entry in enumerate(manifest.get("prewarm") or []):
        where = f"prewarm[{index}]"
        try:
            if not isinstance(entry, Mapping):
                raise PhaseError("expected an object")
            where = f"prewarm of {entry.get('target')!r}"
            collection.records.extend(prewarm_records(root, manifest["config_id"], entry, labels))
        except Exception as exc:
            collection.problems.append(f"{where}: {_describe(exc)}")


def _steady_state(
    collection: Collection, root: Path, step_id: str, phase: Mapping[str, Any], where: str
) -> None:
    """fio's steady-state verdicts of a phase; one not attained is a warning (the figures may drift)."""
    verdicts, unread = steady_states(root, step_id, phase)
    collection.steady_state.extend(verdicts)
    collection.problems.extend(unread)
    collection.warnings.extend(
        f"{where}: {v.text}: the figures may still drift" for v in verdicts if not v.attained
    )


def _with_volume(records: list[ResultRecord], views: list[DeviceView]) -> list[ResultRecord]:
    """Each read or write record with its direction as the volume saw it (mixed and trim records
    span both counters, so they get none)."""
    if not views:
        return records
    return [
        record.model_copy(update={"volume": volume_side(views, record.direction, record.runtime_s)})
        if record.direction in ("read", "write")
        else record
        for record in records
    ]


def _describe(exc: Exception) -> str:
    if isinstance(exc, ParseError | PhaseError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _target_labels(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {}
    for target in manifest.get("targets") or []:
        if isinstance(target, Mapping) and isinstance(target.get("id"), str):
            raw = target.get("labels") or []
            labels[target["id"]] = [str(label) for label in raw] if isinstance(raw, list) else []
    return labels


def _plan_phases(root: Path) -> dict[tuple[str, str], Mapping[str, Any]]:
    """Phases of ``plan.json`` by (step id, phase name); empty when the plan is absent or bad."""
    try:
        plan = json.loads((root / "plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    phases: dict[tuple[str, str], Mapping[str, Any]] = {}
    steps = plan.get("steps") if isinstance(plan, dict) else None
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or not isinstance(step.get("phases"), list):
            continue
        for phase in step["phases"]:
            if isinstance(phase, dict):
                phases[(str(step.get("id")), str(phase.get("name")))] = phase
    return phases


def _plan_clients(root: Path) -> dict[str, Any]:
    """The ``clients`` of ``plan.json``'s steps by step id (as written: checked by ``_step_clients``)."""
    try:
        plan = json.loads((root / "plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    steps = plan.get("steps") if isinstance(plan, dict) else None
    return {
        str(step.get("id")): step["clients"]
        for step in (steps if isinstance(steps, list) else [])
        if isinstance(step, dict) and step.get("clients") is not None
    }


def _step_clients(step: Mapping[str, Any], planned: Any) -> list[str] | None:
    """The step's fio ``--client`` strings: the manifest's step first, else plan.json's; None for a
    single-client step."""
    clients = step.get("clients", planned)
    if clients is None:
        return None
    if not isinstance(clients, list) or not clients or not all(isinstance(c, str) and c for c in clients):
        raise PhaseError(f"the step's clients {clients!r}: expected a non-empty list of fio --client strings")
    return list(clients)


def _identity(
    config_id: str, step: Mapping[str, Any], phase: Mapping[str, Any], labels: Mapping[str, list[str]]
) -> Identity:
    missing = [key for key in ("id", "workload", "target", "repetition") if step.get(key) in (None, "")]
    if missing:
        raise PhaseError(f"the manifest's step lacks {', '.join(missing)}")
    variant = step.get("variant") or {}
    if not isinstance(variant, Mapping):
        raise PhaseError(f"variant {variant!r} is not an object")
    target = str(step["target"])
    started = phase.get("started_at")
    return Identity(
        config_id=config_id,
        target_id=target,
        workload=str(step["workload"]),
        profile=str(step.get("profile") or step["workload"]),
        variant=dict(variant),
        repetition=int(step["repetition"]),
        phase=str(phase["name"]),
        started_at=started if isinstance(started, str) else None,
        labels=list(labels.get(target, [])),
    )


def _phase_records(
    root: Path,
    step: Mapping[str, Any],
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: Identity,
    clients: list[str] | None = None,
) -> tuple[list[ResultRecord], list[str]]:
    directory, relative = phase_dir(root, str(step.get("id")), phase)
    if not directory.is_dir():
        raise PhaseError(f"output directory {relative} is missing")
    engine = phase.get("engine") or plan_phase.get("engine")
    if engine == "fio" and phase.get("search") is not None:
        if clients is not None:
            raise PhaseError("a latency-SLA search runs on one client; this step names several")
        return search_records(directory, relative, phase["search"], identity)
    if engine == "fio":
        return fio_records(directory, relative, identity, clients)
    if engine == "dd":
        return dd_records(directory, relative, phase, plan_phase, identity)
    if engine == "command":
        return command_records(directory, relative, phase, plan_phase, identity)
    raise PhaseError(f"engine {engine!r} is not fio, dd or command")


def _flag_too_small(records: list[ResultRecord]) -> tuple[list[ResultRecord], list[str]]:
    """Records too small to measure (``protocol.measurable``) get the ``too-small`` label and a note."""
    flagged: list[ResultRecord] = []
    notes: list[str] = []
    for record in records:
        why = too_small(record.runtime_s, record.ios, percentiles=record.latency is not None)
        if why is None:
            flagged.append(record)
            continue
        notes.append(f"{record.direction}: {why}")
        flagged.append(record.model_copy(update={"labels": [*record.labels, TOO_SMALL]}))
    return flagged, notes
