"""The primary client's and extra clients' view of the other machines: wait until they are ready,
check they are still there between steps, and tell them to finish.

Every call goes to a machine's control endpoint (``agent.control``). A machine that never
answers, answers ``failed`` or answers a state it cannot be in is named in a typed error
(``protocol.topology``): role, index, instance id, address and what was seen.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Set

from storagebench.agent.control import FAILED, FINISHED, READY, STATES
from storagebench.protocol.topology import (
    BarrierTimeoutError,
    Machine,
    NodeFailedError,
    NodeLostError,
    machine_name,
)

POLL_S = 0.5
STATUS_TIMEOUT_S = 5.0
FINISH_POLL_S = 0.2  # a teardown is often quick: the run's end should not wait a whole poll for it
FINISH_WAIT_S = 600.0  # per group of machines: their teardown hooks run meanwhile


class UnreachableError(Exception):
    """No usable answer from a machine's control endpoint (said in the message). ``refused``: nothing
    listens there any more (the connection was refused), unlike a slow answer."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


def _request(url: str, method: str, timeout_s: float) -> Dict[str, Any]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise UnreachableError(f"HTTP {exc.code} from {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        refused = isinstance(reason, ConnectionRefusedError)
        raise UnreachableError(f"no answer from {url} ({reason})", refused) from None
    try:
        document = json.loads(body.decode("utf-8"))
    except ValueError:
        raise UnreachableError(f"{url} answered {body[:80]!r}, not JSON") from None
    if not isinstance(document, dict) or document.get("state") not in STATES:
        raise UnreachableError(f"{url} answered {document!r}, not a status")
    return document


def status(machine: Machine, port: int, timeout_s: float = STATUS_TIMEOUT_S) -> Dict[str, Any]:
    """The machine's ``GET /status``; UnreachableError when there is no usable answer."""
    return _request(f"http://{machine['ip']}:{port}/status", "GET", timeout_s)


def _failed(machine: Machine, seen: Dict[str, Any]) -> NodeFailedError:
    return NodeFailedError(f"{machine_name(machine)} failed: {seen.get('error') or 'no error given'}")


def wait_ready(
    machines: List[Machine],
    port: int,
    timeout_s: float,
    say: Callable[[str], None],
    poll_s: float = POLL_S,
) -> None:
    """Return once every machine answers ``ready``; a ``failed`` one raises at once with its error.

    A machine that does not answer yet is still booting (asked again until the timeout); one that
    answered and then refuses connections has gone (its machine died while setting up: lost at
    once, not at the deadline); one that already says ``finished`` was told to stop by someone
    else: it will not be ready again.
    """
    deadline = time.monotonic() + timeout_s
    waiting = list(machines)
    seen: Dict[str, str] = {}
    answered: Set[str] = set()
    if waiting:
        say("waiting for " + ", ".join(machine_name(m) for m in waiting) + " to be ready")
    while waiting:
        for machine in list(waiting):
            name = machine_name(machine)
            try:
                answer = status(machine, port, min(STATUS_TIMEOUT_S, max(0.5, deadline - time.monotonic())))
            except UnreachableError as exc:
                if exc.refused and name in answered:
                    raise NodeLostError(f"{name} stopped answering while {seen[name]} ({exc})") from None
                seen[name] = str(exc)
                continue
            answered.add(name)
            if seen.get(name) != f"state {answer['state']}" and answer["state"] not in (READY, FAILED):
                say(f"{name} answers: {answer['state']}")  # when each node came up, in the log
            seen[name] = f"state {answer['state']}"
            if answer["state"] == READY:
                waiting.remove(machine)
                say(f"{name} is ready")
            elif answer["state"] == FAILED:
                raise _failed(machine, answer)
            elif answer["state"] == FINISHED:
                raise NodeLostError(f"{name} says finished before the run began: {answer.get('error')}")
        if not waiting:
            return
        if time.monotonic() >= deadline:
            detail = "; ".join(
                f"{machine_name(m)}: {seen.get(machine_name(m), 'not asked')}" for m in waiting
            )
            raise BarrierTimeoutError(f"not ready after {timeout_s:.0f} s: {detail}")
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))


def check_alive(machines: List[Machine], port: int, after: str, timeout_s: float = STATUS_TIMEOUT_S) -> None:
    """One GET each: every machine must still say ``ready`` (``after``: where the run is, for the error)."""
    for machine in machines:
        name = machine_name(machine)
        try:
            answer = status(machine, port, timeout_s)
        except UnreachableError as exc:
            raise NodeLostError(f"{name} stopped answering {after} ({exc})") from None
        if answer["state"] == FAILED:
            raise NodeLostError(f"{name} says failed {after}: {answer.get('error') or 'no error given'}")
        if answer["state"] != READY:
            raise NodeLostError(f"{name} says {answer['state']} {after}, expected ready")


def start_node_loss(machine: Machine, port: int, step: str) -> None:
    """``POST /node-loss?step=...``: the measured phase of ``step`` starts and ``machine`` counts
    its planned removal from now. NodeLostError naming it when it does not take the order."""
    url = f"http://{machine['ip']}:{port}/node-loss?step={urllib.parse.quote(step)}"
    request = urllib.request.Request(url, method="POST", data=b"")
    try:
        with urllib.request.urlopen(request, timeout=STATUS_TIMEOUT_S):
            return
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace")
        try:
            said = json.loads(body).get("error") or body
        except (ValueError, AttributeError):
            said = body[:200]
        raise NodeLostError(f"{machine_name(machine)} refused its removal in step {step}: {said}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NodeLostError(
            f"{machine_name(machine)} could not be told that step {step} removes it ({reason})"
        ) from None


def finish(
    machines: List[Machine],
    port: int,
    say: Callable[[str], None],
    wait_s: float = FINISH_WAIT_S,
    poll_s: float = FINISH_POLL_S,
) -> List[str]:
    """``POST /finish`` to each, then wait (at most ``wait_s`` together) until each says ``finished``.

    A machine that does not answer is logged and left to the workflow's cleanup (it terminates
    every machine of the run); returns those lines, one per machine not seen finished.
    """
    told: List[Machine] = []
    problems: List[str] = []
    for machine in machines:
        try:
            _request(f"http://{machine['ip']}:{port}/finish", "POST", STATUS_TIMEOUT_S)
            told.append(machine)
        except UnreachableError as exc:
            problems.append(f"{machine_name(machine)} was not told to finish: {exc}")
    deadline = time.monotonic() + wait_s
    last: Dict[str, Optional[str]] = {}
    while told:
        for machine in list(told):
            try:
                answer = status(machine, port)
            except UnreachableError as exc:  # it may have finished and exited between two polls
                last[machine_name(machine)] = str(exc)
                continue
            last[machine_name(machine)] = f"state {answer['state']}"
            if answer["state"] == FINISHED:
                told.remove(machine)
                say(
                    f"{machine_name(machine)} finished"
                    + (f" ({answer['error']})" if answer.get("error") else "")
                )
        if not told or time.monotonic() >= deadline:
            break
        time.sleep(poll_s)
    for machine in told:
        problems.append(
            f"{machine_name(machine)} did not say finished within {wait_s:.0f} s "
            f"(last: {last.get(machine_name(machine))})"
        )
    for problem in problems:
        say(problem)
    return problems
