"""Spot interruption notices: watched on the instance metadata service, acted on like a SIGTERM.

EC2 gives a Spot instance two minutes' notice before it reclaims it: ``GET
/latest/meta-data/spot/instance-action`` answers 404 until then, and afterwards a JSON document
``{"action": "terminate"|"stop"|"hibernate", "time": "2026-11-25T20:05:44Z"}`` (the time of the
action). ``InterruptionWatcher`` polls it every few seconds (IMDSv2: a session token first, from
``AWS_EC2_METADATA_SERVICE_ENDPOINT`` as the SDKs find it). On a notice it records when it came and
what the runner was doing, and stops the plan the way SSM's cancel does (SIGTERM to the agent):
the runner records the step under way as interrupted with its partial output, keeps every
completed step, and tears down. The task then uploads the output and reports
``SpotInterruptionError`` with the notice (``notice_cause``), which the workflow tells apart from a
failure: it keeps what was measured and relaunches the repetitions not done.

A notice during teardown or the final upload stops nothing: every step is already done, and
the two minutes are enough to finish; the notice is still reported.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Optional

from storagebench.agent.aws.credentials import DEFAULT_ENDPOINT
from storagebench.agent.log import Progress, utc_now
from storagebench.protocol.manifest import STATUS_OK, write_json_atomic

INSTANCE_ACTION_PATH = "/latest/meta-data/spot/instance-action"
TOKEN_PATH = "/latest/api/token"
TOKEN_TTL_S = 21_600
POLL_S = 5.0  # AWS recommends checking every 5 s: the notice comes 2 min ahead
TIMEOUT_S = 2.0
MISSES_PER_LINE = 12
ACTIONS = ("terminate", "stop", "hibernate")
ERROR_NAME = "SpotInterruptionError"  # the workflow's name for it (core.errors)
NOT_STOPPING = ("teardown", "done", "upload")  # stages where every step is already over
# Set once a notice stops the plan: the runner's signal handler names it instead of "SIGTERM"
_STOP: Dict[str, str] = {}


class NoticeError(RuntimeError):
    """The metadata service answered the instance-action path with something that is no notice."""


def stop_reason() -> Optional[str]:
    """Why the agent is being stopped, when a Spot notice asked it (None: some other signal)."""
    return _STOP.get("reason")


def _metadata_endpoint() -> str:
    return (os.environ.get("AWS_EC2_METADATA_SERVICE_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def parse_notice(body: str) -> Dict[str, str]:
    """The instance-action document: its action (one of ACTIONS) and time (ISO 8601, UTC)."""
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise NoticeError(f"{INSTANCE_ACTION_PATH}: not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise NoticeError(f"{INSTANCE_ACTION_PATH}: a JSON object expected, got {body[:80]!r}")
    action, when = document.get("action"), document.get("time")
    if action not in ACTIONS:
        raise NoticeError(f"{INSTANCE_ACTION_PATH}: action {action!r}, one of {', '.join(ACTIONS)} expected")
    if not isinstance(when, str) or not when:
        raise NoticeError(f"{INSTANCE_ACTION_PATH}: time {when!r}, an ISO 8601 time expected")
    return {"action": str(action), "time": when}


def read_notice(endpoint: Optional[str] = None) -> Optional[Dict[str, str]]:
    """The pending Spot interruption notice, or None (404: no notice).

    Raises OSError (urllib's errors are OSErrors) when the metadata service does not answer,
    NoticeError when it answers with something else than a notice.
    """
    base = (endpoint or _metadata_endpoint()).rstrip("/")
    token_request = urllib.request.Request(
        base + TOKEN_PATH, method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": str(TOKEN_TTL_S)}
    )
    with urllib.request.urlopen(token_request, timeout=TIMEOUT_S) as response:
        token = response.read().decode("utf-8")
    request = urllib.request.Request(base + INSTANCE_ACTION_PATH, headers={"X-aws-ec2-metadata-token": token})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return parse_notice(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def _stop_agent(reason: str) -> None:
    _STOP["reason"] = reason
    os.kill(os.getpid(), signal.SIGTERM)  # the runner records the step as interrupted and tears down


class InterruptionWatcher(threading.Thread):
    """Polls for a Spot notice; on one, records it with the runner's stage and stops the plan."""

    def __init__(
        self,
        progress: Progress,
        say: Callable[[str], None],
        interval: Optional[float] = None,
        endpoint: Optional[str] = None,
        stop_agent: Callable[[str], None] = _stop_agent,
    ) -> None:
        super().__init__(name="spot-interruption", daemon=True)
        self.progress = progress
        self.say = say
        self.interval = POLL_S if interval is None else interval
        self.endpoint = endpoint
        self.stop_agent = stop_agent
        self.notice: Optional[Dict[str, Any]] = None
        self.finished = False  # the plan is over: a notice now stops nothing
        self.misses = 0
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._stopped.is_set():
            try:
                found = read_notice(self.endpoint)
            except (OSError, NoticeError) as exc:  # a missed poll is survivable: the next one asks again
                self.misses += 1
                if self.misses % MISSES_PER_LINE == 1:  # the first, then about once a minute
                    self.say(f"spot interruption check failed ({exc}; {self.misses} so far)")
                found = None
            if found is not None:
                self._noticed(found)
                return
            self._stopped.wait(self.interval)

    def _noticed(self, found: Dict[str, str]) -> None:
        with self._lock:
            state = dict(self.progress.state)
            stage = "upload" if self.finished else str(state.get("stage") or "starting")
            self.notice = {
                "action": found["action"],
                "action_time": found["time"],
                "noticed_at": utc_now(),
                "stage": stage,
                "step": state.get("current") if stage == "workloads" else None,
            }
        message = (
            f"Spot interruption notice: the instance will {found['action']} at {found['time']} "
            f"(noticed during {stage})"
        )
        self.say(message)
        if stage not in NOT_STOPPING:
            self.stop_agent(message)

    def plan_finished(self) -> None:
        """The runner returned: a notice from now on is recorded, nothing is stopped."""
        with self._lock:
            self.finished = True

    def seen(self) -> Optional[Dict[str, Any]]:
        """The notice seen so far, if any (the watcher goes on polling)."""
        with self._lock:
            return dict(self.notice) if self.notice is not None else None

    def stop(self) -> Optional[Dict[str, Any]]:
        """Stop polling; the notice seen, if any."""
        self._stopped.set()
        if self.is_alive():
            self.join(timeout=TIMEOUT_S * 3)
        with self._lock:
            return dict(self.notice) if self.notice is not None else None


def notice_cause(notice: Dict[str, Any], completed_steps: int) -> str:
    """The cause of the SpotInterruptionError the task reports: JSON the workflow reads back."""
    return json.dumps({"notice": notice, "completed_steps": completed_steps}, sort_keys=True)


def record_notice(output_dir: str, notice: Dict[str, Any]) -> int:
    """Write the notice into the finished run's ``manifest.json`` (``interruption``); the number of
    steps it completed, which the relaunch does not repeat."""
    path = os.path.join(output_dir, "manifest.json")
    with open(path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    manifest["interruption"] = notice
    write_json_atomic(path, manifest)
    return sum(1 for step in manifest.get("steps", []) if step.get("status") == STATUS_OK)
