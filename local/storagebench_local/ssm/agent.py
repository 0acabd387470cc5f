"""The SSM agent's part, on this machine: commands sent to local instances are run as SSM runs them.

moto records ``SendCommand`` calls and reports every command as Success without running
anything. This stand-in does what the SSM agent on an instance does: it watches for commands
addressed to the instances it hosts, reads the document the command names from SSM, checks and
substitutes the parameters (:mod:`.document`), runs each ``aws:runShellScript`` step with bash as
root on the instance (:mod:`.instance`) within the step's ``timeoutSeconds``, writes the step's
stdout and stderr to the command's S3 bucket and prefix
(``<prefix>/<command id>/<instance id>/awsrunShellScript/<step>/stdout``) and keeps the status
and the first 24,000 characters of output, as ``GetCommandInvocation`` reports them.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from storagebench_local.ssm.document import CommandDocument, InvalidDocumentError, InvalidParametersError
from storagebench_local.ssm.instance import STOP_GRACE_S, LocalInstance, Tools

LOG = logging.getLogger(__name__)
INLINE_STDOUT = 24_000  # GetCommandInvocation's StandardOutputContent
INLINE_STDERR = 8_000  # and StandardErrorContent
POLL_S = 0.2
REAP_EVERY_S = 2.0


@dataclass
class Invocation:
    """One command on one instance, as ``GetCommandInvocation`` describes it."""

    command_id: str
    instance_id: str
    status: str = "InProgress"  # Pending | InProgress | Success | Failed | TimedOut | Cancelled
    status_details: str = "InProgress"
    response_code: int = -1
    stdout: str = ""
    stderr: str = ""
    output_uri: str | None = None
    token_sha256: str = ""  # the TaskTokenSha256 parameter: which task the command reports on
    cancelled: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


class LocalSsmAgent:
    """Runs the commands SSM (moto) holds for the instances booted here."""

    def __init__(
        self,
        ssm: Any,
        s3: Any,
        ec2: Any,
        root: Path,
        tools: Tools,
        aws_endpoint: str,
        image: Path | None = None,
        image_for: Callable[[str], Path | None] | None = None,
    ) -> None:
        self.ssm = ssm
        self.s3 = s3
        self.ec2 = ec2
        self.root = root
        self.tools = tools
        self.aws_endpoint = aws_endpoint
        self.image = image  # the root file system every instance boots (None: see image_for)
        self.image_for = image_for  # AMI id -> the root its instances boot (None: this machine's)
        self.instances: dict[str, LocalInstance] = {}
        self.invocations: dict[tuple[str, str], Invocation] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> LocalSsmAgent:
        self._thread = threading.Thread(target=self._watch, name="local-ssm-reaper", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for instance in list(self.instances.values()):
            self._power_off(instance)

    def boot(self, instance_id: str) -> LocalInstance:
        """The instance's metadata service and paths (once; later calls return it)."""
        with self._lock:
            if instance_id in self.instances:
                return self.instances[instance_id]
        described = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
        profile = (described.get("IamInstanceProfile") or {}).get("Arn", "instance-profile/storagebench")
        image = self.image
        if image is None and self.image_for is not None:
            image = self.image_for(str(described.get("ImageId", "")))
        instance = LocalInstance.boot(
            instance_id,
            described.get("InstanceType", "unknown"),
            described.get("Placement", {}).get("AvailabilityZone", "us-east-1a"),
            profile.rsplit("/", 1)[-1],
            self.root,
            self.tools,
            self.aws_endpoint,
            image,
        )
        with self._lock:
            self.instances[instance_id] = instance
        return instance

    # ------------------------------------------------------------------ watching SSM

    def _watch(self) -> None:
        reaped_at = time.monotonic()
        while not self._closing.wait(POLL_S):
            if time.monotonic() - reaped_at < REAP_EVERY_S:
                continue
            reaped_at = time.monotonic()
            try:
                self._reap()
            except Exception:  # the watcher must outlive one bad poll; the log says what broke
                LOG.exception("local SSM agent: looking for terminated instances failed")

    def deliver(self, command_id: str, instance_id: str) -> Invocation:
        """Run a command SendCommand accepted for a hosted instance (once per command and instance).

        The SSM agent learns of its commands from SSM; here the sender says which instance it
        addressed, because moto's ListCommands names every instance for every command. The rest
        (document, parameters, output bucket) is read back from SSM.
        """
        key = (command_id, instance_id)
        with self._lock:
            if key in self.invocations:
                return self.invocations[key]
            instance = self.instances.get(instance_id)
            if instance is None:
                raise KeyError(f"{instance_id} is not a local instance (boot it first)")
            invocation = Invocation(*key)
            self.invocations[key] = invocation
        command = self.ssm.list_commands(CommandId=command_id)["Commands"][0]
        invocation.token_sha256 = str(((command.get("Parameters") or {}).get("TaskTokenSha256") or [""])[0])
        threading.Thread(
            target=self._invoke,
            args=(command, instance, invocation),
            name=f"ssm-{command_id[:8]}-{instance_id}",
            daemon=True,
        ).start()
        return invocation

    def _reap(self) -> None:
        """Instances terminated through EC2 lose their processes and metadata service."""
        ids = [i for i, instance in self.instances.items() if not instance.terminated]
        if not ids:
            return
        for reservation in self.ec2.describe_instances(InstanceIds=ids)["Reservations"]:
            for described in reservation["Instances"]:
                if described["State"]["Name"] in ("shutting-down", "terminated"):
                    self._power_off(self.instances[described["InstanceId"]])

    def _power_off(self, instance: LocalInstance) -> None:
        if not instance.terminated:
            instance.terminate()
        for invocation in self.invocations.values():
            if invocation.instance_id == instance.instance_id and not invocation.done.is_set():
                invocation.cancelled.set()

    # ------------------------------------------------------------------ running one command

    def _document(self, name: str) -> CommandDocument:
        found = self.ssm.get_document(Name=name)
        text = str(found["Content"])
        content = json.loads(text) if found.get("DocumentFormat", "JSON") == "JSON" else yaml.safe_load(text)
        return CommandDocument(content)

    def _invoke(self, command: dict[str, Any], instance: LocalInstance, invocation: Invocation) -> None:
        try:
            steps = self._document(str(command["DocumentName"])).render(command.get("Parameters") or {})
        except (InvalidParametersError, InvalidDocumentError) as exc:
            self._finish(invocation, "Failed", "Failed", 1, "", f"{type(exc).__name__}: {exc}")
            return
        workdir = instance.directory / "ssm" / invocation.command_id
        workdir.mkdir(parents=True, exist_ok=True)
        status, code, stdout, stderr = "Success", 0, "", ""
        for step in steps:
            script = workdir / f"{step.name}.sh"
            script.write_text(step.script + "\n")
            out, err = workdir / f"{step.name}.stdout", workdir / f"{step.name}.stderr"
            try:
                process = instance.shell(script, out, err)
            except Exception as exc:  # the instance is gone: the command never ran
                self._finish(invocation, "Failed", "Undeliverable", 1, "", str(exc))
                return
            status, code = self._wait(invocation, process, step.timeout_s)
            stdout, stderr = _read(out), _read(err)
            self._upload(command, invocation, step.name, stdout, stderr)
            if status != "Success":
                break
        self._finish(invocation, status, status, code, stdout, stderr)

    def _wait(
        self, invocation: Invocation, process: subprocess.Popen[bytes], timeout_s: int
    ) -> tuple[str, int]:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                code = process.wait(timeout=0.2)
                return ("Success" if code == 0 else "Failed"), code
            except subprocess.TimeoutExpired:
                pass
            if invocation.cancelled.is_set():
                _end(process)
                return "Cancelled", process.returncode
            if time.monotonic() >= deadline:
                _end(process)  # SSM stops the script at timeoutSeconds, heartbeat loop and all
                return "TimedOut", process.returncode

    def _upload(
        self, command: dict[str, Any], invocation: Invocation, step: str, stdout: str, stderr: str
    ) -> None:
        bucket = command.get("OutputS3BucketName")
        if not bucket:
            return
        prefix = str(command.get("OutputS3KeyPrefix") or "").rstrip("/")
        base = "/".join(
            p for p in (prefix, invocation.command_id, invocation.instance_id, "awsrunShellScript", step) if p
        )
        for name, text in (("stdout", stdout), ("stderr", stderr)):
            if text:
                self.s3.put_object(Bucket=bucket, Key=f"{base}/{name}", Body=text.encode())
        invocation.output_uri = f"s3://{bucket}/{base}/"

    @staticmethod
    def _finish(
        invocation: Invocation, status: str, details: str, code: int, stdout: str, stderr: str
    ) -> None:
        invocation.status, invocation.status_details, invocation.response_code = status, details, code
        invocation.stdout, invocation.stderr = stdout[:INLINE_STDOUT], stderr[:INLINE_STDERR]
        invocation.done.set()

    # ------------------------------------------------------------------ what SSM's API would do

    def cancel(self, instance_id: str) -> list[Invocation]:
        """CancelCommand for every command still running on the instance; returns them, ended."""
        return self._cancel(lambda i: i.instance_id == instance_id)

    def cancel_command(self, command_id: str) -> list[Invocation]:
        """CancelCommand for one command (a finished one is left as it ended)."""
        return self._cancel(lambda i: i.command_id == command_id)

    def _cancel(self, chosen: Any) -> list[Invocation]:
        running = [i for i in list(self.invocations.values()) if chosen(i) and not i.done.is_set()]
        for invocation in running:
            invocation.cancelled.set()
        for invocation in running:
            invocation.done.wait(STOP_GRACE_S + 5)
        return running

    def terminate(self, instance_id: str) -> None:
        """The instance dies: its processes are killed, nothing on it is torn down."""
        instance = self.instances.get(instance_id)
        if instance is not None:
            self._power_off(instance)

    def on_instance(self, instance_id: str) -> list[Invocation]:
        return [i for i in list(self.invocations.values()) if i.instance_id == instance_id]


def _end(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the agent tears down on it), then SIGKILL after the grace period; at once for a
    stopped process (a powered-off instance, ``ssm/power``): it cannot act on SIGTERM."""
    try:
        if _stopped(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=STOP_GRACE_S)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (``T`` in /proc/<pid>/stat), e.g. frozen by a power-off."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["T"]


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
