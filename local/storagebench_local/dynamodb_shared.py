"""One DynamoDB Local kept running between commands, so ``results`` and ``report`` answer at once.

Starting DynamoDB Local's JVM takes 3-7 s; reading a run from it takes milliseconds. So local
commands share one server per data directory instead of starting their own::

    with shared_dynamodb_local(Path(".storagebench")) as db:   # reused, or started detached
        client = db.client()

* **Reuse**: ``<root>/dynamodb-local.json`` names the server (port, JVM pid, keeper pid, data
  directory, version). A command reuses it when both processes live and the port answers
  ListTables; otherwise (dead, stale, another version or data directory) it stops what is left
  and starts a new one. A file lock serialises the check-or-start, so two commands at once start
  one server.
* **Keeper**: the server is started by a small detached Python process (``python -m
  storagebench_local.dynamodb_shared serve``, its own session, log in
  ``<root>/dynamodb-local.log``) that owns the JVM, writes the state file, and stops the JVM
  and exits once the server has been idle for ``idle_s`` (15 minutes by default): no command
  holding a lease (``<root>/dynamodb-local.leases/<pid>``, removed at exit, ignored once that pid
  is gone) and none started since. SIGTERM stops it the same way (``stop_shared``).
* **Opting out**: ``STORAGEBENCH_DYNAMODB_LOCAL_IDLE_S=0`` gives each command its own server,
  stopped when it ends, as before. Under pytest (``PYTEST_CURRENT_TEST`` set) that is the
  default, so tests never leave a server running; a test of the shared server passes ``idle_s``
  and calls ``stop_shared``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from storagebench_local.dynamodb_local import (
    DYNAMODB_LOCAL_VERSION,
    MAIN_CLASS,
    REGION,
    DynamoDBLocal,
    DynamoDBLocalUnavailable,
    _list_tables,
)

__all__ = [
    "DEFAULT_IDLE_S",
    "IDLE_VARIABLE",
    "InvalidIdleTimeout",
    "ServerState",
    "SharedServer",
    "idle_timeout_s",
    "read_state",
    "shared_dynamodb_local",
    "stop_shared",
]

IDLE_VARIABLE = "STORAGEBENCH_DYNAMODB_LOCAL_IDLE_S"
DEFAULT_IDLE_S = 900.0
STATE_FILE = "dynamodb-local.json"
LOCK_FILE = "dynamodb-local.lock"
LOG_FILE = "dynamodb-local.log"
LEASES = "dynamodb-local.leases"
# The keeper's JVM has its own start deadline, counted in its progress (DynamoDBLocal's, which on
# a busy machine may take minutes of wall): the keeper reports that failure by exiting. This one
# only ends the wait for a keeper that neither answers nor exits.
START_TIMEOUT_S = 900.0


class InvalidIdleTimeout(ValueError):  # noqa: N818 - reads as the problem it names
    """An idle timeout that is not a number of seconds between 0 and a week."""


def idle_timeout_s(value: float | None = None) -> float:
    """Seconds a shared server waits idle before it stops; 0 means no shared server.

    ``value`` wins, then $STORAGEBENCH_DYNAMODB_LOCAL_IDLE_S, then 0 under pytest, else 15 min.
    """
    if value is not None:
        chosen, source = value, "idle_s"
    else:
        text = os.environ.get(IDLE_VARIABLE, "").strip()
        if not text:
            return 0.0 if os.environ.get("PYTEST_CURRENT_TEST") else DEFAULT_IDLE_S
        try:
            chosen, source = float(text), f"${IDLE_VARIABLE}"
        except ValueError:
            raise InvalidIdleTimeout(
                f"{IDLE_VARIABLE}={text!r} is not a number: give the idle seconds before the shared "
                "DynamoDB Local stops (0: one server per command)"
            ) from None
    if not 0 <= chosen < 7 * 86400:
        raise InvalidIdleTimeout(
            f"{source}={chosen!r}: the idle timeout is 0 (no shared server) up to a week in seconds"
        )
    return chosen


@dataclass(frozen=True)
class ServerState:
    """What the state file says about the shared server."""

    port: int
    jvm_pid: int
    keeper_pid: int
    data_dir: str
    version: str
    started_at: float
    idle_s: float

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def read_state(root: Path) -> ServerState | None:
    """The state file's server, None when there is none or it is unreadable (then it is restarted)."""
    try:
        document = json.loads((root / STATE_FILE).read_text())
        return ServerState(**document)
    except (OSError, ValueError, TypeError):
        return None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: a keeper this process started is reaped here)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc: os.kill said it exists


def _is_dynamodb_local(pid: int) -> bool:
    """Whether ``pid`` is a DynamoDB Local JVM (so a recycled pid is never signalled)."""
    try:
        return MAIN_CLASS.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _healthy(state: ServerState, data_dir: Path) -> bool:
    return (
        state.version == DYNAMODB_LOCAL_VERSION
        and state.data_dir == str(data_dir)
        and _alive(state.keeper_pid)
        and _alive(state.jvm_pid)
        and _list_tables(state.endpoint_url, timeout_s=1.0)
    )


class SharedServer:
    """A running shared server seen from one command: its endpoint and a client."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.endpoint_url = state.endpoint_url
        self.pid = state.jvm_pid

    def client(self, **kwargs: Any) -> Any:
        """A boto3 DynamoDB client for the shared server (dummy credentials, as ``DynamoDBLocal``)."""
        import boto3

        options: dict[str, Any] = {
            "endpoint_url": self.endpoint_url,
            "region_name": REGION,
            "aws_access_key_id": "local",
            "aws_secret_access_key": "local",
        }
        options.update(kwargs)
        return boto3.client("dynamodb", **options)


@contextlib.contextmanager
def shared_dynamodb_local(
    root: Path, *, idle_s: float | None = None, cache_dir: Path | None = None
) -> Iterator[SharedServer | DynamoDBLocal]:
    """DynamoDB Local over ``<root>/dynamodb``: the shared server (reused or started), held by a
    lease while the block runs; or, with an idle timeout of 0, a server of this block's own."""
    root = root.resolve()
    idle = idle_timeout_s(idle_s)
    if idle == 0:
        with DynamoDBLocal(root, cache_dir=cache_dir) as own:
            yield own
        return
    root.mkdir(parents=True, exist_ok=True)
    state = _ensure_running(root, idle, cache_dir)
    lease = root / LEASES / str(os.getpid())
    lease.parent.mkdir(exist_ok=True)
    lease.touch()
    try:
        yield SharedServer(state)
    finally:
        lease.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            os.utime(root / STATE_FILE)  # idle from now on


def _ensure_running(root: Path, idle: float, cache_dir: Path | None) -> ServerState:
    data_dir = (root / "dynamodb").resolve()
    with (root / LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = read_state(root)
        if state is not None and _healthy(state, data_dir):
            os.utime(root / STATE_FILE)  # used now: the idle clock restarts
            return state
        if state is not None:
            _stop(state, root)
        return _start(root, idle, cache_dir)


def _start(root: Path, idle: float, cache_dir: Path | None) -> ServerState:
    (root / STATE_FILE).unlink(missing_ok=True)
    server = DynamoDBLocal(root, cache_dir=cache_dir)
    if shutil.which(server.java) is None:  # named here, as DynamoDBLocal names it, not in the log
        raise DynamoDBLocalUnavailable(
            "java",
            f"Java ({server.java}) is not on PATH: DynamoDB Local {server.version} needs a Java 17 "
            "runtime (apt-get install openjdk-17-jre-headless)",
        )
    server.install()  # the first install (Maven, up to a minute) here: its errors are typed
    package_parent = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "storagebench_local.dynamodb_shared", "serve", str(root), str(idle)]
    if cache_dir is not None:
        command.append(str(Path(cache_dir).resolve()))
    with (root / LOG_FILE).open("ab") as log:
        keeper = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=root,
            env=env,
            start_new_session=True,  # not killed with the terminal or the command that started it
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        state = read_state(root)
        if state is not None and state.keeper_pid == keeper.pid:
            return state
        if keeper.poll() is not None:
            raise DynamoDBLocalUnavailable(
                "startup",
                f"the shared DynamoDB Local exited with status {keeper.returncode} before answering; "
                f"its log ({root / LOG_FILE}) ends with:\n{_tail(root / LOG_FILE)}",
            )
        time.sleep(0.1)
    keeper.terminate()
    raise DynamoDBLocalUnavailable(
        "startup", f"the shared DynamoDB Local did not answer within {START_TIMEOUT_S:.0f} s"
    )


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop(state: ServerState, root: Path, timeout_s: float = 15.0) -> None:
    """Stop a server named by the state file: its keeper (which stops the JVM), else the JVM."""
    if _alive(state.keeper_pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.keeper_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _alive(state.keeper_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    if _alive(state.jvm_pid) and _is_dynamodb_local(state.jvm_pid):  # a keeper killed with -9
        os.kill(state.jvm_pid, signal.SIGKILL)
    (root / STATE_FILE).unlink(missing_ok=True)


def stop_shared(root: Path) -> bool:
    """Stop the shared server of ``root`` if one runs; whether there was one."""
    root = root.resolve()
    if not (root / LOCK_FILE).exists():
        return False
    with (root / LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = read_state(root)
        if state is None:
            return False
        _stop(state, root)
        return True


# ------------------------------------------------------------------------------ the keeper


def _live_leases(root: Path) -> int:
    live = 0
    for lease in (root / LEASES).glob("*") if (root / LEASES).is_dir() else []:
        if lease.name.isdigit() and _alive(int(lease.name)):
            live += 1
        else:
            lease.unlink(missing_ok=True)  # its command is gone
    return live


def serve(root: Path, idle: float, cache_dir: Path | None) -> None:
    """The keeper: start the JVM, publish the state file, stop both after ``idle`` idle seconds."""
    stopping = False

    def on_term(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    server = DynamoDBLocal(root, cache_dir=cache_dir).start()
    assert server.port is not None and server.pid is not None
    state = ServerState(
        port=server.port,
        jvm_pid=server.pid,
        keeper_pid=os.getpid(),
        data_dir=str(server.data_dir.resolve()),
        version=server.version,
        started_at=time.time(),
        idle_s=idle,
    )
    temporary = root / f".{STATE_FILE}.{os.getpid()}"
    temporary.write_text(json.dumps(asdict(state)))
    temporary.replace(root / STATE_FILE)
    print(
        f"{time.strftime('%Y-%m-%dT%H:%M:%S')} DynamoDB Local on port {server.port}, idle timeout {idle:g} s",
        flush=True,
    )
    poll = max(0.2, min(30.0, idle / 10))
    try:
        while not stopping and server.running:
            time.sleep(poll)
            if _idle_for(root) > idle and _stop_if_still_idle(root, idle, server):
                print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} idle for {idle:g} s: stopped", flush=True)
                return
    finally:
        _release(root, server)


def _idle_for(root: Path) -> float:
    """Seconds since the server was last used: 0 while a command holds a lease."""
    if _live_leases(root):
        with contextlib.suppress(OSError):
            os.utime(root / STATE_FILE)
        return 0.0
    try:
        return time.time() - (root / STATE_FILE).stat().st_mtime
    except OSError:
        return float("inf")  # the state file is gone: nothing can find this server any more


def _stop_if_still_idle(root: Path, idle: float, server: DynamoDBLocal) -> bool:
    """Under the lock commands take to reuse the server, so none picks it up while it stops."""
    with (root / LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _idle_for(root) <= idle:
            return False
        _release(root, server)
        return True


def _release(root: Path, server: DynamoDBLocal) -> None:
    server.stop()
    current = read_state(root)
    if current is not None and current.keeper_pid == os.getpid():
        (root / STATE_FILE).unlink(missing_ok=True)


def main(argv: list[str]) -> None:
    if len(argv) not in (3, 4) or argv[0] != "serve":
        raise SystemExit("usage: python -m storagebench_local.dynamodb_shared serve ROOT IDLE_S [CACHE_DIR]")
    serve(Path(argv[1]), float(argv[2]), Path(argv[3]) if len(argv) == 4 else None)


if __name__ == "__main__":
    main(sys.argv[1:])
