"""The agent through SSM Run Command: the stack's ``AgentDocument`` on the config's instance.

``start`` stores the plan, makes sure this package's agent zipapp is in the bucket under its
digest, writes the Step Functions task token into the instance's own prefix and sends the
document; the instance reads the token there (checked by its SHA-256, the only form of it that
the command's parameters, and so SSM's command history, carry) and reports on it itself
(heartbeats, success, failure). The instance gets the agent and the plan through presigned GETs
with their SHA-256 (no AWS CLI: the document fetches with python3 and the verified agent makes
its own signed calls). The full command output goes to S3 as well (``GetCommandInvocation``
keeps only 24,000 characters of stdout), into the instance's prefix next to the agent's output.
A retried ``start`` with the same task token finds the command already sent instead of
running the agent twice.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from typing import Any

from storagebench.adapters.agent_bundle import AgentBundle, current_bundle
from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.s3 import S3Artifacts, json_body
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.clock import Clock, SystemClock, iso
from storagebench.core.errors import AgentError
from storagebench.core.state import AgentRun, ConfigState, Resources
from storagebench.protocol.plan import Plan
from storagebench.workflow.artifact_keys import command_output_prefix, task_token_key

LOG = logging.getLogger(__name__)
MAX_EXECUTION_S = 172_800  # aws:runShellScript's ceiling (48 h)
DELIVERY_TIMEOUT_S = 600  # SendCommand's TimeoutSeconds: how long the command may wait to start
HEARTBEAT_MAX_S = 999  # the document's HeartbeatSeconds pattern: 1-3 digits
PRESIGNED_S = 3_600  # the command may wait DELIVERY_TIMEOUT_S to start; the agent fetches at once
OVER = ("Failed", "Cancelled", "Cancelling", "TimedOut")


def token_digest(task_token: str) -> str:
    """What the command carries of the token: enough to check it and to recognise the command."""
    return hashlib.sha256(task_token.encode("utf-8")).hexdigest()


NODE_TOKEN = ""
"""A node's task token: none. A retried start finds the node's command by its empty digest (each
node's instance runs one command of the document)."""


def heartbeat_interval(heartbeat_timeout_s: int) -> int:
    """Half the task's heartbeat timeout: one lost heartbeat is not fatal."""
    return max(1, min(HEARTBEAT_MAX_S, heartbeat_timeout_s // 2))


class SsmAgents:
    """``Agents`` on SSM Run Command with the stack's agent document."""

    def __init__(
        self,
        ssm: Any,
        s3: Any,
        settings: AwsSettings,
        artifacts: S3Artifacts | None = None,
        clock: Clock | None = None,
        bundle: AgentBundle | None = None,
        presigner: Any | None = None,
    ) -> None:
        self.ssm = ssm
        self.s3 = s3
        self.presigner = presigner if presigner is not None else s3  # an S3 client the instance can reach
        self.settings = settings
        self.artifacts = artifacts if artifacts is not None else S3Artifacts(s3, settings.artifacts_bucket)
        self.clock: Clock = clock or SystemClock()
        self._bundle = bundle
        self._uploaded: set[str] = set()

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> SsmAgents:
        return cls(settings.client("ssm"), settings.client("s3"), settings)

    def principal(self, instance_id: str) -> str:
        """An instance profile's role session is named after the instance: aws:userid."""
        return f"{self.settings.instance_role_id}:{instance_id}"

    # -------------------------------------------------------------- reachability

    def online(self, resources: Resources) -> bool:
        if resources.instance_id is None:
            return False
        try:
            found = self.ssm.describe_instance_information(
                Filters=[{"Key": "InstanceIds", "Values": [resources.instance_id]}]
            )["InstanceInformationList"]
        except ClientError as exc:
            if error_code(exc) in ("InvalidInstanceId", "InvalidInstanceInformationFilterValue"):
                return False  # the agent has not registered yet
            raise workflow_error(exc, f"ask SSM about {resources.instance_id}", AgentError) from exc
        return any(
            i.get("InstanceId") == resources.instance_id and i.get("PingStatus") == "Online" for i in found
        )

    # -------------------------------------------------------------- agent bundle

    @property
    def bundle(self) -> AgentBundle:
        if self._bundle is None:
            self._bundle = current_bundle()
        return self._bundle

    def ensure_agent(self) -> str:
        """Upload this version's agent zipapp unless the bucket has it; returns its key."""
        bundle = self.bundle
        key = bundle.key
        if key in self._uploaded:
            return key
        bucket = self.settings.artifacts_bucket
        try:
            self.s3.head_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) not in ("404", "NoSuchKey", "NotFound"):
                raise workflow_error(exc, f"look for the agent at s3://{bucket}/{key}", AgentError) from exc
            with aws_call(f"upload the agent to s3://{bucket}/{key}", AgentError):
                self.s3.put_object(
                    Bucket=bucket,
                    Key=key,
                    Body=bundle.data,
                    ContentType="application/zip",
                    ChecksumSHA256=_b64_sha256(bundle.data),
                    Metadata={"sha256": bundle.sha256, "version": bundle.version},
                )
        self._uploaded.add(key)
        return key

    # -------------------------------------------------------------- run

    def presign(self, key: str) -> str:
        with aws_call(f"presign s3://{self.settings.artifacts_bucket}/{key}", AgentError):
            return str(
                self.presigner.generate_presigned_url(
                    "get_object",
                    Params={"Bucket": self.settings.artifacts_bucket, "Key": key},
                    ExpiresIn=PRESIGNED_S,
                )
            )

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
        """The SendCommand parameters (public so tests can check them against the document)."""
        if state.resources.instance_id is None:
            raise AgentError("no instance to run the agent on")
        if not 1 <= timeout_s <= MAX_EXECUTION_S:
            raise AgentError(
                f"command timeout {timeout_s} s is outside 1..{MAX_EXECUTION_S} s "
                "(SSM's aws:runShellScript limit)"
            )
        bundle = self.bundle
        output = output_prefix if output_prefix.endswith("/") else output_prefix + "/"
        principal = self.principal(state.resources.instance_id)
        ssm_prefix = command_output_prefix(state.item, principal).rstrip("/")
        return {
            "DocumentName": self.settings.agent_document,
            "InstanceIds": [state.resources.instance_id],
            "Comment": f"storagebench {state.item.run_id}/{state.item.config_id}"[:100],
            "Parameters": {
                "AgentUrl": [self.presign(bundle.key)],
                "AgentSha256": [bundle.sha256],
                "PlanUrl": [self.presign(plan_key)],
                "PlanSha256": [plan_sha256],
                "OutputUri": [self.artifacts.uri(output)],
                # Empty on a node (NODE_TOKEN): it reports to nobody, the primary's agent waits for it.
                "TaskTokenUri": [
                    self.artifacts.uri(task_token_key(state.item, principal)) if task_token else ""
                ],
                "TaskTokenSha256": [token_digest(task_token) if task_token else ""],
                "HeartbeatSeconds": [str(heartbeat_interval(heartbeat_s))],
                "Region": [self.settings.region],
                "executionTimeout": [str(timeout_s)],
            },
            "OutputS3BucketName": self.settings.artifacts_bucket,
            "OutputS3KeyPrefix": ssm_prefix,
            "OutputS3Region": self.settings.region,
            "TimeoutSeconds": DELIVERY_TIMEOUT_S,
        }

    def start(
        self,
        state: ConfigState,
        plan: Plan,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> AgentRun:
        plan_key = f"{state.item.artifacts_prefix}plan.json"
        return self._send(state, plan, plan_key, output_prefix, task_token, heartbeat_s, timeout_s)

    def start_node(
        self, state: ConfigState, name: str, plan: Plan, output_prefix: str, timeout_s: int
    ) -> AgentRun:
        """The same document on another machine of the config (``state.resources`` is that machine),
        with its own plan. Nobody waits on a task token for it: the primary client's agent does (its
        barriers read the node's control endpoint), so its token parameters are empty, which the
        agent accepts only with a node's plan (``agent.node``)."""
        plan_key = f"{state.item.artifacts_prefix}plan-{name}.json"
        heartbeat_s = state.item.timing.heartbeat_s
        return self._send(state, plan, plan_key, output_prefix, NODE_TOKEN, heartbeat_s, timeout_s)

    def _send(
        self,
        state: ConfigState,
        plan: Plan,
        plan_key: str,
        output_prefix: str,
        task_token: str,
        heartbeat_s: int,
        timeout_s: int,
    ) -> AgentRun:
        self.artifacts.put_json(plan_key, plan)
        plan_sha256 = hashlib.sha256(json_body(plan)).hexdigest()  # the bytes put_json stored
        self.ensure_agent()
        if state.resources.instance_id is not None and task_token:
            token_key = task_token_key(state.item, self.principal(state.resources.instance_id))
            self.artifacts.put_text(token_key, task_token, "text/plain")
        request = self.command_request(
            state, plan_key, plan_sha256, output_prefix, task_token, heartbeat_s, timeout_s
        )
        command_id = self._sent_before(request)
        if command_id is None:
            with aws_call(f"send the agent command to {state.resources.instance_id}", AgentError):
                command_id = str(self.ssm.send_command(**request)["Command"]["CommandId"])
        return AgentRun(
            command_id=command_id,
            plan_key=plan_key,
            output_prefix=output_prefix,
            started_at=iso(self.clock.now()),
        )

    def _sent_before(self, request: dict[str, Any]) -> str | None:
        """A live command a previous attempt sent with the same document and task token.

        A live command of our document with another token belongs to an earlier attempt of the
        RunAgent state (each retry gets a new token): nobody waits for it any more, so it is
        cancelled rather than left to run a second agent beside this one.

        Needs ssm:ListCommands. Without it the check is skipped with a warning (the send
        itself still works, a retried start could then run the agent twice).
        """
        instance_id = request["InstanceIds"][0]
        token = request["Parameters"]["TaskTokenSha256"]
        try:
            pages = self.ssm.get_paginator("list_commands").paginate(InstanceId=instance_id)
            for page in pages:
                for command in page.get("Commands", []):
                    if (
                        command.get("DocumentName") != request["DocumentName"]
                        or command.get("Status") in OVER
                    ):
                        continue
                    if (command.get("Parameters") or {}).get("TaskTokenSha256") == token:
                        return str(command["CommandId"])
                    self._cancel(str(command["CommandId"]))
        except ClientError as exc:
            if error_code(exc) not in ("AccessDeniedException", "AccessDenied"):
                raise workflow_error(exc, f"list commands of {instance_id}", AgentError) from exc
            LOG.warning("cannot check for a command already sent to %s (%s); sending", instance_id, exc)
        return None

    def _cancel(self, command_id: str) -> None:
        try:
            self.ssm.cancel_command(CommandId=command_id)
        except ClientError as exc:
            if error_code(exc) not in ("InvalidCommandId", "InvalidInstanceId"):
                raise workflow_error(exc, f"cancel command {command_id}", AgentError) from exc
            # finished meanwhile, or its instance is gone: nothing to stop

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        """Cancel the agent's commands still in progress on the instance; finished ones are fine.

        The command id does not survive the task-token step, so the instance's in-progress
        commands of our document are looked up. Returns nothing held: on AWS whatever the agent
        left on the machine (mounts, loop devices, files) goes with the instance, which cleanup
        terminates next.
        """
        if resources.instance_id is None:
            return []
        try:
            listed = self.ssm.list_commands(
                InstanceId=resources.instance_id, Filters=[{"key": "Status", "value": "InProgress"}]
            )["Commands"]
        except ClientError as exc:
            if error_code(exc) in ("InvalidInstanceId", "AccessDeniedException"):
                return []  # gone, or not ours to list: termination ends the command anyway
            raise workflow_error(exc, f"list commands of {resources.instance_id}", AgentError) from exc
        for command in listed:
            if command.get("DocumentName") == self.settings.agent_document:
                self._cancel(str(command["CommandId"]))
        return []


def _b64_sha256(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()
