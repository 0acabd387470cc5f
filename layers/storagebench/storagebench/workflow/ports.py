"""What the workflow needs from the outside world, as interfaces (ports).

The steps in ``workflow.steps`` receive these and never import boto3. ``adapters.aws``
implements them with EC2, EFS, FSx, SSM, S3 and DynamoDB (the same code runs against moto in
local mode); ``adapters.local`` runs the agent on this machine and keeps artifacts on disk.
Implementations raise the errors of ``core.errors`` so the state machine can retry by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from storagebench.core.clock import Clock, SystemClock
from storagebench.core.errors import ProvisioningError
from storagebench.core.guardrails import Guardrails
from storagebench.core.regression import Regression
from storagebench.core.state import (
    AgentRun,
    ComputeStatus,
    ConfigState,
    FileSystemRef,
    FileSystemSpec,
    LaunchSpec,
    NetworkRef,
    NetworkSpec,
    Resources,
    RunSummary,
)
from storagebench.gateway.lifecycle import GatewayPorts
from storagebench.notify import LogNotifier, Notifier
from storagebench.prices.book import PriceBook
from storagebench.prices.spot import SpotPriceHistory
from storagebench.protocol.plan import Plan
from storagebench.quotas.ports import QuotaReader
from storagebench.results.records import ResultRecord


class Compute(Protocol):
    def launch(self, spec: LaunchSpec) -> Resources:
        """Start one instance with its volumes; the same client token never launches twice."""

    def status(self, resources: Resources) -> ComputeStatus:
        """Instance state, status checks, volume attachment and initialisation."""

    def terminate(self, resources: Resources, run_id: str, config_id: str) -> list[str]:
        """Terminate the config's instances (recorded or tagged) and delete their volumes. Idempotent."""

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        """Resources still carrying this run's and config's tags (not terminated or deleted)."""


class FileSystems(Protocol):
    def create(self, spec: FileSystemSpec, subnet_hint: Resources | None) -> FileSystemRef:
        """Create an EFS or FSx for Lustre file system (idempotent by creation token)."""

    def status(self, ref: FileSystemRef) -> str:
        """creating | available | failed."""

    def delete(self, ref: FileSystemRef) -> None:
        """Delete (EFS: mount targets first); raises ResourceBusyError while that is under way."""

    def find(self, run_id: str, config_id: str) -> list[FileSystemRef]:
        """File systems still carrying this run's and config's tags (not being deleted)."""


class Network(Protocol):
    def open(self, spec: NetworkSpec) -> NetworkRef:
        """Create the config's security group (its nodes reach each other on ``spec.ingress`` alone)
        and placement group, tagged; a retry finds what the first call created."""

    def close(self, ref: NetworkRef) -> list[str]:
        """Delete the ref's groups (already gone is done); returns what was deleted. Raises
        ResourceBusyError while an instance still holds one (retried after its termination)."""

    def find(self, run_id: str, config_id: str) -> list[NetworkRef]:
        """The groups still carrying this run's and config's tags (an open whose answer was lost)."""

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        """Security groups and placement groups still carrying this run's and config's tags."""


class NoNetwork:
    """The network of a deployment that creates none: it refuses to open one, so it has none to
    find or close (tests and fakes that build ``Services`` without a network)."""

    def open(self, spec: NetworkSpec) -> NetworkRef:
        raise ProvisioningError(
            f"config {spec.config_id}: this deployment has no network port, so it cannot create the "
            "security group its nodes need (wire Services.network)"
        )

    def close(self, ref: NetworkRef) -> list[str]:
        if ref.security_group_id or ref.placement_group:
            raise ProvisioningError(f"no network port to delete {ref.model_dump(exclude_none=True)}")
        return []

    def find(self, run_id: str, config_id: str) -> list[NetworkRef]:
        return []

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        return []


class Agents(Protocol):
    def online(self, resources: Resources) -> bool:
        """Can a command reach the machine (SSM agent online; locally: the agent can run)."""

    def principal(self, instance_id: str) -> str:
        """The instance's identity to IAM ("<role id>:<instance id>"): it names the one prefix of
        the artifacts the instance can write (``artifact_keys.instance_prefix``)."""

    def start(
        self,
        state: ConfigState,
        plan: Plan,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> AgentRun:
        """Run the agent with this plan, its output going under ``output_prefix``; the machine
        reports back on the task token, which it reads from its own prefix."""

    def start_node(
        self, state: ConfigState, name: str, plan: Plan, output_prefix: str, timeout_s: int
    ) -> AgentRun:
        """Run the agent with ``plan`` on another machine of the config (``state.resources`` is it:
        a node or an extra client); nothing reports on a task token for it."""

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        """Stop the config's agent if it still runs; returns what its machine still holds."""


class Artifacts(Protocol):
    def put_json(self, key: str, document: Any) -> str:
        """Store a JSON document; returns its URI."""

    def put_text(self, key: str, text: str, content_type: str) -> str:
        """Store a text document (a report); returns its URI."""

    def get_json(self, key: str) -> Any:
        """Read a JSON document; raises KeyError when absent."""

    def fetched(self, prefix: str) -> AbstractContextManager[Path]:
        """A local directory holding everything under the prefix for the ``with`` block: a
        download (remote artifacts) is removed when the block ends, so a warm Lambda's /tmp
        does not fill up run after run."""

    def uri(self, key: str) -> str:
        """The address a machine uses to reach a key (s3://... or a local path)."""


class ResultsStore(Protocol):
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
        """Record the run as RUNNING (idempotent) before anything is launched, with the upper bound
        of its cost that the stack's budget counts while it runs."""

    def claim_occurrence(self, occurrence: str, run_id: str, claimed_at: str) -> str:
        """Claim a scheduled occurrence (``run_ids.occurrence_key``) for this run with a conditional
        write; returns the run holding it: this one (also on a retry), or the one that claimed it
        first (this run's refusal is then recorded on the claim)."""

    def mark_stopping(self, run_id: str, stopped_at: str) -> dict[str, Any] | None:
        """RUNNING -> STOPPING (a conditional write); the run item as it now is, or None when the run
        is not recorded or not RUNNING."""

    def run_status(self, run_id: str) -> str | None:
        """The run's status from a strongly consistent read; None when it is not recorded."""

    def put_config(self, state: ConfigState, status: str) -> None:
        """Record a config's progress or end, with its errors (idempotent per status)."""

    def put_results(
        self,
        run_id: str,
        config_id: str,
        records: list[ResultRecord],
        started_at: str,
        labels: dict[str, str],
    ) -> int:
        """Store measured records (idempotent per record key); returns how many are stored."""

    def finish_run(self, summary: RunSummary) -> None:
        """Record the run's final status."""

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
        """The run, its configs and results (one query), as the stored document (the API's body);
        domain readers decode it once with ``store.models.decode_run``. Results come without their
        latency histograms unless ``histograms`` asks for them (the report's charts: one more query)."""

    def series_digests(self, suite: str, since: str, until: str) -> list[dict[str, Any]]:
        """Every series value of the suite's runs started in [since, until] (sort-key bounds), for
        the regression check: one query whatever the number of series (``store.keys``)."""

    def get_run_page(
        self, run_id: str, cursor: str | None = None, limit: int = 200
    ) -> tuple[dict[str, Any], str | None]:
        """One page of the run (run item first), its configs, results and regression verdicts, and the
        cursor of the next page (None at the end); KeyError for an unknown run, ValueError for a
        cursor that is not one of this query's."""

    def list_runs_page(
        self, suite: str, limit: int = 10, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a suite's runs, newest first, and the next page's cursor (None at the end)."""

    def runs_in_progress_page(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the runs still RUNNING, newest first, and the next page's cursor."""

    def spend_in_progress(self) -> tuple[float, int]:
        """The cost upper bounds of the runs in progress, summed, and how many runs there are."""

    def reserve_daily_spend(self, day: str, usd: float, cap_usd: float) -> tuple[bool, float]:
        """Add ``usd`` to the UTC day's spend if the total stays within ``cap_usd`` (atomically);
        (reserved?, the day's total)."""

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Every repetition of one series from runs started in [since, until): dicts of started_at,
        run_id, config_id, repetition, labels and record (only ``fields`` of it, when given),
        newest first (one query); ``store.models.HistoryPoint.decode`` reads one."""

    def metric_history_page(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Sequence[str] | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of ``metric_history`` and the next page's cursor."""

    def record_regressions(self, run_id: str, regressions: Sequence[Regression | Mapping[str, Any]]) -> int:
        """Keep the run's regression verdicts (idempotent); returns how many items hold them."""

    def get_regressions(self, run_id: str) -> list[dict[str, Any]]:
        """The regression verdicts recorded for a run."""

    def record_economics(self, run_id: str, summary: Mapping[str, Any]) -> None:
        """Keep the run's cost and comparison summary on the run item (pattern 2 shows it)."""


# ------------------------------------------------------------------------ the ports together


@dataclass(frozen=True)
class GatewayServices:
    """The gateway ports and where shares write: the stack's bucket and the role the gateway uses."""

    ports: GatewayPorts
    share_bucket: str
    role_arn: str


# Provision and CheckReady (the steps that create resources) run at most their Lambda Timeout
# (template.yaml: 120 s) after the execution stopped: Step Functions does not cancel an invocation.
# 30 s more for EC2's tag filters to list what they launched last (a template test keeps the sum).
IN_FLIGHT_S = 150.0


def snapshot_prices(region: str) -> PriceBook:
    """The bundled, dated price snapshot (local mode, tests, and AWS when the API is not wanted)."""
    from storagebench.prices.snapshot import SnapshotPriceBook

    return SnapshotPriceBook(region)


@dataclass
class Services:
    """The ports a step may use, built once per Lambda container (or once for local mode)."""

    compute: Compute
    filesystems: FileSystems
    agents: Agents
    artifacts: Artifacts
    store: ResultsStore
    guardrails: Guardrails = field(default_factory=Guardrails)
    stack: str = "storagebench"
    region: str = "us-east-1"
    clock: Clock = field(default_factory=SystemClock)
    prices: Callable[[str], PriceBook] = snapshot_prices
    # Spot price history by region (DescribeSpotPriceHistory): what a Spot instance paid. None: Spot
    # instances are priced on-demand, the upper bound, and the run's economics say so.
    spot_prices: Callable[[str], SpotPriceHistory] | None = None
    notifier: Notifier = field(default_factory=LogNotifier)  # SNS on AWS, a file locally
    gateways: GatewayServices | None = None  # Storage Gateway on AWS; local mode has none
    network: Network = field(default_factory=NoNetwork)  # a config's own security and placement groups
    # The account's EC2 vCPU quotas (Service Quotas on AWS): Plan refuses a run whose vCPUs at once
    # exceed one. None: not checked (local mode, which launches nothing on AWS).
    quotas: QuotaReader | None = None
    # Whether the instances' network is AWS's (their catalog bandwidth holds results to it): local
    # mode's instances share this machine's loopback, so storage reached over it is not judged.
    network_ceilings: bool = True
    # How long after a stop a launching step may still be running: SweepRun sweeps again then.
    in_flight_s: float = IN_FLIGHT_S
    sleep: Callable[[float], None] = time.sleep
