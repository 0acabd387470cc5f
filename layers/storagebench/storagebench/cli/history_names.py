"""``results --config gp3 --workload std-randread-4k``: the human names of a history, resolved.

A storage option's history is keyed by ``instance/kind:parameters`` (``c5.4xlarge/ebs:gp3:100GiB:xfs``),
which nobody types. The request a run ran names its configs and workloads; the same function the
workflow labels results with (``workflow.bindings.storage_option``) turns a config id into its key.
A name that matches nothing is an error listing the names that would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class UnknownNameError(ValueError):
    """A --config, --target or --workload naming nothing in the run's request (listing the choices)."""


@dataclass(frozen=True)
class ResolvedSeries:
    run_id: str
    config_id: str
    storage_option: str
    workload: str


def resolve_series(
    run: Mapping[str, Any], config_id: str, workload: str, target_id: str | None = None
) -> ResolvedSeries:
    """The storage option of ``config_id`` (one target, or ``target_id``) and the workload id, as the
    request of ``run`` (a stored run item) names them."""
    from storagebench.request import RequestError, parse_request
    from storagebench.workflow.bindings import storage_option

    run_id = str(run.get("run_id"))
    document = run.get("request")
    if not isinstance(document, Mapping):
        raise UnknownNameError(f"run {run_id} holds no request to read the names from: give --storage")
    try:
        request = parse_request(dict(document))
    except RequestError as exc:
        raise UnknownNameError(
            f"the request of run {run_id} no longer reads ({exc}): give --storage"
        ) from None
    configs = {c.id: c for c in request.configs}
    if config_id not in configs:
        raise UnknownNameError(
            f"--config {config_id!r} names no config of run {run_id}: choose one of {', '.join(configs)}"
        )
    config = configs[config_id]
    targets = [str(t.id) for t in config.targets]
    if target_id is None and len(targets) > 1:
        raise UnknownNameError(
            f"config {config_id} of run {run_id} has {len(targets)} targets: choose one with --target "
            f"({', '.join(targets)})"
        )
    chosen = target_id or targets[0]
    if chosen not in targets:
        raise UnknownNameError(
            f"--target {chosen!r} names no target of config {config_id}: choose one of {', '.join(targets)}"
        )
    workloads = [w.id for w in request.resolved_workloads()]
    if workload not in workloads:
        raise UnknownNameError(
            f"--workload {workload!r} names no workload of run {run_id}: choose one of {', '.join(workloads)}"
        )
    return ResolvedSeries(run_id, config_id, storage_option(config, chosen), workload)
