"""The local fleet: the benchmark agent on this machine, in place of an instance reached by SSM.

It behaves like the SSM document does on an instance: run the agent with the plan, heartbeat
on the task token while it runs, then report success with the exit code (or failure when the
command cannot start). EBS targets are rebound to emulated volumes (loop device + throttle at
the volume type's envelope) from the volume each target requested; directories stay as they
are; kinds that need AWS are refused with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storagebench.agent.plan import Plan
from storagebench.agent.sweep import sweep
from storagebench.core.state import AgentRun, ConfigState, Resources
from storagebench.planning.local import LocalOptions
from storagebench_local.adapters.artifacts import LocalArtifacts
from storagebench_local.adapters.faults import FaultPlan
from storagebench_local.adapters.local_plan import check_machine, rebind

STOP_GRACE_S = 30.0
# moto records a task outcome only once the waitForTaskToken wait is armed, which happens after
# the StartAgent Lambda returns; on AWS the SSM document fails after its own set-up, never sooner.
COMMAND_FAILURE_DELAY_S = 1.0


@dataclass
class _Running:
    process: subprocess.Popen[bytes] | None
    token: str
    done: threading.Event = field(default_factory=threading.Event)
    died: bool = False  # an injected "instance died": no callback, no teardown on the machine
    instance_id: str | None = None


class LocalAgents:
    def __init__(
        self,
        artifacts: LocalArtifacts,
        sfn: Any,
        options: LocalOptions,
        mount_root: Path,
        volumes_dir: Path,
        faults: FaultPlan | None = None,
        on_instance_died: Callable[[str], object] | None = None,
    ) -> None:
        self.artifacts = artifacts
        self.sfn = sfn
        self.options = options
        self.mount_root = mount_root
        self.volumes_dir = volumes_dir
        self.faults = faults or FaultPlan()
        self.on_instance_died = on_instance_died  # local mode terminates the moto instance too
        self.running: dict[tuple[str, str], _Running] = {}
        self.callback_errors: list[str] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ readiness

    def online(self, resources: Resources) -> bool:
        check_machine()
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
        # A retried RunAgent has a new token: an agent an earlier attempt started is stopped first.
        self.stop(item.run_id, item.config_id, state.resources)
        local_plan = rebind(plan, self.options)
        plan_key = f"{item.artifacts_prefix}plan.local.json"
        self.artifacts.put_json(plan_key, local_plan)
        output = self.artifacts.fetch(output_prefix)
        behaviour = self.faults.take("agent.run", item.config_id)
        key = (item.run_id, item.config_id)
        if behaviour is not None and behaviour.kind == "command_failed":
            run = _Running(None, task_token)
            self.running[key] = run
            threading.Thread(target=self._fail_command, args=(run, behaviour.message), daemon=True).start()
        else:
            output.parent.mkdir(parents=True, exist_ok=True)
            stderr = (output.parent / "agent.stderr").open("wb")
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "storagebench.agent",
                    "run",
                    "--plan",
                    self.artifacts.uri(plan_key),
                    "--out",
                    str(output),
                    "--mount-root",
                    str(self.mount_root),
                    "--volumes-dir",
                    str(self.volumes_dir),
                    "--quiet",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
            stderr.close()
            run = _Running(process, task_token, instance_id=state.resources.instance_id)
            with self._lock:
                self.running[key] = run
            kind = behaviour.kind if behaviour else None
            threading.Thread(
                target=self._supervise,
                args=(run, output, heartbeat_s, timeout_s, kind),
                daemon=True,
                name=f"agent-{item.config_id}",
            ).start()
        return AgentRun(
            command_id=f"local-{item.run_id}-{item.config_id}",
            plan_key=plan_key,
            output_prefix=output_prefix,
            started_at=item.started_at,
        )

    def _callback(self, call: str, **arguments: Any) -> None:
        try:
            getattr(self.sfn, call)(**arguments)
        except Exception as exc:
            self.callback_errors.append(f"{call}: {type(exc).__name__}: {exc}")

    def _fail_command(self, run: _Running, message: str) -> None:
        if run.done.wait(COMMAND_FAILURE_DELAY_S):
            return  # stopped before it could fail
        self._callback(
            "send_task_failure",
            taskToken=run.token,
            error="AgentError",
            cause=f"{message}: the command failed before the agent ran",
        )
        run.done.set()

    def _supervise(
        self, run: _Running, output: Path, heartbeat_s: int, timeout_s: int, behaviour: str | None
    ) -> None:
        """Heartbeat while the agent runs, then report; stand in for SSM's executionTimeout.

        At the command's timeout SSM kills the script, its heartbeat loop with it, and reports
        nothing on the task token: the state then fails by its heartbeat timeout.
        """
        assert run.process is not None
        interval = max(0.2, heartbeat_s / 2)  # like the SSM document: one lost heartbeat is not fatal
        died_at = interval * 1.5 if behaviour == "instance_died" else None
        elapsed = 0.0
        while True:
            try:
                run.process.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                elapsed += interval
            if run.done.is_set():
                return  # stopped: stop() terminates the agent and reports nothing
            if died_at is not None and elapsed >= died_at:
                os.killpg(run.process.pid, signal.SIGKILL)  # no teardown: the machine is gone
                run.process.wait()
                run.died = True
                if self.on_instance_died is not None and run.instance_id is not None:
                    self.on_instance_died(run.instance_id)
                run.done.set()
                return
            if elapsed >= timeout_s:
                self._time_out(run)
                return
            self._callback("send_task_heartbeat", taskToken=run.token)
        if run.done.is_set():
            return  # stopped while running: whoever stopped it owns the outcome
        if behaviour == "command_timed_out":
            # The agent finished, but the command never reports: it heartbeats until its timeout.
            while not run.done.wait(interval):
                elapsed += interval
                if elapsed >= timeout_s:
                    run.done.set()
                    return
                self._callback("send_task_heartbeat", taskToken=run.token)
            return
        if behaviour == "output_missing" and output.exists():
            shutil.rmtree(output)
        code = run.process.returncode
        self._callback(
            "send_task_success",
            taskToken=run.token,
            output=json.dumps({"status": "completed", "exit_code": code}),
        )
        run.done.set()

    @staticmethod
    def _time_out(run: _Running) -> None:
        """SSM's executionTimeout: terminate the agent (it tears down on SIGTERM), report nothing."""
        assert run.process is not None
        run.done.set()
        try:
            os.killpg(run.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return  # it ended on its own in the meantime
        try:
            run.process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(run.process.pid, signal.SIGKILL)
            run.process.wait()

    # ------------------------------------------------------------------ stopping

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        """Stop the agent if it still runs (it tears down on SIGTERM), then sweep by run id."""
        key = (run_id, config_id)
        with self._lock:
            run = self.running.pop(key, None)
        if run is not None:
            run.done.set()
            process = run.process
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        report = sweep(run_id, str(self.mount_root), str(self.volumes_dir), config_id)
        return report["leftovers"]
