"""The agent on local instances, through the same SSM adapter and document as on AWS.

``LocalSsmAgents`` *is* ``SsmAgents``: it stores the plan and the agent zipapp in the bucket and
sends the stack's document with the task token; the local SSM agent
(:mod:`storagebench_local.ssm.agent`) runs that document on a local instance, whose shell then
fetches, verifies, runs, uploads and calls back exactly as on EC2. What differs is the machine:

* ``online``: the instance is booted here (its metadata service started) instead of asking SSM
  whether an agent registered;
* the plan's EBS targets stand on emulated volumes of this machine (loop device and throttle at
  the volume type's envelope); kinds that need AWS are refused with the reason;
* ``stop`` cancels the instance's command through the local SSM agent (moto has no
  CancelCommand) and sweeps what the agent left on this machine, which on AWS leaves with the
  instance.

Faults for the fault matrix act on the instance's world or the command's parameters, never on
the document: a wrong agent or plan digest, a package manager that fails, an output bucket that
does not exist or leads elsewhere, a Step Functions endpoint that refuses the callback, a plan
that never ends, a machine that dies.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.ssm import SsmAgents
from storagebench.agent.sweep import sweep
from storagebench.core.errors import AgentError
from storagebench.core.state import AgentRun, ConfigState, Resources
from storagebench.core.tags import TAG_CONFIG
from storagebench.planning.local import LocalOptions
from storagebench.protocol.plan import Plan
from storagebench_local.adapters.faults import SPOT_READY_POINT, Fault, FaultPlan
from storagebench_local.adapters.instance_faults import CallbackRefusal, broken_packages
from storagebench_local.adapters.local_plan import check_machine, rebind
from storagebench_local.adapters.spot_faults import (
    NOTICE_STAGES,
    SpotNoticeArming,
    reclaim,
    scratch_directories,
)
from storagebench_local.ssm.agent import LocalSsmAgent
from storagebench_local.ssm.instance import SYSTEM_PATH

WRONG_DIGEST = "0" * 64
LOST_OUTPUT = "lost-output/"  # where the output goes when the fault says it never arrives
NO_SUCH_BUCKET = "storagebench-no-such-bucket"  # an output bucket the upload cannot reach
HANG_PLAN_S = 86_400
NODE_READY_WAIT_S = 120.0  # a node fault waits this long for the node to say ready


class LocalSsmAgents(SsmAgents):
    def __init__(
        self,
        ssm: Any,
        s3: Any,
        settings: AwsSettings,
        artifacts: S3Artifacts,
        host: LocalSsmAgent,
        options: LocalOptions,
        mount_root: str,
        volumes_dir: str,
        faults: FaultPlan | None = None,
        presigner: Any | None = None,
        sfn: Any | None = None,
    ) -> None:
        super().__init__(ssm, s3, settings, artifacts, presigner=presigner)
        self.host = host
        self.refusal = CallbackRefusal(sfn) if sfn is not None else None
        self.options = options
        self.mount_root = mount_root
        self.volumes_dir = volumes_dir
        self.faults = faults or FaultPlan()
        self._pending: dict[str, Fault] = {}  # task token -> the fault its command carries
        self._configs: dict[str, tuple[str, str]] = {}  # command id -> (run id, config id)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ readiness

    def online(self, resources: Resources) -> bool:
        check_machine(("fio", "losetup", "unshare"))
        if resources.instance_id is None:
            return False
        armed = any(f.point == SPOT_READY_POINT for f in self.faults.faults)
        if armed and self.faults.take(SPOT_READY_POINT, self._config_of(resources.instance_id)):
            self._reclaim(resources.instance_id)  # CheckReady's next poll finds it reclaimed for Spot
            return False
        try:
            self.host.boot(resources.instance_id)
        except Exception as exc:
            raise AgentError(f"local instance {resources.instance_id} cannot boot: {exc}") from exc
        return True

    # ------------------------------------------------------------------ running

    def start(
        self,
        state: ConfigState,
        plan: Plan,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> AgentRun:
        item = state.item
        self.faults.raise_if("agents.start", item.config_id)
        local_plan = rebind(plan, self.options, nfs_client=self._has_nfs_client(state.resources.instance_id))
        fault = self.faults.take("agent.run", item.config_id)
        if fault is not None:
            with self._lock:
                self._pending[task_token] = fault
            if fault.kind == "command_timed_out":  # the agent runs until the command's timeout
                local_plan = _hanging(local_plan)
        if state.resources.instance_id is not None:
            self.host.boot(state.resources.instance_id).overrides = self._world(fault)
        run = super().start(state, local_plan, output_prefix, task_token, heartbeat_s, timeout_s)
        if state.resources.instance_id is not None and run.command_id is not None:
            with self._lock:
                self._configs[run.command_id] = (item.run_id, item.config_id)
            self.host.deliver(run.command_id, state.resources.instance_id)
        if (
            fault is not None
            and fault.kind in ("instance_died", "spot_reclaimed")
            and state.resources.instance_id
        ):
            delay = max(1.0, heartbeat_s * 0.75)
            if fault.kind == "instance_died":
                timer = threading.Thread(
                    target=self._die_once,
                    args=(state.resources.instance_id, lambda: self._reported(output_prefix), delay),
                    daemon=True,
                )
            else:
                scratch = scratch_directories(local_plan)
                timer = threading.Timer(delay, self._reclaim, args=(state.resources.instance_id, scratch))
            timer.daemon = True
            timer.start()
        if fault is not None and fault.kind in NOTICE_STAGES and state.resources.instance_id is not None:
            SpotNoticeArming(self.host.boot(state.resources.instance_id), fault.kind).start()
        return run

    def _has_nfs_client(self, instance_id: str | None) -> bool:
        """Whether the instance's image root got the stand-in NFS client (never this machine's root)."""
        if instance_id is None or self.host.tools.nfs_client is None:
            return False
        return self.host.boot(instance_id).image is not None

    def start_node(
        self, state: ConfigState, name: str, plan: Plan, output_prefix: str, timeout_s: int
    ) -> AgentRun:
        """As on AWS, on the node's own local instance (its own metadata service, paths and
        loopback address); the node's EBS volumes stand on emulated ones like the client's."""
        instance_id = state.resources.instance_id
        if instance_id is not None:
            self.host.boot(instance_id)
        run = super().start_node(state, name, rebind(plan, self.options), output_prefix, timeout_s)
        if instance_id is not None and run.command_id is not None:
            with self._lock:
                self._configs[run.command_id] = (state.item.run_id, state.item.config_id)
            self.host.deliver(run.command_id, instance_id)
            fault = self.faults.take(f"node.run/{name}", state.item.config_id)
            if fault is not None and fault.kind == "instance_died":  # the node's machine goes mid-run
                address = _control_address(plan)
                killer = threading.Thread(
                    target=self._die_once,
                    args=(instance_id, lambda: _says_ready(address), fault.after_s or 1.0),
                    daemon=True,
                )
                killer.start()
        return run

    def _world(self, fault: Fault | None) -> dict[str, str]:
        """The instance's environment for this command: as booted, or broken as the fault says."""
        if fault is None:
            return {}
        if fault.kind == "package_install":
            return {"PATH": f"{broken_packages(self.host.root)}:{SYSTEM_PATH}"}
        if fault.kind == "callback" and self.refusal is not None:
            return {"AWS_ENDPOINT_URL_SFN": self.refusal.endpoint}
        return {}

    def command_request(
        self,
        state: ConfigState,
        plan_key: str,
        plan_sha256: str,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> dict[str, Any]:
        request = super().command_request(
            state, plan_key, plan_sha256, output_prefix, task_token, heartbeat_s, timeout_s
        )
        with self._lock:
            fault = self._pending.pop(task_token, None)
        if fault is None:
            return request
        parameters = request["Parameters"]
        where = f"{state.item.run_id}/{state.item.config_id}/"
        if fault.kind == "agent_checksum":  # the instance refuses the agent it downloads
            parameters["AgentSha256"] = [WRONG_DIGEST]
        elif fault.kind == "plan_checksum":  # the agent refuses the plan it downloads
            parameters["PlanSha256"] = [WRONG_DIGEST]
        elif fault.kind == "output_upload":  # every upload fails: the bucket does not exist
            parameters["OutputUri"] = [f"s3://{NO_SUCH_BUCKET}/{where}"]
        elif fault.kind == "output_missing":  # the upload succeeds, somewhere nobody reads
            parameters["OutputUri"] = [self.artifacts.uri(f"{LOST_OUTPUT}{where}")]
        return request

    @property
    def running(self) -> set[tuple[str, str]]:
        """(run id, config id) of every command still running on a local instance."""
        with self._lock:
            configs = dict(self._configs)
        return {
            configs[i.command_id]
            for i in list(self.host.invocations.values())
            if not i.done.is_set() and i.command_id in configs
        }

    def _sent_before(self, request: dict[str, Any]) -> str | None:
        """As on AWS (same token: that command; another live one: cancelled), asked of the local
        SSM agent, which knows what runs where (moto's ListCommands names every instance)."""
        instance_id = request["InstanceIds"][0]
        token = request["Parameters"]["TaskTokenSha256"][0]
        for invocation in self.host.on_instance(instance_id):
            if invocation.token_sha256 == token:
                return invocation.command_id
            if not invocation.done.is_set():
                self._cancel(invocation.command_id)
        return None

    def _cancel(self, command_id: str) -> None:
        """CancelCommand, which moto lacks: the local SSM agent ends the command's shell."""
        self.host.cancel_command(command_id)

    def _config_of(self, instance_id: str) -> str:
        """The config an instance was launched for (its tag), so a fault can name the config."""
        described = self.host.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        tags = {t["Key"]: t["Value"] for r in described for i in r["Instances"] for t in i.get("Tags", [])}
        return str(tags.get(TAG_CONFIG, ""))

    def _reclaim(self, instance_id: str, scratch: list[Path] | None = None) -> None:
        """EC2 takes the Spot instance back: it dies, terminated with Server.SpotInstanceTermination."""
        instance = self.host.instances.get(instance_id)
        reclaim(self.host.ec2, instance, instance_id, self.settings.region, scratch or [])

    def _die_once(self, instance_id: str, started: Callable[[], bool], after_s: float) -> None:
        """The machine dies ``after_s`` seconds after ``started()`` first holds (a node says ready,
        the agent's output first reached the bucket): mid-run whatever this machine's load, where a
        fixed delay from the command's start could land before the agent ran at all."""
        deadline = time.monotonic() + NODE_READY_WAIT_S
        while time.monotonic() < deadline and not started():
            time.sleep(0.2)
        time.sleep(after_s)
        self._die(instance_id)

    def _reported(self, output_prefix: str) -> bool:
        listed = self.artifacts.s3.list_objects_v2(Bucket=self.artifacts.bucket, Prefix=output_prefix)
        return any(o["Key"].endswith("/manifest.json") for o in listed.get("Contents", []))

    def _die(self, instance_id: str) -> None:
        self.host.terminate(instance_id)
        self.host.ec2.terminate_instances(InstanceIds=[instance_id])

    # ------------------------------------------------------------------ stopping

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        """Cancel the instance's command (the agent tears down on SIGTERM), then sweep by run id."""
        if resources.instance_id is not None:
            self.host.cancel(resources.instance_id)
        report = sweep(run_id, self.mount_root, self.volumes_dir, config_id)
        return list(report["leftovers"])


def _says_ready(address: str) -> bool:
    """Whether the node's control endpoint answers that it is ready (not up yet: False)."""
    try:
        with urllib.request.urlopen(f"http://{address}/status", timeout=2) as response:
            return bool(json.loads(response.read()).get("state") == "ready")
    except (OSError, ValueError):
        return False


def _control_address(plan: Plan) -> str:
    """``ip:port`` of the node's own control endpoint, from its plan's topology."""
    topology: Any = plan.get("topology") or {}
    me = topology.get("self") or {}
    for machine in topology.get("machines") or []:
        if (machine.get("role"), machine.get("index")) == (me.get("role"), me.get("index")):
            return f"{machine.get('ip')}:{topology.get('control_port')}"
    raise AgentError("a node's plan without its own machine in the topology")


def _hanging(plan: Plan) -> Plan:
    """The plan with a setup hook that sleeps for a day: a command that never reports."""
    hung = dict(plan)
    hung["setup"] = f"sleep {HANG_PLAN_S}"
    return hung  # type: ignore[return-value]
