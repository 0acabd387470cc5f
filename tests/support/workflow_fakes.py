"""In-memory ports for the workflow steps: no AWS, no moto, no network.

Shared by ``tests/unit/workflow`` (through its conftest) and ``tests/unit/functions`` (which
loads this file by path). Every fake records what it was asked so a test can check the calls,
and behaves like the real port where the steps depend on it: launches are idempotent by client
token, file systems by creation token, ``find`` answers by tag, records are counted.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from storagebench.core.errors import ProvisioningError, ResourceBusyError
from storagebench.core.guardrails import Guardrails
from storagebench.core.state import (
    AgentRun,
    ComputeStatus,
    ConfigState,
    FileSystemRef,
    FileSystemSpec,
    LaunchSpec,
    LaunchVolume,
    NetworkRef,
    NetworkSpec,
    Resources,
    RunSummary,
    VolumeRef,
)
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.protocol.plan import Plan
from storagebench.results.records import ResultRecord
from storagebench.workflow.artifact_keys import agent_output_prefix
from storagebench.workflow.ports import Services

START = datetime(2026, 11, 21, 17, 0, 0, tzinfo=UTC)
START_ISO = "2026-11-21T17:00:00Z"
STACK = "sb-test"
REGION = "us-east-1"


# ---------------------------------------------------------------------------- requests

ALPHA: dict[str, Any] = {
    "id": "alpha",
    "instance_type": "c5.4xlarge",
    "targets": [
        {"id": "data", "kind": "ebs", "type": "gp3", "size_gib": 100, "iops": 4000, "count": 2},
        {"id": "shared", "kind": "efs", "storage_gib_hint": 50},  # priced, else a lower bound
        {"id": "scratch", "kind": "fsx_lustre", "storage_capacity_gib": 1200, "stripe_count": 4},
    ],
}
BETA: dict[str, Any] = {
    "id": "beta",
    "instance_type": "m7g.large",
    "targets": [
        {"kind": "ebs", "type": "gp2", "size_gib": 50},
        {"id": "share", "kind": "nfs", "server": "10.0.0.5", "export": "/export", "nfs_version": "4.1"},
        {"id": "dir", "kind": "local", "path": "/mnt/bench"},
    ],
}
GAMMA: dict[str, Any] = {
    "id": "gamma",
    "instance_type": "i3en.large",
    "targets": [{"id": "nvme", "kind": "instance_store"}],
}
REQUEST: dict[str, Any] = {
    "name": "suite-a",
    "region": REGION,
    "configs": [ALPHA, BETA, GAMMA],
    "workloads": [{"profile": "std-randread-4k", "scale": 0.01}],
    "repetitions": 1,
    "max_concurrency": 2,
    "timing": {"ready_poll_s": 5, "command_poll_s": 60, "command_timeout_h": 2, "max_run_hours": 6},
}


def request_doc(**top: Any) -> dict[str, Any]:
    """A fresh, valid request with three configs (every target kind); ``top`` overrides keys."""
    document = copy.deepcopy(REQUEST)
    document.update(copy.deepcopy(top))
    return document


# ---------------------------------------------------------------------------- ports


@dataclass
class FakeClock:
    moment: datetime = START

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def attached(volume: LaunchVolume, volume_id: str | None, **fields: Any) -> VolumeRef:
    """The volume a launch attaches for ``volume`` of its spec, under ``volume_id``."""
    spec = volume.model_dump(include={"target_id", "member", "device_name", "volume_type", "size_gib"})
    return VolumeRef(**spec, volume_id=volume_id, **fields)


@dataclass
class FakeCompute:
    """One instance per client token; volumes get ids unless ``hide_volume_ids``."""

    status_value: ComputeStatus = field(
        default_factory=lambda: ComputeStatus(
            instance_state="running", status_checks_ok=True, volumes_in_use=True
        )
    )
    hide_volume_ids: bool = False
    leftover_ids: list[str] = field(default_factory=list)
    launches: list[LaunchSpec] = field(default_factory=list)
    instances: dict[str, Resources] = field(default_factory=dict)  # by client token
    status_calls: int = 0
    terminated: list[tuple[Resources, str, str]] = field(default_factory=list)
    leftover_calls: list[tuple[str, str]] = field(default_factory=list)

    def launch(self, spec: LaunchSpec) -> Resources:
        self.launches.append(spec)
        if spec.client_token not in self.instances:
            number = len(self.instances) + 1
            volumes = [
                attached(
                    v, None if self.hide_volume_ids else f"vol-{number:02d}{position:02d}", state="in-use"
                )
                for position, v in enumerate(spec.volumes)
            ]
            self.instances[spec.client_token] = Resources(
                instance_id=f"i-{number:04d}", volumes=volumes, launched_at=START_ISO
            )
        return self.instances[spec.client_token].model_copy(deep=True)

    def status(self, resources: Resources) -> ComputeStatus:
        self.status_calls += 1
        return self.status_value

    def terminate(self, resources: Resources, run_id: str, config_id: str) -> list[str]:
        self.terminated.append((resources, run_id, config_id))
        held = [resources.instance_id] if resources.instance_id else []
        return [*held, *(str(v.volume_id) for v in resources.volumes if v.volume_id)]

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        self.leftover_calls.append((run_id, config_id))
        return list(self.leftover_ids)


@dataclass
class FakeFileSystems:
    """Idempotent by creation token (as EFS is); ``find`` answers by the run and config tags."""

    states: dict[str, str] = field(default_factory=dict)  # file system id -> creating|available|failed
    busy: set[str] = field(default_factory=set)  # delete raises ResourceBusyError
    stuck: set[str] = field(default_factory=set)  # delete returns but the file system stays
    specs: list[FileSystemSpec] = field(default_factory=list)
    by_token: dict[str, FileSystemRef] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    live: dict[str, FileSystemRef] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)

    def create(self, spec: FileSystemSpec, subnet_hint: Resources | None) -> FileSystemRef:
        self.specs.append(spec)
        if spec.creation_token not in self.by_token:
            fs_id = f"fs-{len(self.by_token) + 1:04d}"
            fsx = spec.kind == "fsx_lustre"
            ref = FileSystemRef(
                target_id=spec.target_id,
                kind=spec.kind,
                file_system_id=fs_id,
                dns_name=f"{fs_id}.fsx.{REGION}.amazonaws.com" if fsx else None,
                mount_name="abcdefgh" if fsx else None,
            )
            self.by_token[spec.creation_token] = ref
            self.tags[fs_id] = dict(spec.tags)
            self.live[fs_id] = ref
            self.states.setdefault(fs_id, "available")
        return self.by_token[spec.creation_token].model_copy(deep=True)

    def adopt(self, ref: FileSystemRef, run_id: str, config_id: str) -> None:
        """A file system carrying the config's tags that no state remembers (a lost answer)."""
        self.live[ref.file_system_id] = ref
        self.tags[ref.file_system_id] = {TAG_RUN: run_id, TAG_CONFIG: config_id}

    def status(self, ref: FileSystemRef) -> str:
        return self.states.get(ref.file_system_id, "available")

    def delete(self, ref: FileSystemRef) -> None:
        if ref.file_system_id in self.busy:
            raise ResourceBusyError(f"mount targets of {ref.file_system_id} are still being deleted")
        self.deleted.append(ref.file_system_id)
        if ref.file_system_id not in self.stuck:
            self.live.pop(ref.file_system_id, None)

    def find(self, run_id: str, config_id: str) -> list[FileSystemRef]:
        return [
            ref.model_copy(deep=True)
            for fs_id, ref in self.live.items()
            if self.tags.get(fs_id, {}).get(TAG_RUN) == run_id
            and self.tags.get(fs_id, {}).get(TAG_CONFIG) == config_id
        ]


@dataclass
class FakeNetwork:
    """The config's security group, one per run and config (EC2 finds it by name on a retry);
    ``find`` and ``leftovers`` answer from the groups not yet closed."""

    opened: list[NetworkSpec] = field(default_factory=list)
    closed: list[NetworkRef] = field(default_factory=list)
    live: dict[tuple[str, str], str] = field(default_factory=dict)  # (run, config) -> group id
    group_id: str | None = None  # every group's id, when a test names it

    def open(self, spec: NetworkSpec) -> NetworkRef:
        self.opened.append(spec)
        key = (spec.run_id, spec.config_id)
        self.live.setdefault(key, self.group_id or f"sg-{len(self.live) + 1:04d}")
        return NetworkRef(security_group_id=self.live[key], placement_group=None)

    def close(self, ref: NetworkRef) -> list[str]:
        self.closed.append(ref)
        self.live = {k: v for k, v in self.live.items() if v != ref.security_group_id}
        return [ref.security_group_id or str(ref.placement_group)]

    def find(self, run_id: str, config_id: str) -> list[NetworkRef]:
        group = self.live.get((run_id, config_id))
        return [NetworkRef(security_group_id=group)] if group else []

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        group = self.live.get((run_id, config_id))
        return [group] if group else []


@dataclass
class StartCall:
    state: ConfigState
    plan: Plan
    output_prefix: str
    task_token: str
    heartbeat_s: int
    timeout_s: int


@dataclass
class FakeAgents:
    online_value: bool = True
    held: list[str] = field(default_factory=list)  # what stop() reports the machine still holds
    online_calls: int = 0
    starts: list[StartCall] = field(default_factory=list)
    node_starts: list[tuple[str, ConfigState, Plan, str]] = field(default_factory=list)
    stops: list[tuple[str, str, Resources]] = field(default_factory=list)

    def online(self, resources: Resources) -> bool:
        self.online_calls += 1
        return self.online_value

    def principal(self, instance_id: str) -> str:
        return f"AROAFAKEROLE:{instance_id}"

    def start(
        self,
        state: ConfigState,
        plan: Plan,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> AgentRun:
        self.starts.append(StartCall(state, plan, output_prefix, task_token, heartbeat_s, timeout_s))
        return AgentRun(
            command_id=f"cmd-{len(self.starts)}",
            plan_key=f"{state.item.artifacts_prefix}plan.json",
            output_prefix=output_prefix,
            started_at=START_ISO,
        )

    def start_node(
        self, state: ConfigState, name: str, plan: Plan, output_prefix: str, timeout_s: int
    ) -> AgentRun:
        self.node_starts.append((name, state, plan, output_prefix))
        return AgentRun(
            command_id=f"cmd-{name}",
            plan_key=f"{state.item.artifacts_prefix}plan-{name}.json",
            output_prefix=output_prefix,
            started_at=START_ISO,
        )

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        self.stops.append((run_id, config_id, resources))
        return list(self.held)


class FakeArtifacts:
    """JSON documents in a dict; ``fetch`` hands out ``root/<prefix>`` (a test writes there)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.documents: dict[str, Any] = {}
        self.texts: dict[str, tuple[str, str]] = {}
        self.fetches: list[str] = []  # the prefixes read, in order
        self.open_fetches = 0  # blocks not yet left: a step must leave every one

    def put_json(self, key: str, document: Any) -> str:
        self.documents[key] = json.loads(json.dumps(document))  # what S3 would keep
        return self.uri(key)

    def put_text(self, key: str, text: str, content_type: str) -> str:
        self.texts[key] = (text, content_type)
        return self.uri(key)

    def get_json(self, key: str) -> Any:
        if key not in self.documents:
            raise KeyError(key)
        return copy.deepcopy(self.documents[key])

    @contextmanager
    def fetched(self, prefix: str) -> Iterator[Path]:
        self.fetches.append(prefix)
        self.open_fetches += 1
        try:
            yield self.root / prefix
        finally:
            self.open_fetches -= 1

    def uri(self, key: str) -> str:
        return f"mem://artifacts/{key}"


@dataclass
class PutResults:
    run_id: str
    config_id: str
    records: list[ResultRecord]
    started_at: str
    labels: dict[str, str]


@dataclass
class FakeStore:
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    configs: list[tuple[ConfigState, str]] = field(default_factory=list)
    results: list[PutResults] = field(default_factory=list)
    finished: list[RunSummary] = field(default_factory=list)
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)  # occurrence -> run_id, refused

    def claim_occurrence(self, occurrence: str, run_id: str, claimed_at: str) -> str:
        claim = self.claims.setdefault(occurrence, {"run_id": run_id, "at": claimed_at, "refused": []})
        if claim["run_id"] != run_id:
            claim["refused"].append(run_id)
        return str(claim["run_id"])

    def mark_stopping(self, run_id: str, stopped_at: str) -> dict[str, Any] | None:
        run = self.runs.get(run_id)
        if run is None or run.get("status") != "RUNNING":
            return None
        run.update(status="STOPPING", stopping_at=stopped_at)
        return copy.deepcopy(run)

    def run_status(self, run_id: str) -> str | None:
        return self.runs[run_id].get("status") if run_id in self.runs else None

    def start_run(
        self,
        run_id: str,
        suite: str,
        request: dict[str, Any],
        started_at: str,
        expires_at: str,
        configs: list[str],
        cost_bound_usd: float | None = None,
    ) -> None:
        self.runs[run_id] = {
            "run_id": run_id,
            "suite": suite,
            "request": request,
            "started_at": started_at,
            "expires_at": expires_at,
            "configs": list(configs),
            "status": "RUNNING",
        }

    def put_config(self, state: ConfigState, status: str) -> None:
        self.configs.append((state.model_copy(deep=True), status))

    def put_results(
        self,
        run_id: str,
        config_id: str,
        records: list[ResultRecord],
        started_at: str,
        labels: dict[str, str],
    ) -> int:
        self.results.append(PutResults(run_id, config_id, list(records), started_at, dict(labels)))
        return len(records)

    def finish_run(self, summary: RunSummary) -> None:
        self.finished.append(summary)
        self.runs.setdefault(summary.run_id, {})["status"] = summary.status

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
        """The same shape as the DynamoDB store: the run, its configs, its results (histograms
        always: in memory they cost nothing)."""
        if run_id not in self.runs:
            raise KeyError(run_id)
        results = [
            {
                "run_id": run_id,
                "config_id": put.config_id,
                "started_at": put.started_at,
                "labels": dict(put.labels),
                "record": record.model_dump(mode="json"),
            }
            for put in self.results
            if put.run_id == run_id
            for record in put.records
        ]
        latest: dict[str, dict[str, Any]] = {}  # one item per config, as the table keeps it
        for s, status in self.configs:
            if s.item.run_id == run_id:
                latest[s.item.config_id] = {
                    "config_id": s.item.config_id,
                    "status": status,
                    "state": s.model_dump(mode="json"),
                }
        configs = list(latest.values())
        return {"run": copy.deepcopy(self.runs[run_id]), "configs": configs, "results": results}

    def statuses(self, config_id: str) -> list[str]:
        return [status for state, status in self.configs if state.item.config_id == config_id]

    # The read side regression detection uses, in memory; cursors are offsets.
    regressions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @staticmethod
    def _page(items: list[Any], limit: int, cursor: str | None) -> tuple[list[Any], str | None]:
        start = int(cursor) if cursor else 0
        end = start + limit
        return items[start:end], (str(end) if end < len(items) else None)

    def get_run_page(
        self, run_id: str, cursor: str | None = None, limit: int = 200
    ) -> tuple[dict[str, Any], str | None]:
        whole = self.get_run(run_id)
        return {**whole, "regressions": list(self.regressions.get(run_id, []))}, None

    def list_runs_page(
        self, suite: str, limit: int = 10, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        runs = [copy.deepcopy(r) for r in self.runs.values() if r.get("suite") == suite]
        runs.sort(key=lambda r: (r.get("started_at", ""), r.get("run_id", "")), reverse=True)
        return self._page(runs, limit, cursor)

    def runs_in_progress_page(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        runs = [copy.deepcopy(r) for r in self.runs.values() if r.get("status") == "RUNNING"]
        runs.sort(key=lambda r: (r.get("started_at", ""), r.get("run_id", "")), reverse=True)
        return self._page(runs, limit, cursor)

    def metric_history_page(
        self,
        storage_option: str,
        workload: str,
        variant: Any,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Any = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        if not isinstance(variant, str):
            variant = ",".join(f"{k}={v}" for k, v in sorted(variant.items()))
        variant = variant or "-"
        points = []
        for put in self.results:
            if put.labels.get("storage_option") != storage_option:
                continue
            if suite is not None and put.labels.get("suite") != suite:
                continue
            if not (since <= put.started_at and (until is None or put.started_at < until)):
                continue
            for record in put.records:
                spelled = ",".join(f"{k}={v}" for k, v in sorted(record.variant.items())) or "-"
                if (record.workload, spelled, record.phase, record.direction) != (
                    workload,
                    variant,
                    phase,
                    direction,
                ):
                    continue
                points.append(
                    {
                        "started_at": put.started_at,
                        "run_id": put.run_id,
                        "config_id": put.config_id,
                        "repetition": record.repetition,
                        "labels": dict(put.labels),
                        "record": record.model_dump(mode="json"),
                    }
                )
        points.sort(key=lambda p: (p["started_at"], p["run_id"], p["repetition"]), reverse=newest_first)
        return self._page(points, limit, cursor)

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Any,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Any = None,
    ) -> list[dict[str, Any]]:
        points, _ = self.metric_history_page(
            storage_option,
            workload,
            variant,
            phase,
            direction,
            since,
            until,
            limit,
            None,
            suite=suite,
            newest_first=newest_first,
        )
        return points

    def series_digests(self, suite: str, since: str, until: str) -> list[dict[str, Any]]:
        """As the DynamoDB store's digest: one document per put of the suite's runs in the range
        (runs recorded here carry no ``layout``, so the regression check reads per series)."""
        return [
            {
                "run_id": put.run_id,
                "config_id": put.config_id,
                "started_at": put.started_at,
                "storage_option": put.labels["storage_option"],
                "series": [
                    [
                        r.workload,
                        ",".join(f"{k}={v}" for k, v in sorted(r.variant.items())) or "-",
                        r.phase,
                        r.direction,
                        r.group,
                        r.repetition,
                        {"iops": r.iops, "bw_mibps": r.bw_mibps},
                    ]
                    for r in put.records
                ],
            }
            for put in self.results
            if put.labels.get("suite") == suite
            and put.labels.get("storage_option")
            and since <= f"{put.started_at}#{put.run_id}" <= until
        ]

    def record_regressions(self, run_id: str, regressions: Any) -> int:
        self.regressions[run_id] = [
            r if isinstance(r, dict) else r.model_dump(mode="json") for r in regressions
        ]
        return 1

    def get_regressions(self, run_id: str) -> list[dict[str, Any]]:
        return list(self.regressions.get(run_id, []))

    def record_economics(self, run_id: str, summary: Any) -> None:
        if run_id not in self.runs:
            raise ProvisioningError(f"run {run_id} was never recorded; cannot record its costs")
        self.runs[run_id]["economics"] = dict(summary)


@dataclass
class Fakes:
    """The services and the fakes behind them, typed (Services holds them as Protocols)."""

    services: Services
    compute: FakeCompute
    filesystems: FakeFileSystems
    agents: FakeAgents
    artifacts: FakeArtifacts
    store: FakeStore
    clock: FakeClock
    network: FakeNetwork


def make_fakes(root: Path, guardrails: Guardrails | None = None) -> Fakes:
    compute, filesystems, agents = FakeCompute(), FakeFileSystems(), FakeAgents()
    artifacts, store, clock = FakeArtifacts(root), FakeStore(), FakeClock()
    network = FakeNetwork()
    services = Services(
        compute=compute,
        filesystems=filesystems,
        agents=agents,
        artifacts=artifacts,
        store=store,
        guardrails=guardrails or Guardrails(),
        stack=STACK,
        region=REGION,
        clock=clock,
        network=network,
    )
    return Fakes(services, compute, filesystems, agents, artifacts, store, clock, network)


# ---------------------------------------------------------------------------- agent output


def write_agent_output(
    directory: Path,
    config_id: str,
    targets: list[str],
    status: str = "ok",
    failed_target: str | None = None,
) -> Path:
    """An agent output directory: one timed command phase per target (one record each).

    ``failed_target`` adds a failed step on that target (a problem, no record).
    """
    steps: list[dict[str, Any]] = []
    for position, target in enumerate(targets):
        step_id = f"w.{target}.r1"
        phase_dir = directory / "steps" / step_id / "run"
        phase_dir.mkdir(parents=True)
        (phase_dir / "timing.json").write_text(json.dumps({"real_s": 2.0 + position}))
        steps.append(
            {
                "id": step_id,
                "workload": "w",
                "profile": "command",
                "variant": {},
                "repetition": 1,
                "target": target,
                "status": "ok",
                "phases": [
                    {"name": "run", "engine": "command", "dir": f"steps/{step_id}/run", "status": "ok"}
                ],
            }
        )
    if failed_target is not None:
        steps.append(
            {
                "id": f"w.{failed_target}.r2",
                "workload": "w",
                "profile": "command",
                "repetition": 2,
                "target": failed_target,
                "status": "failed",
                "phases": [
                    {"name": "run", "engine": "command", "status": "failed", "rc": 1, "error": "exit 1"}
                ],
            }
        )
    manifest = {
        "manifest_version": 1,
        "run_id": "run-1",
        "config_id": config_id,
        "status": status,
        "targets": [{"id": t} for t in targets],
        "steps": steps,
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def agent_output_dir(fakes: Any, state: ConfigState, instance_id: str | None = None) -> Path:
    """Where the instance that ran the config (or another one) writes its output."""
    principal = fakes.services.agents.principal(instance_id or state.resources.instance_id)
    return Path(fakes.artifacts.root) / agent_output_prefix(state.item, principal)
