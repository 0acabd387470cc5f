"""One read path for a run: the stored run (its item, config items and result records) turned into
the run view, ``RunDetail``, which ``GET /runs/{id}`` answers and ``results --run`` renders.

The API's handler, the local command line (over the local store) and the command line against a
stack (which parses the API's JSON back into ``RunDetail``) all read a run through here, so a run
reads the same wherever it was stored: what its numbers cannot mean, each config's status, storage
options and errors, the measurements aggregated, its latency-SLA searches and how its repetitions
stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from storagebench.analysis.stats import aggregate
from storagebench.api.models import ConfigProgress, RecordHistogram, RunDetail
from storagebench.api.ports import Execution
from storagebench.core.series import ConfigRepetitions
from storagebench.store.models import RunDocument, decode_run

_CONFIG_KEEP = ("config_id", "status", "updated_at", "errors")
NOT_RECORDED = "the run is not recorded yet: Plan records it first (or refused the request)"


class RunNotFoundError(KeyError):
    """Neither the store nor Step Functions knows the run."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id


class RunSource(Protocol):
    """What reading a run needs of the results store (``workflow.ports.ResultsStore`` has it)."""

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]: ...

    def get_regressions(self, run_id: str) -> list[dict[str, Any]]: ...


def config_progress(
    config: Mapping[str, Any],
    stops: ConfigRepetitions | None,
    storage_options: Mapping[str, str] | None = None,
) -> ConfigProgress:
    """A stored config item as the run view shows it, with how its repetitions stopped and the
    storage option of each of its targets (the key its history is kept under)."""
    return ConfigProgress(
        **{k: config[k] for k in _CONFIG_KEEP if config.get(k) is not None},
        stamps={k.removeprefix("at_"): str(v) for k, v in config.items() if k.startswith("at_")},
        series=stops.series if stops is not None else [],
        steady_state=stops.steady_state if stops is not None else [],
        storage_options=dict(storage_options or {}),
    )


def _caveats(document: RunDocument) -> tuple[list[str], list[str]]:
    """What the records' labels say the numbers cannot mean, and the configs measured on emulation."""
    from storagebench.protocol.caveats import EMULATED_LABEL_PREFIX, label_caveats

    labels: dict[str, list[str]] = {}
    for record in document.records:
        labels.setdefault(record.config_id, []).extend(record.labels)
    emulated = sorted(
        cid for cid, seen in labels.items() if any(label.startswith(EMULATED_LABEL_PREFIX) for label in seen)
    )
    return label_caveats(labels), emulated


def run_view(
    run_id: str,
    stored: Mapping[str, Any],
    *,
    execution: Execution | None = None,
    regressions: list[dict[str, Any]] | None = None,
    histograms: bool = False,
) -> RunDetail:
    """The run view of ``ResultsStore.get_run``'s document of ``run_id``; ``histograms``: the
    document was read with them and the view lists them (else ``histograms`` is null)."""
    from storagebench.report.sla_searches import build_sla_limits
    from storagebench.store.repetitions import config_repetitions

    document = decode_run(stored)
    repetitions, unread = config_repetitions(document.configs)
    stops = {r.config_id: r for r in repetitions}
    options: dict[str, dict[str, str]] = {}
    for (config_id, target_id), option in sorted(document.options.items()):
        options.setdefault(config_id, {})[target_id] = option
    configs = [
        config_progress(c, stops.get(str(c.get("config_id"))), options.get(str(c.get("config_id"))))
        for c in stored.get("configs") or []
        if isinstance(c, Mapping) and c.get("config_id")
    ]
    caveats, emulated = _caveats(document)
    run = stored.get("run")
    return RunDetail(
        run_id=run_id,
        status=str(document.run.status),
        execution=execution,
        run=dict(run) if isinstance(run, Mapping) else None,  # passed through: the stored item
        configs=configs,
        results=aggregate(document.records),
        economics=dict(document.run.economics) if document.run.economics is not None else None,
        regressions=list(regressions or []),
        notes=[*document.notes, *unread],
        histograms=[h for r in document.records if (h := RecordHistogram.of(r))] if histograms else None,
        caveats=caveats,
        emulated=emulated,
        sla_searches=build_sla_limits(document.records),
    )


def not_recorded(run_id: str, execution: Execution, *, histograms: bool = False) -> RunDetail:
    """A run Step Functions started that Plan has not recorded (yet)."""
    return RunDetail(
        run_id=run_id,
        status=execution.status,
        execution=execution,
        run=None,
        configs=[],
        results=[],
        economics=None,
        regressions=[],
        notes=[NOT_RECORDED],
        histograms=[] if histograms else None,
    )


class RunReader:
    """``GET /runs/{id}`` and ``results --run``: the run from the store, with its execution when
    ``describe`` knows it (a stack's Step Functions; a local store has none to ask)."""

    def __init__(self, store: RunSource, describe: Callable[[str], Execution | None] | None = None) -> None:
        self.store = store
        self.describe = describe

    def get_run(self, run_id: str, *, histograms: bool = False) -> RunDetail:
        """The run view; ``RunNotFoundError`` when neither the store nor an execution knows it."""
        execution = self.describe(run_id) if self.describe is not None else None
        try:
            stored = self.store.get_run(run_id, histograms=histograms)
        except KeyError:
            if execution is None:
                raise RunNotFoundError(run_id) from None
            return not_recorded(run_id, execution, histograms=histograms)
        regressions = self.store.get_regressions(run_id)
        return run_view(run_id, stored, execution=execution, regressions=regressions, histograms=histograms)
