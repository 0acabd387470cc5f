"""The agent as a Step Functions task: what the SSM document hands over to once the agent is verified.

    python3 agent.pyz task --plan-url URL --plan-sha256 HEX --output-uri s3://... \
        --task-token-uri s3://... --task-token-sha256 HEX --heartbeat-s 60 --region us-east-1 \
        --out /var/lib/storagebench/out

The task token is read from the instance's own prefix (``--task-token-uri``, signed with the
instance's role) and checked against its SHA-256: it never appears in the command's parameters,
which anyone allowed ``ssm:ListCommands`` can read. Until it is read nothing can be reported:
that step fails the command (exit 5) with a line naming it, which the workflow reads from SSM's
copy of the output when the heartbeats do not come.

Each named step either completes or ends the task with ``SendTaskFailure`` naming it (error
``AgentError``, cause ``step 'verify plan' failed: ...``), so the workflow never waits out a
heartbeat timeout for a failure the instance saw. While the plan runs, a thread heartbeats and
uploads the output every ``--heartbeat-s`` seconds (the CLI's live progress, and what a lost
instance leaves behind); the final upload comes before the callback, so the output is in S3
before the workflow collects it. Whatever was measured is uploaded on every path that can.

A Spot interruption notice (``agent.interruption``) stops the plan like a cancel; the output is
uploaded with the notice in ``manifest.json`` (``interruption``) and the task fails with
``SpotInterruptionError`` (cause: the notice and the number of completed steps, as JSON), which
the workflow tells apart from a failure: it keeps what was measured and relaunches the rest.

A node of a multi-machine config (a plan whose ``topology.self`` is not client 0: a storage
server, an extra client) gets empty ``--task-token-uri`` and ``--task-token-sha256``: it never
reports to Step Functions (client 0 does, for the whole config). It serves its state on its
control endpoint from the start, runs its plan, holds until client 0 says finish, uploads its
output to its own ``--output-uri`` and exits 0, or 1 if it failed. Empty token parameters with
any other plan are refused (exit 2): nobody would hear of that plan's result.

Exit status: 0 reported success; 1 a step failed (reported); 2 the command line is invalid;
5 Step Functions could not be told (the workflow learns from the heartbeat timeout, and the
SSM command's output names the step); 6 the workflow stopped waiting (the plan was stopped);
130 a Spot interruption notice stopped the plan (reported).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, List, Optional

from storagebench.agent.aws.client import AwsError, Client
from storagebench.agent.aws.s3 import S3, DirectorySync, parse_s3_uri
from storagebench.agent.aws.states import StepFunctions, TaskGoneError
from storagebench.agent.interruption import ERROR_NAME as INTERRUPTION_ERROR
from storagebench.agent.interruption import InterruptionWatcher, notice_cause, record_notice
from storagebench.agent.log import Progress
from storagebench.agent.node import Node, in_node_mode
from storagebench.agent.packages import PackageError, ensure_packages, needs
from storagebench.agent.runner import EXIT_INTERRUPTED, EXIT_OK, Runner
from storagebench.protocol.caveats import plan_caveats
from storagebench.protocol.plan import Plan, PlanError, check_plan

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREPORTED = 5
EXIT_GONE = 6
FETCH_ATTEMPTS = 4
FETCH_TIMEOUT_S = 60.0
MIN_HEARTBEAT_S = 1
MAX_HEARTBEAT_S = 999
MAX_TOKEN_CHARS = 8192  # Step Functions' task tokens are at most 1,024 today


class StepFailedError(RuntimeError):
    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"step '{step}' failed: {message}")
        self.step = step


def _say(message: str) -> None:
    print(f"storagebench-agent: {message}", file=sys.stderr, flush=True)


def add_parser(commands: Any) -> None:
    task = commands.add_parser(
        "task", help="run a plan as a Step Functions task (what the SSM document calls)"
    )
    task.add_argument("--plan-url", required=True, help="http(s) address of the plan (a presigned GET)")
    task.add_argument("--plan-sha256", required=True, help="SHA-256 the plan's bytes must have")
    task.add_argument("--output-uri", required=True, help="s3:// prefix the output is uploaded under")
    task.add_argument(
        "--task-token-uri", required=True, help="s3:// address of the Step Functions task token to report on"
    )
    task.add_argument("--task-token-sha256", required=True, help="SHA-256 the task token must have")
    task.add_argument("--heartbeat-s", type=int, required=True, help="seconds between heartbeats (1-999)")
    task.add_argument("--region", required=True, help="the region of the bucket and the state machine")
    task.add_argument("--out", required=True, help="local output directory (replaced)")
    task.add_argument("--mount-root", default="/mnt/storagebench")
    task.add_argument("--volumes-dir", default="/var/tmp/storagebench-volumes")


def fetch(url: str) -> bytes:
    """GET with a few retries: the plan's presigned address needs no credentials."""
    last = ""
    for attempt in range(FETCH_ATTEMPTS):
        if attempt:
            time.sleep(min(8.0, 0.5 * 2**attempt))
        try:
            with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code} {exc.reason}"
            if exc.code < 500:
                break  # expired or denied: asking again changes nothing
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
    raise RuntimeError(f"GET of the plan failed ({last})")


def verified_plan(data: bytes, expected_sha256: str) -> Plan:
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256.lower():
        raise RuntimeError(f"the plan's SHA-256 is {digest}, the command expects {expected_sha256}")
    try:
        return check_plan(json.loads(data.decode("utf-8")))
    except (ValueError, PlanError) as exc:
        raise RuntimeError(f"the plan is invalid: {exc}") from exc


class Heartbeat(threading.Thread):
    """Every ``interval`` seconds: a heartbeat (none on a node: ``states`` None), then an upload of
    what the output holds so far."""

    def __init__(self, states: Optional[StepFunctions], sync: DirectorySync, interval: float) -> None:
        super().__init__(name="heartbeat", daemon=True)
        self.states = states
        self.sync = sync
        self.interval = interval
        self.stopped = threading.Event()
        self.gone: Optional[str] = None
        self.misses = 0

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                if self.states is not None:
                    self.states.heartbeat()
            except TaskGoneError as exc:
                self.gone = str(exc)
                _say(f"the workflow stopped waiting ({exc}): stopping the plan")
                os.kill(os.getpid(), signal.SIGTERM)  # the runner tears down on SIGTERM
                return
            except AwsError as exc:
                self.misses += 1  # one lost heartbeat is survivable: the interval is half the timeout
                _say(f"heartbeat failed ({exc})")
            try:
                self.sync.run()
            except AwsError as exc:
                _say(f"progress upload failed ({exc}); the final upload retries")

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive():
            self.join(timeout=60)


def task_token(s3: S3, uri: str, expected_sha256: str) -> str:
    """The token the workflow wrote into this instance's prefix, checked against the command's digest."""
    data = s3.get(uri)
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256.lower():
        raise RuntimeError(
            f"the task token's SHA-256 is {digest}, the command expects {expected_sha256} "
            "(a later attempt of the task replaced it: this command's task is over)"
        )
    try:
        token = data.decode("ascii")
    except UnicodeDecodeError:
        raise RuntimeError("the task token is not ASCII") from None
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise RuntimeError(f"the task token has {len(token)} characters (1..{MAX_TOKEN_CHARS} expected)")
    return token


class Task:
    def __init__(self, args: argparse.Namespace, token: str) -> None:
        self.args = args
        self.states = StepFunctions(Client("states", args.region), token)
        self.sync = DirectorySync(S3(Client("s3", args.region)), args.out, args.output_uri)
        self.step = "start"

    def execute(self) -> int:
        try:
            self.step = "first heartbeat"  # proves credentials and the route to Step Functions
            self.states.heartbeat()
            return self._run()
        except TaskGoneError as exc:
            _say(f"nobody waits for this task any more ({exc})")
            self._upload_quietly()
            return EXIT_GONE
        except StepFailedError as exc:
            _say(str(exc))
            if exc.step != "upload output":
                self._upload_quietly()
            return self._report_failure(str(exc))
        except AwsError as exc:  # the first heartbeat itself could not be sent
            _say(f"step '{self.step}' failed: {exc}")
            return self._report_failure(f"step '{self.step}' failed: {exc}")

    def _run(self) -> int:
        args = self.args
        self.step = "fetch plan"
        data = self._do(lambda: fetch(args.plan_url))
        self.step = "verify plan"
        plan = self._do(lambda: verified_plan(data, args.plan_sha256))
        for caveat in plan_caveats(plan.get("targets") or []):  # into the command's output, as locally
            _say(f"warning: {caveat}")
        shutil.rmtree(args.out, ignore_errors=True)
        os.makedirs(args.out)
        self.step = "install packages"
        installed = self._do(lambda: ensure_packages(needs(plan), _say))
        self.step = "run"
        heartbeat = Heartbeat(self.states, self.sync, args.heartbeat_s)
        heartbeat.start()
        progress = Progress(args.out, quiet=True)
        watcher = InterruptionWatcher(progress, _say)
        watcher.start()
        try:
            code = Runner(plan, args.out, args.mount_root, args.volumes_dir, progress, installed).execute()
        finally:
            watcher.plan_finished()
            heartbeat.stop()
        if heartbeat.gone:
            watcher.stop()
            raise TaskGoneError(heartbeat.gone)
        self.step = "upload output"
        notice = watcher.seen()
        if notice is not None:  # the notice goes up with the output, in the one upload
            try:  # the workflow waits a heartbeat longer: the upload comes first
                self.states.heartbeat()
            except AwsError as exc:  # one lost heartbeat is survivable, as in the Heartbeat thread
                _say(f"heartbeat failed ({exc})")
            completed = self._do(lambda: record_notice(args.out, notice))
        self._do(self.sync.run)
        late = watcher.stop()  # a notice during the upload is reported too: the output is complete
        if notice is None and late is not None:
            notice = late
            completed = self._do(lambda: record_notice(args.out, late))
            self._do(self.sync.run)
        if notice is not None:
            self.step = "report"
            return self._report_interruption(notice_cause(notice, completed))
        if code == EXIT_INTERRUPTED:
            raise StepFailedError(
                "run",
                "the agent was stopped by a signal (the command was cancelled or "
                "reached its executionTimeout); its output so far is uploaded",
            )
        self.step = "report"
        try:
            self.states.success({"status": "completed", "exit_code": code})
        except AwsError as exc:
            _say(f"step 'report' failed: {exc}; the output is uploaded, the workflow will time out on it")
            return EXIT_UNREPORTED
        return EXIT_OK if code == EXIT_OK else EXIT_FAILED

    def _report_interruption(self, cause: str) -> int:
        """The workflow keeps what was measured and relaunches the rest: not a generic failure."""
        try:
            self.states.failure(INTERRUPTION_ERROR, cause)
        except TaskGoneError:
            return EXIT_GONE
        except AwsError as exc:
            _say(f"step 'report' failed: {exc}; the output is uploaded, the workflow will time out on it")
            return EXIT_UNREPORTED
        return EXIT_INTERRUPTED

    def _do(self, action: Any) -> Any:
        try:
            return action()
        except (AwsError, PackageError, RuntimeError, OSError, ValueError) as exc:
            raise StepFailedError(self.step, str(exc)) from exc

    def _upload_quietly(self) -> None:
        try:
            self.sync.run()
        except (AwsError, OSError) as exc:
            _say(f"output upload failed too ({exc})")

    def _report_failure(self, cause: str) -> int:
        try:
            self.states.failure("AgentError", cause)
        except TaskGoneError:
            return EXIT_GONE
        except AwsError as exc:
            _say(f"could not report the failure to Step Functions ({exc})")
            return EXIT_UNREPORTED
        return EXIT_FAILED


def check_arguments(args: argparse.Namespace, node: bool = False) -> List[str]:
    """Every bad argument; ``node``: the task token parameters are empty (agent.node)."""
    problems: List[str] = []
    digests = [("--plan-sha256", args.plan_sha256)]
    if not node:
        digests.append(("--task-token-sha256", args.task_token_sha256))
    for option, value in digests:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value.lower()):
            problems.append(f"{option} {value!r}: 64 hexadecimal digits expected")
    if not MIN_HEARTBEAT_S <= args.heartbeat_s <= MAX_HEARTBEAT_S:
        problems.append(f"--heartbeat-s {args.heartbeat_s}: {MIN_HEARTBEAT_S}..{MAX_HEARTBEAT_S} expected")
    if not args.plan_url.startswith(("https://", "http://")):
        problems.append(f"--plan-url {args.plan_url[:60]!r}: an http(s) address expected")
    uris = [("--output-uri", args.output_uri)] + ([] if node else [("--task-token-uri", args.task_token_uri)])
    for option, uri in uris:
        try:
            parse_s3_uri(uri)
        except ValueError as exc:
            problems.append(f"{option}: {exc}")
    return problems


def main(args: argparse.Namespace) -> int:
    if args.task_token_uri == "" or args.task_token_sha256 == "":
        return node_main(args)
    try:
        token = task_token(S3(Client("s3", args.region)), args.task_token_uri, args.task_token_sha256)
    except (AwsError, RuntimeError, ValueError) as exc:  # nothing to report on: SSM keeps this line
        _say(f"step 'fetch task token' failed: {exc}")
        return EXIT_UNREPORTED
    problems = check_arguments(args)
    if not problems:
        return Task(args, token).execute()
    for problem in problems:
        _say(problem)
    try:  # the token and region are good: the workflow hears of it now, not at a timeout
        StepFunctions(Client("states", args.region), token).failure(
            "AgentError", "step 'arguments' failed: " + "; ".join(problems)
        )
    except (AwsError, TaskGoneError, ValueError) as exc:
        _say(f"could not report the failure to Step Functions ({exc})")
    return EXIT_USAGE


# ---------------------------------------------------------------------- node mode


def node_main(args: argparse.Namespace) -> int:
    """A node of a multi-machine config: empty task-token parameters, never a callback.

    Only a plan whose ``topology.self`` is not the primary client may run this way; anything else
    is refused before it runs (nobody would hear of its result).
    """
    if args.task_token_uri != "" or args.task_token_sha256 != "":
        _say(
            "step 'arguments' failed: --task-token-uri and --task-token-sha256 are both empty (a node of "
            "a multi-machine config) or both given, not one of them"
        )
        return EXIT_USAGE
    problems = check_arguments(args, node=True)
    for problem in problems:
        _say(f"step 'arguments' failed: {problem}")
    if problems:
        return EXIT_USAGE
    try:
        plan = verified_plan(fetch(args.plan_url), args.plan_sha256)
    except RuntimeError as exc:
        _say(f"step 'fetch plan' failed: {exc}")
        return EXIT_UNREPORTED
    if not in_node_mode(plan):
        _say(
            "step 'arguments' failed: empty --task-token-uri and --task-token-sha256 are only for a node of "
            "a multi-machine config (a plan whose topology.self is not client 0); this plan is "
            + ("the primary client's" if "topology" in plan else "a single machine's")
            + ", which reports to the workflow"
        )
        return EXIT_USAGE
    return NodeTask(args, plan).execute()


class NodeTask:
    """Serve the node's state from the start, run its plan, upload its output; report to nobody."""

    def __init__(self, args: argparse.Namespace, plan: Plan) -> None:
        self.args = args
        self.plan = plan
        self.sync = DirectorySync(S3(Client("s3", args.region)), args.out, args.output_uri)

    def execute(self) -> int:
        args = self.args
        shutil.rmtree(args.out, ignore_errors=True)
        os.makedirs(args.out)
        role = Node(self.plan["topology"], args.out, _say, self.plan.get("power_off"))
        try:
            role.start()  # before the packages: the primary sees "setting-up", not silence
        except OSError as exc:
            _say(f"step 'control endpoint' failed: {exc}")
            return EXIT_FAILED
        uploads = Heartbeat(None, self.sync, args.heartbeat_s)
        uploads.start()
        try:
            installed = ensure_packages(needs(self.plan), _say)
        except (PackageError, RuntimeError, OSError) as exc:
            _say(f"step 'install packages' failed: {exc}")
            role.failed(f"step 'install packages' failed: {exc}", interrupted=False)
            role.before_teardown()  # holds until the primary has read why, and says finish
            role.after_teardown()
            uploads.stop()
            self._upload()
            return EXIT_FAILED
        try:
            code = Runner(
                self.plan,
                args.out,
                args.mount_root,
                args.volumes_dir,
                Progress(args.out, quiet=True),
                installed,
                role=role,
            ).execute()
        finally:
            uploads.stop()
        self._upload()
        return EXIT_OK if code == EXIT_OK else EXIT_FAILED

    def _upload(self) -> None:
        try:
            self.sync.run()
        except (AwsError, OSError) as exc:
            _say(f"step 'upload output' failed: {exc}")
