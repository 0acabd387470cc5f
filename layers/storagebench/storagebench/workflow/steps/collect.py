"""Collect: parse what the agent wrote into records, store them, their series and their flat
export (``functions/collect``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storagebench.analysis.annotate import annotate
from storagebench.analysis.series import extract_series
from storagebench.core.state import CollectSummary, ConfigState, ErrorInfo
from storagebench.export.rows import FIO_VERSION_LABEL
from storagebench.kinds import emulator_key
from storagebench.request.model import BenchmarkRequest
from storagebench.results.collect import Collection
from storagebench.results.collect import collect as collect_output
from storagebench.results.errors import ResultsError
from storagebench.workflow import interruptions
from storagebench.workflow.artifact_keys import agent_output_prefix, series_key
from storagebench.workflow.bindings import storage_option
from storagebench.workflow.exports import agent_fio_version, export_config
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.shared import item_request, with_pending_errors


def collect(state: ConfigState, services: Services) -> ConfigState:
    """Parse whatever the agent wrote into records and store them before the status changes.

    Missing or unreadable output is recorded, not raised: cleanup must still run, and a
    sibling's results are unaffected. The agent's output is read from a local copy that lives
    only for this step (on AWS a download into the function's /tmp, which a warm container keeps).
    """
    state = with_pending_errors(state)
    request = item_request(services, state.item)  # first: a request that cannot be read is the error
    if state.resources.instance_id is None:
        return _failed(state, services, ResultsError("no instance ran this config"))
    # Only the prefix of the instance that ran the config: no other instance can write it
    owner = services.agents.principal(state.resources.instance_id)
    with services.artifacts.fetched(agent_output_prefix(state.item, owner)) as directory:
        try:
            collection = collect_output(directory)
        except ResultsError as exc:
            return _failed(state, services, exc)
        return _store(state, services, request, directory, collection)


def _failed(state: ConfigState, services: Services, exc: ResultsError) -> ConfigState:
    summary = CollectSummary(status="failed", records=0, problems=[f"no usable agent output: {exc}"])
    state = interruptions.note_collected(state, None, 0)
    failed = state.model_copy(
        update={
            "collected": summary,
            "errors": [*state.errors, ErrorInfo(step="collect", error="CollectError", cause=str(exc))],
        }
    )
    services.store.put_config(failed, "COLLECTED")
    return failed


def _store(
    state: ConfigState, services: Services, request: BenchmarkRequest, directory: Path, collection: Collection
) -> ConfigState:
    """Records, series, export rows and the summary of one config's output in ``directory``."""
    item = state.item
    config = request.config(item.config_id)
    stored = 0
    by_target: dict[str, list[Any]] = {}
    labels_of: dict[str, dict[str, str]] = {}
    fio_version = agent_fio_version(directory)
    for record in annotate(collection.records, directory, config, network_ceilings=services.network_ceilings):
        by_target.setdefault(record.target_id, []).append(record)
    for target_id, records in by_target.items():
        option = (
            storage_option(config, target_id) if any(t.id == target_id for t in config.targets) else target_id
        ) + emulator_key(label for record in records for label in record.labels)
        labels = {"storage_option": option, "suite": item.suite}
        if fio_version is not None:
            labels[FIO_VERSION_LABEL] = fio_version
        labels_of[target_id] = labels
        stored += services.store.put_results(item.run_id, item.config_id, records, item.started_at, labels)
    # The IOPS/bandwidth series the report draws (knees included), small enough for any run
    series = extract_series(directory)
    if item.attempt > 1:  # a relaunch after a Spot interruption: the kept steps' series stay
        series = interruptions.merged_series(state, _optional_document(services, series_key(item)), series)
    services.artifacts.put_json(series_key(item), series)
    # The flat rows Athena reads, once the records are stored: a failed write loses no measurement
    export = export_config(
        item,
        config,
        [r for rs in by_target.values() for r in rs],
        labels_of,
        request.region,
        services.artifacts,
    )
    manifest = _manifest(directory)
    manifest_status = _manifest_status(manifest)
    ok = not collection.problems and manifest_status == "ok" and stored > 0
    summary = CollectSummary(
        status="ok" if ok else ("partial" if stored else "failed"),
        records=stored,
        problems=[*collection.problems, *export.problems],
        warnings=collection.warnings,
        agent_status=manifest_status,
        series=collection.series,
        steady_state=collection.steady_state,
    )
    errors = [*state.errors, export.error] if export.error is not None else list(state.errors)
    agent_error = _manifest_error(manifest)
    # A Spot interruption is recorded as such (interruptions), not as the config's error.
    interrupted = interruptions.current(state) is not None
    if agent_error is not None and not interrupted and not any(e.step == "agent" for e in errors):
        # The agent ended on its own terms (a node lost, a barrier timed out: it reports success with
        # the measured steps and says why it stopped); the config says it too, not only the manifest.
        errors.append(agent_error)
    state = interruptions.note_collected(state, directory, stored)  # an interrupted attempt: what it kept
    updated = state.model_copy(update={"collected": summary, "errors": errors})
    services.store.put_config(updated, "COLLECTED")
    return updated


def _optional_document(services: Services, key: str) -> dict[str, Any] | None:
    try:
        document = services.artifacts.get_json(key)
    except KeyError:
        return None
    return document if isinstance(document, dict) else None


def _manifest(directory: Any) -> dict[str, Any]:
    """The agent's manifest as it reached the artifacts ({} when missing or not a JSON object)."""
    try:
        document = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _manifest_error(manifest: dict[str, Any]) -> ErrorInfo | None:
    """The error a failed manifest names (``NodeLostError: server-0 ... stopped answering``)."""
    error = manifest.get("error")
    if manifest.get("status") != "failed" or not isinstance(error, str) or not error:
        return None
    name, _, cause = error.partition(": ")
    if not cause or not name.isidentifier():
        return ErrorInfo(step="agent", error="AgentError", cause=error[:1000])
    return ErrorInfo(step="agent", error=name, cause=cause[:1000])


def _manifest_status(manifest: dict[str, Any]) -> str | None:
    value = manifest.get("status")
    return str(value) if value is not None else None
