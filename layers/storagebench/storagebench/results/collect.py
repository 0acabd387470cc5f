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
import math
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storagebench.core.series import SeriesOutcome, SteadyStateOutcome
from storagebench.protocol.manifest import MANIFEST_VERSION, STATUS_FAILED, STATUS_OK
from storagebench.protocol.measurable import LABEL as TOO_SMALL
from storagebench.protocol.measurable import too_small
from storagebench.results.clients.aggregate import (
    aggregate_clients,
    all_clients_disagreements,
    client_records,
)
from storagebench.results.clients.output import is_client_output, split_clients
from storagebench.results.cold_read import cold_read_check
from storagebench.results.dd import DdResult, read_dd_stderr
from storagebench.results.errors import ManifestError, ParseError
from storagebench.results.fio import MIB, RECORD_PERCENTILES, aggregate_fio, summary_disagreements
from storagebench.results.node_loss_records import with_node_loss
from storagebench.results.records import Direction, ResultRecord, SlaProbe, SlaSearch, VariantValue
from storagebench.results.series import read_series, steady_states
from storagebench.results.volume import DeviceView, parse_views, volume_side

_THREAD = re.compile(r"\.(\d+)\.")
SLA_NOT_MET = "sla-not-met"


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


class _Identity(TypedDict):
    config_id: str
    target_id: str
    workload: str
    profile: str
    variant: dict[str, VariantValue]
    repetition: int
    phase: str
    started_at: str | None
    labels: list[str]


class _PhaseError(Exception):
    """A phase that yields no record; the message goes to Collection.problems."""


class PhaseDirOutsideError(_PhaseError):
    """A phase directory that would leave the output directory (``..`` or elsewhere)."""


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
                raise _PhaseError("expected an object")
            where = f"prewarm of {entry.get('target')!r}"
            collection.records.extend(_prewarm(root, manifest["config_id"], entry, labels))
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
    if isinstance(exc, ParseError | _PhaseError):
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
        raise _PhaseError(
            f"the step's clients {clients!r}: expected a non-empty list of fio --client strings"
        )
    return list(clients)


def _identity(
    config_id: str, step: Mapping[str, Any], phase: Mapping[str, Any], labels: Mapping[str, list[str]]
) -> _Identity:
    missing = [key for key in ("id", "workload", "target", "repetition") if step.get(key) in (None, "")]
    if missing:
        raise _PhaseError(f"the manifest's step lacks {', '.join(missing)}")
    variant = step.get("variant") or {}
    if not isinstance(variant, Mapping):
        raise _PhaseError(f"variant {variant!r} is not an object")
    target = str(step["target"])
    started = phase.get("started_at")
    return _Identity(
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


def phase_dir(root: Path, step_id: str, phase: Mapping[str, Any]) -> tuple[Path, PurePosixPath]:
    """The phase's directory, absolute and relative to the output directory.

    The agent records it relative; an absolute path (an older agent, or a directory since
    copied elsewhere, e.g. downloaded from S3) is made relative when it lies under the output
    directory and otherwise replaced by the documented layout ``steps/<step>/<phase>``.
    """
    default = PurePosixPath("steps", step_id, str(phase.get("name")))
    relative = PurePosixPath(str(phase.get("dir") or default))
    if relative.is_absolute():
        try:
            relative = PurePosixPath(Path(relative).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            relative = default
    if ".." in relative.parts or ".." in default.parts:
        raise PhaseDirOutsideError(f"phase dir {str(relative)!r} is not inside the output directory")
    return root / relative, relative


def _phase_records(
    root: Path,
    step: Mapping[str, Any],
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: _Identity,
    clients: list[str] | None = None,
) -> tuple[list[ResultRecord], list[str]]:
    directory, relative = phase_dir(root, str(step.get("id")), phase)
    if not directory.is_dir():
        raise _PhaseError(f"output directory {relative} is missing")
    engine = phase.get("engine") or plan_phase.get("engine")
    if engine == "fio" and phase.get("search") is not None:
        if clients is not None:
            raise _PhaseError("a latency-SLA search runs on one client; this step names several")
        return _search_records(directory, relative, phase["search"], identity)
    if engine == "fio":
        return _fio_records(directory, relative, identity, clients)
    if engine == "dd":
        return _dd_records(directory, relative, phase, plan_phase, identity)
    if engine == "command":
        return _command_records(directory, relative, phase, plan_phase, identity)
    raise _PhaseError(f"engine {engine!r} is not fio, dd or command")


# --------------------------------------------------------------------------- fio


def _fio_records(
    directory: Path, relative: PurePosixPath, identity: _Identity, clients: list[str] | None = None
) -> tuple[list[ResultRecord], list[str]]:
    json_path = directory / "fio.json"
    text_path = directory / "fio.txt"
    source = relative / "fio.json"
    if not json_path.is_file():
        raise _PhaseError(f"{source} is missing")
    document = json_path.read_text(encoding="utf-8", errors="replace")
    if clients is not None or is_client_output(document):
        return _client_fio_records(document, relative, identity, clients)
    normal = text_path.read_text(encoding="utf-8", errors="replace") if text_path.is_file() else None
    raw = [str(source)] + ([str(relative / "fio.txt")] if normal is not None else [])
    results = aggregate_fio(document, normal_text=normal, source=source)
    if not results:
        raise _PhaseError(f"{source}: no job did any I/O")
    notes: list[str] = []
    if normal is None:
        notes.append(f"{relative / 'fio.txt'} is missing: records not checked against fio's summary")
    else:
        try:
            disagreements = summary_disagreements(results, normal, relative / "fio.txt")
        except ParseError as exc:
            disagreements = [str(exc)]
        notes.extend(f"{relative / 'fio.txt'}: {line}" for line in disagreements)
    records = [result.to_record(**identity, raw=raw) for result in results]
    return records, notes


def _client_fio_records(
    document: str, relative: PurePosixPath, identity: _Identity, clients: list[str] | None
) -> tuple[list[ResultRecord], list[str]]:
    """A multi-client fio phase: per-client records and the aggregates. fio's normal text of a
    client/server run is per client, so the check is against fio's "All clients" entry instead."""
    source = relative / "fio.json"
    results = aggregate_clients(split_clients(document, clients, source))
    records = client_records(results, **identity, raw=[str(source)])
    notes = [str(error) for error in results.errors]
    if not records:
        raise _PhaseError("; ".join(notes) or f"{source}: no client did any I/O")
    if clients is None:
        notes.append(
            f"{source}: fio client/server output but the step names no clients: "
            "a client fio could not reach would go unnoticed"
        )
    notes.extend(f"{source}: {line}" for line in all_clients_disagreements(results))
    return records, notes


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


# --------------------------------------------------------------------------- latency-SLA search


def _search_records(
    directory: Path, relative: PurePosixPath, search: Any, identity: _Identity
) -> tuple[list[ResultRecord], list[str]]:
    """The answer probe's fio records (the lowest rate's when the SLA was never met, with no IOPS:
    there is no rate to report), each carrying the whole search."""
    if not isinstance(search, Mapping):
        raise _PhaseError(f"search: expected an object, got {type(search).__name__}")
    answer = search.get("answer")
    try:
        sla = SlaSearch.model_validate(
            {
                **{k: v for k, v in search.items() if k != "answer"},
                "sustained_iops": answer.get("iops") if isinstance(answer, Mapping) else None,
                "answer_probe": answer.get("probe") if isinstance(answer, Mapping) else None,
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(search)"
        raise _PhaseError(f"search.{where}: {first['msg']} (got {first.get('input')!r})") from None
    number = sla.answer_probe if sla.met else sla.probes[0].probe
    if sla.met and (number is None or sla.sustained_iops is None):
        raise _PhaseError("search: met, but no answer probe with its IOPS")
    chosen = [p for p in sla.probes if p.probe == number]
    if not chosen or not chosen[0].dir:
        raise _PhaseError(f"search: probe {number} is not among the probes, or has no directory")
    probe_path = PurePosixPath(chosen[0].dir)
    if probe_path.is_absolute() or ".." in probe_path.parts:
        raise PhaseDirOutsideError(f"probe dir {chosen[0].dir!r} is not inside the phase directory")
    records, notes = _fio_records(directory / probe_path, relative / probe_path, identity)
    notes.extend(_search_disagreements(records, sla, chosen[0]))
    return [
        record.model_copy(update={"sla": sla})
        if sla.met
        else record.model_copy(
            update={"sla": sla, "iops": None, "bw_mibps": None, "labels": [*record.labels, SLA_NOT_MET]}
        )
        for record in records
    ], notes


def _search_disagreements(records: list[ResultRecord], sla: SlaSearch, probe: SlaProbe) -> list[str]:
    """The agent judged its probe from the same fio.json: its percentile and I/O count must be the
    records' (the percentile when the record carries it), or the search is not what the files say."""
    field = next((name for name, pct in RECORD_PERCENTILES.items() if pct == sla.percentile), None)
    notes: list[str] = []
    ios = sum(record.ios or 0 for record in records)
    if probe.ios is not None and probe.ios != ios:
        notes.append(f"search probe {probe.probe}: the agent counted {probe.ios} I/Os, fio.json holds {ios}")
    values = [getattr(record.latency, field) for record in records if field and record.latency is not None]
    worst = max((v for v in values if v is not None), default=None)
    if worst is not None and not math.isclose(worst, probe.latency_us, rel_tol=0.01):
        notes.append(
            f"search probe {probe.probe}: the agent judged p{sla.percentile:g} {probe.latency_us:g} us, "
            f"fio.json gives {worst:g} us"
        )
    return notes


# --------------------------------------------------------------------------- timing


def _read_timing(
    directory: Path, relative: PurePosixPath, phase: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, list[str], list[str]]:
    """(timing, raw paths, notes): ``timing.json`` first, the manifest's copy as fallback."""
    path = directory / "timing.json"
    notes: list[str] = []
    if path.is_file():
        try:
            timing = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(timing, dict):
                raise ValueError(f"expected an object, got {type(timing).__name__}")
            return timing, [str(relative / "timing.json")], notes
        except ValueError as exc:
            notes.append(f"{relative / 'timing.json'} is unreadable ({exc})")
    fallback = phase.get("timing")
    if isinstance(fallback, Mapping) and fallback:
        if not notes:
            notes.append(f"{relative / 'timing.json'} is missing: used the manifest's timing")
        else:
            notes[-1] += ": used the manifest's timing"
        return fallback, [], notes
    return None, [], notes


def _seconds(timing: Mapping[str, Any] | None, key: str) -> float | None:
    value = timing.get(key) if timing is not None else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _threads(timing: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    threads = timing.get("threads") if timing is not None else None
    return [t for t in threads if isinstance(t, Mapping)] if isinstance(threads, list) else []


def _thread_number(path: Path) -> int:
    match = _THREAD.search(path.name)
    return int(match.group(1)) if match else 0


# --------------------------------------------------------------------------- dd


def _dd_direction(directory: Path, phase: Mapping[str, Any], plan_phase: Mapping[str, Any]) -> Direction:
    """From the manifest, else plan.json, else the agent's commands.txt, else the phase name."""
    dd = plan_phase.get("dd")
    for value in (phase.get("direction"), dd.get("direction") if isinstance(dd, Mapping) else None):
        if value in ("read", "write"):
            return "read" if value == "read" else "write"
    try:
        commands = (directory / "commands.txt").read_text(encoding="utf-8").split()
    except OSError:
        commands = []
    if "of=/dev/null" in commands:
        return "read"
    if any(word.startswith("of=") for word in commands):
        return "write"
    name = str(phase.get("name", "")).lower()
    if "read" in name:
        return "read"
    if "write" in name or "create" in name:
        return "write"
    raise _PhaseError("dd direction unknown: not in the manifest, plan.json, commands.txt or the phase name")


def _dd_records(
    directory: Path,
    relative: PurePosixPath,
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: _Identity,
) -> tuple[list[ResultRecord], list[str]]:
    files = sorted(directory.glob("dd.*.stderr"), key=_thread_number)
    if not files:
        raise _PhaseError(f"no dd.<thread>.stderr in {relative}")
    direction = _dd_direction(directory, phase, plan_phase)
    results: list[DdResult] = [read_dd_stderr(path) for path in files]
    timing, timing_raw, notes = _read_timing(directory, relative, phase)
    for path, result in zip(files, results, strict=True):
        notes.extend(f"{relative / path.name}: {line}" for line in result.errors)
    total = sum(r.bytes for r in results)
    real = _seconds(timing, "real_s")
    # dd's own copy time (what dd prints and the studies quote) excludes process start-up; the
    # slowest thread's is the phase's, as fio's aggregate uses its longest job.
    copy = max(r.seconds for r in results)
    if real is None or real <= 0:
        real = copy
        notes.append("no real_s in the agent's timing: real_s is the slowest dd's own seconds")
    if copy <= 0:
        copy = real
    rates = [r.mibps for r in results if r.mibps is not None]
    ios = sum(r.records_in.total if direction == "read" else r.records_out.total for r in results)
    user = _seconds(timing, "user_s")
    sys = _seconds(timing, "sys_s")
    record = ResultRecord(
        **identity,
        direction=direction,
        engine="dd",
        jobs=len(results),
        iops=ios / copy if copy > 0 else None,
        bw_mibps=total / copy / MIB if copy > 0 else None,
        bytes=total,
        ios=ios,
        runtime_s=copy,
        job_bw_min_mibps=min(rates) if rates else None,
        job_bw_max_mibps=max(rates) if rates else None,
        job_runtime_min_s=min(r.seconds for r in results),
        job_runtime_max_s=max(r.seconds for r in results),
        cpu_usr_pct=user / real * 100 if user is not None and real > 0 else None,
        cpu_sys_pct=sys / real * 100 if sys is not None and real > 0 else None,
        real_s=real,
        user_s=user,
        sys_s=sys,
        raw=[str(relative / path.name) for path in files] + timing_raw,
    )
    return [record], notes


# --------------------------------------------------------------------------- command


def _command_records(
    directory: Path,
    relative: PurePosixPath,
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: _Identity,
) -> tuple[list[ResultRecord], list[str]]:
    timing, timing_raw, notes = _read_timing(directory, relative, phase)
    real = _seconds(timing, "real_s")
    if real is None:
        raise _PhaseError(f"no real_s in {relative / 'timing.json'} or the manifest: nothing was timed")
    threads = _threads(timing)
    failed = [t for t in threads if t.get("rc") not in (None, 0)]
    if failed:
        detail = ", ".join(f"thread {t.get('thread')} rc={t.get('rc')}" for t in failed)
        raise _PhaseError(f"phase marked ok but {detail}: a failed command's time is not a measurement")
    command = plan_phase.get("command")
    byte_counts = [t["bytes"] for t in threads if isinstance(t.get("bytes"), int)]
    file_counts = [t["files"] for t in threads if isinstance(t.get("files"), int)]
    # Without per-thread counts, the planner's accounting of what the whole phase moves
    # (copied by the agent into timing.json, and present in plan.json).
    for accounting in (
        timing.get("accounting") if timing is not None else None,
        command.get("accounting") if isinstance(command, Mapping) else None,
    ):
        if not isinstance(accounting, Mapping):
            continue
        if not byte_counts and isinstance(accounting.get("bytes"), int):
            byte_counts = [accounting["bytes"]]
        if not file_counts and isinstance(accounting.get("files"), int):
            file_counts = [accounting["files"]]
    total = sum(byte_counts)
    parallel = command.get("parallel") if isinstance(command, Mapping) else None
    jobs = len(threads) or (parallel if isinstance(parallel, int) and parallel > 0 else 1)
    thread_real = [s for s in (_seconds(t, "real_s") for t in threads) if s is not None]
    user = _seconds(timing, "user_s")
    sys = _seconds(timing, "sys_s")
    outputs = sorted(
        [*directory.glob("stdout.*.txt"), *directory.glob("stderr.*.txt")],
        key=lambda p: (_thread_number(p), p.name),
    )
    record = ResultRecord(
        **identity,
        direction="mixed",
        engine="command",
        jobs=jobs,
        bw_mibps=total / real / MIB if byte_counts and real > 0 else None,
        bytes=total,
        runtime_s=real,
        job_runtime_min_s=min(thread_real) if thread_real else None,
        job_runtime_max_s=max(thread_real) if thread_real else None,
        cpu_usr_pct=user / real * 100 if user is not None and real > 0 else None,
        cpu_sys_pct=sys / real * 100 if sys is not None and real > 0 else None,
        real_s=real,
        user_s=user,
        sys_s=sys,
        files=sum(file_counts) if file_counts else None,
        raw=[str(relative / p.name) for p in outputs] + timing_raw,
    )
    return [record], notes


# --------------------------------------------------------------------------- pre-warm


def _relative_file(root: Path, base: PurePosixPath, name: str) -> str:
    """A raw file named in the manifest, relative to the output directory."""
    path = PurePosixPath(name)
    if path.is_absolute():
        try:
            return str(PurePosixPath(Path(name).resolve().relative_to(root.resolve())))
        except ValueError:
            return name
    if (root / path).exists() or path.parts[: len(base.parts)] == base.parts:
        return str(path)
    return str(base / path)


def _fio_read_seconds(directory: Path, device: Mapping[str, Any]) -> float | None:
    """fio's own read runtime for a pre-warmed device (the agent's clock includes fio's start-up)."""
    for name in device.get("files") or []:
        if str(name).endswith(".json"):
            try:
                document = json.loads((directory / str(name)).read_text(encoding="utf-8"))
                runtime_ms = float(document["jobs"][0]["read"]["runtime"])
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                return None
            return runtime_ms / 1000 if runtime_ms > 0 else None
    return None


def _prewarm(
    root: Path, config_id: str, entry: Mapping[str, Any], labels: Mapping[str, list[str]]
) -> list[ResultRecord]:
    status = entry.get("status")
    if status == STATUS_FAILED:
        raise _PhaseError(f"failed: {entry.get('error') or 'no error recorded'}")
    if status != STATUS_OK:
        return []
    target = entry.get("target")
    if not isinstance(target, str) or not target:
        raise _PhaseError("no target id")
    devices = [d for d in entry.get("devices") or [] if isinstance(d, Mapping)]
    if not devices:
        raise _PhaseError("status ok but no devices were read")
    base = PurePosixPath(str(entry.get("dir") or f"prewarm/{target}"))
    if entry.get("mode") == "sampled":
        return [_cold_read(root, base, config_id, entry, devices, labels)]
    sizes: list[int] = []
    seconds: list[float] = []
    rates: list[float] = []
    raw: list[str] = []
    method = entry.get("method")
    for device in devices:
        size, took = device.get("bytes"), _seconds(device, "seconds")
        if method == "fio":
            took = _fio_read_seconds(root / base, device) or took
        if not isinstance(size, int) or size < 0 or took is None or took <= 0:
            raise _PhaseError(f"device {device.get('path')!r}: bytes {size!r} / seconds {took!r} unusable")
        sizes.append(size)
        seconds.append(took)
        rate = _seconds(device, "mibps")
        rates.append(rate if rate is not None else size / took / MIB)
        raw.extend(_relative_file(root, base, str(name)) for name in device.get("files") or [])
    # Members of a stripe are read in parallel: the target's rate is all bytes over the
    # slowest member's time.
    wall = max(seconds)
    return [
        _prewarm_record(
            config_id,
            target,
            len(devices),
            bw_mibps=sum(sizes) / wall / MIB,
            bytes=sum(sizes),
            runtime_s=wall,
            job_bw_min_mibps=min(rates),
            job_bw_max_mibps=max(rates),
            job_runtime_min_s=min(seconds),
            job_runtime_max_s=max(seconds),
            raw=raw,
            labels=[*labels.get(target, []), *([f"prewarm:{method}"] if isinstance(method, str) else [])],
        )
    ]


def _prewarm_record(config_id: str, target: str, devices: int, **measured: Any) -> ResultRecord:
    """A pre-warm read of a target (a full read or the cold-read check): one record per target,
    its member devices read at once."""
    return ResultRecord(
        config_id=config_id,
        target_id=target,
        workload="prewarm",
        profile="prewarm",
        repetition=1,
        phase="prewarm",
        direction="read",
        engine="prewarm",
        jobs=devices,
        **measured,
    )


def _cold_read(
    root: Path,
    base: PurePosixPath,
    config_id: str,
    entry: Mapping[str, Any],
    devices: list[Mapping[str, Any]],
    labels: Mapping[str, list[str]],
) -> ResultRecord:
    """The sampled cold-read check of a target: the cold pass as the record, both passes in it."""
    target = str(entry["target"])
    check = cold_read_check(devices, entry.get("pass_seconds"), f"cold-read check of {target!r}")
    per_device = [(float(d["mibps"]) if _seconds(d, "mibps") is not None else None) for d in devices]
    rates = [rate for rate in per_device if rate is not None]
    return _prewarm_record(
        config_id,
        target,
        len(devices),
        bw_mibps=check.cold.mibps,
        bytes=check.bytes,
        ios=check.bytes // check.block_bytes,
        runtime_s=check.cold.seconds,
        job_bw_min_mibps=min(rates) if rates else None,
        job_bw_max_mibps=max(rates) if rates else None,
        raw=[_relative_file(root, base, str(name)) for d in devices for name in d.get("files") or []],
        labels=[*labels.get(target, []), "prewarm:sampled"],
        cold_read=check,
    )
