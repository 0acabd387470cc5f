"""Execute a plan: setup hook, targets, pre-warm, workloads, then always teardown.

The manifest is rewritten after every step, so a crash or a kill leaves every completed
measurement on disk and described. A failed step is recorded and the next one runs (unless
the plan says fail_fast); a failed preparation runs no workload. Teardown runs on every path,
including SIGTERM/SIGINT (SSM cancelling a command, Ctrl-C locally).
"""

from __future__ import annotations

import os
import signal
import threading
import traceback
from typing import Any, Dict, List, Optional

from storagebench import __version__
from storagebench.agent.adaptive import trackers_for
from storagebench.agent.ebs_stats import VolumeProbe
from storagebench.agent.emulate import EmulatedFleet, EmulationError, cgroup_name, trackable
from storagebench.agent.engines import PhaseContext, clear_workdir, run_phase
from storagebench.agent.interruption import stop_reason
from storagebench.agent.log import Progress, utc_now
from storagebench.agent.node import Solo, role_for
from storagebench.agent.prewarm import prewarm_announcement, prewarm_summary, prewarm_target
from storagebench.agent.proc import Child, CommandError
from storagebench.agent.sysinfo import system_facts
from storagebench.agent.targets import Prepared, TargetError, Targets
from storagebench.agent.throttle import ThrottleError
from storagebench.protocol.manifest import (
    MANIFEST_VERSION,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_SKIPPED,
    Manifest,
    PhaseResult,
    StepResult,
    write_json_atomic,
)
from storagebench.protocol.plan import Phase, Plan, Step, TargetSpec, check_plan
from storagebench.protocol.sla import answer_text
from storagebench.protocol.topology import TopologyError, node_label

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_INVALID = 2
EXIT_PREPARE = 3
EXIT_INTERNAL = 4
EXIT_TOPOLOGY = 7  # another machine of the config failed, was lost or was not ready in time
EXIT_INTERRUPTED = 130


class Interrupted(BaseException):
    """A signal asked the agent to stop; BaseException so no `except Exception` swallows it."""


def device_environment(attached: Dict[str, Prepared]) -> Dict[str, str]:
    """SB_DEVICE_<ID>=/dev/...[:/dev/...] for each target left to the setup hook."""
    return {
        "SB_DEVICE_" + target_id.upper().replace("-", "_").replace(".", "_"): target.path
        for target_id, target in attached.items()
    }


def _on_signal(signum: int, _frame: Any) -> None:
    raise Interrupted(stop_reason() or f"stopped by signal {signal.Signals(signum).name}")


class Runner:
    def __init__(
        self,
        plan: Plan,
        output_dir: str,
        mount_root: str,
        volumes_dir: str,
        progress: Optional[Progress] = None,
        packages: Optional[Dict[str, str]] = None,
        role: Optional[Solo] = None,
    ) -> None:
        self.plan = check_plan(plan)
        self.output_dir = os.path.abspath(output_dir)
        self.role: Solo = role or Solo()  # what this machine does in the plan's topology (agent.node)
        self._role_given = role is not None
        # Everything this run makes on the machine is found by run and config id (the local
        # "tags"): <root>/<run>/<config>/ directories and the cgroup storagebench:<run>:<config>
        # (":" cannot appear in ids, so one run's name never prefixes another's).
        # A node of a multi-machine config adds its role and index (server-0): several machines of
        # one config on one host (local mode) never share a directory, loop device, md array or cgroup.
        label = node_label(plan.get("topology"))
        scope = [plan["run_id"], plan["config_id"], *([label] if label else [])]
        self.run_tag = "-".join(scope)
        self.mount_root = os.path.join(mount_root, *scope)
        self.volumes_dir = os.path.join(volumes_dir, *scope)
        self.progress = progress or Progress(self.output_dir)
        self.is_root = os.geteuid() == 0
        self.fleet = EmulatedFleet(
            self.volumes_dir, cgroup_name(plan["run_id"], plan["config_id"]) + (f":{label}" if label else "")
        )
        self.targets = Targets(self.run_tag, self.mount_root, self.fleet, self.progress)
        self.manifest: Manifest = {
            "manifest_version": MANIFEST_VERSION,
            "agent_version": __version__,
            "run_id": plan["run_id"],
            "config_id": plan["config_id"],
            "status": "running",
            "error": None,
            "started_at": utc_now(),
            "ended_at": None,
            "system": {},
            "packages": dict(packages or {}),
            "targets": [],
            "prewarm": [],
            "steps": [],
            "emulation_events": [],
            "cleanup": {"actions": [], "leftovers": [], "status": "pending"},
        }

    # ------------------------------------------------------------------ lifecycle

    def execute(self) -> int:
        os.makedirs(self.output_dir, exist_ok=True)
        write_json_atomic(os.path.join(self.output_dir, "plan.json"), self.plan)
        previous = self._install_signals()
        code = EXIT_OK
        try:
            if not self._role_given:  # the task starts a node's role itself, before installing packages
                self.role = role_for(self.plan, self.output_dir, self.progress.say)
            self.role.start()
            self.manifest["system"] = system_facts()
            self._save()
            self.role.before_setup()  # the machines whose hooks run before this one's are ready
            attached = self._prepare([t for t in self.plan.get("targets", []) if t.get("prepare") is False])
            self._hook("setup", device_environment(attached))
            prepared = {
                **attached,
                **self._prepare([t for t in self.plan.get("targets", []) if t.get("prepare") is not False]),
            }
            self.fleet.start()  # after mkfs: file system creation is not part of any measurement
            self._prewarm(prepared)
            self.role.ready(self.fleet.procs_file)  # a node holds here until the primary says finish
            code = self._steps(prepared)
        except Interrupted as exc:
            self._fail(str(exc))
            self.role.failed(str(exc), interrupted=True)
            code = EXIT_INTERRUPTED
        except TopologyError as exc:  # another machine is lost or failed: named in the message
            self._fail(f"{type(exc).__name__}: {exc}")
            self.role.failed(f"{type(exc).__name__}: {exc}", interrupted=False)
            code = EXIT_TOPOLOGY
        except (TargetError, EmulationError, ThrottleError, CommandError, OSError) as exc:
            self._fail(str(exc))
            self.role.failed(str(exc), interrupted=False)
            code = EXIT_PREPARE
        except Exception as exc:  # a bug in the agent: recorded as such, never as a success
            self._fail(f"internal error: {type(exc).__name__}: {exc}")
            self.progress.say(traceback.format_exc().rstrip())
            self.role.failed(f"internal error: {type(exc).__name__}: {exc}", interrupted=False)
            code = EXIT_INTERNAL
        finally:
            self._end_of_run()
            self._restore_signals(previous)
            if self.manifest["status"] == "running":
                self.manifest["status"] = STATUS_OK if code == EXIT_OK else "partial"
            if self.manifest["cleanup"]["leftovers"] and code == EXIT_OK:
                code = EXIT_PARTIAL
            self.manifest["ended_at"] = utc_now()
            self._save()
            self.progress.update(stage="done", status=self.manifest["status"])
            self.progress.say(
                f"done: {self.manifest['status']}"
                + (f" ({self.manifest['error']})" if self.manifest["error"] else "")
            )
            self.progress.close()
        return code

    def _end_of_run(self) -> None:
        """Teardown on every path, with the topology's ordering around it (a signal during it waits)."""
        problems: List[str] = []
        try:
            self.role.before_teardown()
        except Interrupted as exc:  # stopped while a failed node held for the primary: tear down now
            self.progress.say(f"stopped while holding ({exc})")
        except (TopologyError, CommandError, OSError) as exc:
            problems.append(f"before teardown: {exc}")
        self._teardown()
        try:
            problems += self.role.after_teardown()
        except Interrupted as exc:
            problems.append(f"stopped while telling the other machines to finish ({exc})")
        topology = self.plan.get("topology")
        if topology is not None:
            self.manifest["topology"] = {**topology["self"], "finish_problems": problems}

    def _install_signals(self) -> Dict[int, Any]:
        previous: Dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                previous[signum] = signal.signal(signum, _on_signal)
        return previous

    @staticmethod
    def _restore_signals(previous: Dict[int, Any]) -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def _fail(self, message: str) -> None:
        self.manifest["status"] = STATUS_FAILED
        self.manifest["error"] = message
        self.progress.say(f"FAILED: {message}")

    def _save(self) -> None:
        write_json_atomic(os.path.join(self.output_dir, "manifest.json"), self.manifest)

    # ------------------------------------------------------------------ stages

    def _hook(self, name: str, extra_env: Optional[Dict[str, str]] = None) -> None:
        script = self.plan.get("setup") if name == "setup" else self.plan.get("teardown")
        if not script:
            return
        self.progress.update(stage=name)
        self.progress.say(f"running the {name} hook")
        directory = os.path.join(self.output_dir, "hooks")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"{name}.out"), "wb") as out:
            done = Child(
                ["/bin/sh", "-c", script],
                stdout=out,
                stderr=out,
                timeout_s=3600,
                env=dict(
                    os.environ,
                    SB_RUN_ID=self.plan["run_id"],
                    SB_CONFIG_ID=self.plan["config_id"],
                    **self.role.hook_env,  # the topology environment (protocol.topology), if any
                    **(extra_env or {}),
                ),
            ).wait()
        self.manifest.setdefault("hooks", {})[name] = {"rc": done.rc, "real_s": round(done.real_s, 3)}
        if done.rc != 0:
            raise CommandError(f"the {name} hook exited with status {done.rc} (see hooks/{name}.out)")

    def _prepare(self, specs: List[TargetSpec]) -> Dict[str, Prepared]:
        self.progress.update(stage="prepare")
        prepared = {}
        for spec in specs:
            self.progress.say(f"preparing target {spec['id']} ({spec['kind']})")
            prepared[spec["id"]] = self.targets.prepare(spec)
            self.manifest["targets"].append(prepared[spec["id"]].result(self.targets.emulated))
            self._save()
        return prepared

    def _prewarm(self, prepared: Dict[str, Prepared]) -> None:
        config = self.plan.get("prewarm") or {"method": "none"}
        if config.get("method", "none") == "none":
            return
        for target_id in config.get("targets") or [t for t, p in prepared.items() if p.devices]:
            target = prepared[target_id]
            self.progress.update(stage="prewarm", current=target_id)
            self.progress.say(prewarm_announcement(target, config))
            result = prewarm_target(target, config, self.output_dir, self.fleet.procs_file, self.is_root)
            self.manifest["prewarm"].append(result)
            self._save()
            if result["status"] == STATUS_FAILED:
                raise CommandError(f"pre-warm of {target_id} failed: {result['error']}")
            self.progress.say(prewarm_summary(result))

    def _steps(self, prepared: Dict[str, Prepared]) -> int:
        steps = self.plan.get("steps", [])
        series = trackers_for(steps)  # adaptive series: their steps past the stop are not run
        if series:
            self.manifest["adaptive"] = [dict(t.record()) for t in series.values()]
        failed = 0
        decided = 0  # steps of adaptive series that stopped before them
        stop = False
        removed: Optional[str] = None  # a node removed on purpose (node_loss): later steps are skipped
        previous: Optional[str] = None
        for index, step in enumerate(steps, start=1):
            tracker = series.get(step["adaptive"]["series"]) if "adaptive" in step else None
            if tracker is not None and tracker.stopped:
                decided += 1
                continue  # the series is decided; the manifest's adaptive record says why and when
            if stop:
                self.manifest["steps"].append(
                    self._skipped(step, "skipped: fail_fast after an earlier failure")
                )
                continue
            if removed is not None:
                self.manifest["steps"].append(self._skipped(step, f"skipped: {removed}"))
                continue
            if previous is not None:
                self.role.between_steps(f"after step {previous}")  # a lost machine stops the run here
            previous = step["id"]
            self.progress.update(stage="workloads", step=index, steps=len(steps), current=step["id"])
            self.progress.say(f"step {index}/{len(steps)} {step['id']} on {step['target']}")
            try:
                result = self._step(step, prepared[step["target"]])
            except Interrupted as exc:
                partial = getattr(exc, "step_result", None)
                if partial is not None:  # what the interrupted step wrote stays described
                    self.manifest["steps"].append(partial)
                    self._save()
                raise
            self.manifest["steps"].append(result)
            removed = removed or _removal(step)
            if tracker is not None:
                tracker.add(step, result, self.output_dir)
                self.manifest["adaptive"] = [dict(t.record()) for t in series.values()]
                if tracker.stopped:
                    self.progress.say(f"series {tracker.series}: {tracker.reason}")
            self._save()
            if result["status"] != STATUS_OK:
                failed += 1
                self.progress.say(f"step {step['id']} failed: {result['error']}")
                stop = bool(self.plan.get("fail_fast"))
        if failed:
            planned = len(steps) - decided
            self.manifest["status"] = "partial" if failed < planned else STATUS_FAILED
            self.manifest["error"] = f"{failed} of {planned} steps failed"
            return EXIT_PARTIAL
        return EXIT_OK

    def _skipped(self, step: Step, reason: str) -> StepResult:
        return {
            "id": step["id"],
            "workload": step.get("workload", ""),
            "profile": step.get("profile", ""),
            "variant": step.get("variant", {}),
            "repetition": step["repetition"],
            "target": step["target"],
            "intent": step.get("intent", ""),
            "status": STATUS_SKIPPED,
            "error": reason,
            "phases": [],
        }

    def _track(self, on: bool) -> bool:
        """Twins follow the host's path during a phase whose client never pauses on purpose;
        a twin that is gone is not this call's to report (fio fails on it, naming it)."""
        try:
            return self.fleet.track(on)
        except EmulationError:
            return False

    def _run_tracked(self, step_id: str, phase: Phase, ctx: PhaseContext) -> PhaseResult:
        """The phase, with the topology told when it starts and ends (a node_loss phase's node
        counts its removal from the start)."""
        told_at_ms = self.role.phase_starts(step_id, phase)
        if told_at_ms is not None and "node_loss" in phase:  # the measurement aligns fio's clock on it
            phase = {**phase, "node_loss": {**phase["node_loss"], "told_at_ms": told_at_ms}}
        tracking = self._track(trackable(phase))
        try:
            outcome = run_phase(phase, ctx)
        finally:
            if tracking:
                self._track(False)
        self.role.phase_ended(step_id, phase, outcome)
        return outcome

    def _step(self, step: Step, target: Prepared) -> StepResult:
        result = self._skipped(step, "")
        result["status"] = STATUS_OK
        result["error"] = None
        result["started_at"] = utc_now()
        workdir = None
        if target.mode == "filesystem":
            workdir = os.path.join(target.path, f"sb-{step['id']}")
            os.makedirs(workdir, exist_ok=True)
        phases: List[Any] = []
        try:
            for phase in step["phases"]:
                if result["status"] != STATUS_OK:
                    phases.append(
                        {
                            "name": phase["name"],
                            "engine": phase["engine"],
                            "status": STATUS_SKIPPED,
                            "error": "an earlier phase failed",
                        }
                    )
                    continue
                phase_dir = os.path.join(self.output_dir, "steps", step["id"], phase["name"])
                ctx = PhaseContext(
                    target.path,
                    target.mode,
                    workdir,
                    phase_dir,
                    self.fleet.procs_file,
                    self.is_root,
                    on_progress=self.progress.say,
                    clients=step.get("clients"),
                )
                probe = VolumeProbe(target.devices)
                readings = probe.read()
                try:
                    outcome = self._run_tracked(step["id"], phase, ctx)
                except Interrupted as exc:
                    files = sorted(os.listdir(phase_dir)) if os.path.isdir(phase_dir) else []
                    phases.append(
                        {
                            "name": phase["name"],
                            "engine": phase["engine"],
                            "status": STATUS_FAILED,
                            "error": str(exc),
                            "dir": os.path.relpath(phase_dir, self.output_dir),
                            "files": files,
                        }
                    )
                    result["status"] = STATUS_FAILED
                    result["error"] = f"phase {phase['name']}: {exc}"
                    result["phases"] = phases
                    result["ended_at"] = utc_now()
                    exc.step_result = result  # type: ignore[attr-defined]
                    raise
                outcome["dir"] = os.path.relpath(phase_dir, self.output_dir)
                volume = probe.since(readings)
                if volume:
                    outcome["volume"] = volume
                phases.append(outcome)
                for warning in outcome.get("warnings", []):
                    self.progress.say(f"warning: step {step['id']} phase {phase['name']}: {warning}")
                if "search" in outcome and outcome["status"] == STATUS_OK:
                    self.progress.say(f"step {step['id']}: {answer_text(outcome['search'])}")
                if outcome["status"] != STATUS_OK:
                    result["status"] = STATUS_FAILED
                    result["error"] = f"phase {phase['name']}: {outcome['error']}"
        finally:
            if workdir is not None and step.get("cleanup", True):
                try:
                    clear_workdir(workdir)
                    os.rmdir(workdir)
                except OSError as exc:
                    result["status"] = STATUS_FAILED
                    result["error"] = (result["error"] or "") + f"; cannot remove {workdir}: {exc.strerror}"
        result["phases"] = phases
        result["ended_at"] = utc_now()
        return result

    def _teardown(self) -> None:
        self.progress.update(stage="teardown")
        governor = self.fleet.governor
        if governor is not None:
            governor.stop()
            self.manifest["emulation_events"] = list(governor.events)
            self.manifest["emulation"] = {
                "governor": governor.summary(),
                "errors": governor.errors,
                "ticks": governor.ticks,
            }
        cleanup = self.targets.teardown()
        problems = self.fleet.stop()
        twins = self.fleet.twin_reports()  # complete once teardown has stopped every twin
        if twins or self.fleet.fallback_reason:
            emulation = self.manifest.setdefault("emulation", {})
            emulation["twins"] = twins
            emulation["fallback_reason"] = self.fleet.fallback_reason
            emulation["python_twin_reason"] = self.fleet.python_twin_reason
            if self.fleet.wake is not None:
                emulation["cpu_wake"] = self.fleet.wake.summary()
            for twin in twins:
                state = twin["state"]
                events = state.get("events", []) if isinstance(state, dict) else []
                self.manifest["emulation_events"].extend(
                    {"device": twin["device"], **event} for event in events
                )
        hook_error = None
        try:
            self._hook("teardown")
        except (CommandError, OSError) as exc:
            hook_error = str(exc)
        if problems or hook_error:
            cleanup["status"] = "incomplete"
            cleanup["leftovers"] = [*cleanup["leftovers"], *problems, *([hook_error] if hook_error else [])]
        self.manifest["cleanup"] = cleanup
        for leftover in cleanup["leftovers"]:
            self.progress.say(f"cleanup problem: {leftover}")


def _removal(step: Step) -> Optional[str]:
    """Why the steps after ``step`` are not run: it removed a node (a phase's ``node_loss``), and
    what ran after would measure a config short of that node, and find it lost between steps."""
    for phase in step.get("phases", []):
        loss = phase.get("node_loss")
        if loss is not None:
            return (
                f"{loss['role']}-{loss['index']} was removed by step {step['id']} (node_loss); "
                "a later step would measure the config without it"
            )
    return None
