"""A small cluster of agents for tests: plans with a topology, each agent a real process."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

LAYER = str(Path(__file__).resolve().parents[4] / "layers" / "storagebench")


def free_port(ips: List[str]) -> int:
    """A port number free on every address (they are all served at once)."""
    for _ in range(200):
        port = random.randint(20000, 60000)
        sockets = []
        try:
            for ip in ips:
                s = socket.socket()
                sockets.append(s)
                s.bind((ip, port))
            return port
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no free port")


class Agent:
    """One agent process (``python -m storagebench.agent run``)."""

    def __init__(self, name: str, process: subprocess.Popen[bytes], out: Path) -> None:
        self.name = name
        self.process = process
        self.out = out

    def wait(self, timeout: float = 60) -> int:
        return self.process.wait(timeout=timeout)

    def manifest(self) -> Dict[str, Any]:
        return dict(json.loads((self.out / "manifest.json").read_text()))

    def log(self) -> str:
        path = self.out / "agent.log"
        return path.read_text() if path.exists() else ""


class Cluster:
    """Machines on 127.<a>.<b>.<n>, their plans and their agent processes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.net = f"127.{random.randint(100, 250)}.{random.randint(1, 250)}"
        self.machines: List[Dict[str, Any]] = []
        self.agents: List[Agent] = []
        self.control_port = 0
        self.fio_port = 0

    def machine(self, role: str, index: int) -> Dict[str, Any]:
        ip = f"{self.net}.{len(self.machines) + 2}"
        machine = {"role": role, "index": index, "instance_id": f"i-{role}{index}", "ip": ip, "devices": {}}
        self.machines.append(machine)
        return machine

    def ports(self) -> None:
        ips = [m["ip"] for m in self.machines]
        self.control_port = free_port(ips)
        self.fio_port = free_port(ips)
        while self.fio_port == self.control_port:
            self.fio_port = free_port(ips)

    def topology(self, me: Dict[str, Any], ready_timeout_s: int = 30) -> Dict[str, Any]:
        if not self.control_port:
            self.ports()
        return {
            "self": {"role": me["role"], "index": me["index"]},
            "machines": self.machines,
            "control_port": self.control_port,
            "fio_port": self.fio_port,
            "ready_timeout_s": ready_timeout_s,
        }

    def plan(self, me: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
        plan: Dict[str, Any] = {
            "plan_version": 1,
            "run_id": "r-topo",
            "config_id": "c1",  # every machine of a config has its id (and its own names: protocol.topology)
            "targets": [],
            "prewarm": {"method": "none"},
            "steps": [],
            "topology": self.topology(me, fields.pop("ready_timeout_s", 30)),
        }
        plan.update(fields)
        return plan

    def start(self, name: str, plan: Dict[str, Any], env: Optional[Dict[str, str]] = None) -> Agent:
        """``env``: variables the agent gets besides this process's (a stand-in first on PATH)."""
        directory = self.root / name
        directory.mkdir()
        (directory / "plan.json").write_text(json.dumps(plan))
        out = directory / "out"
        env = dict(os.environ, PYTHONPATH=LAYER, **(env or {}))
        with (directory / "stderr").open("wb") as stderr:  # the child keeps its own copy
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "storagebench.agent",
                    "run",
                    "--plan",
                    str(directory / "plan.json"),
                    "--out",
                    str(out),
                    "--mount-root",
                    str(directory / "mnt"),
                    "--volumes-dir",
                    str(directory / "volumes"),
                    "--quiet",
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
        agent = Agent(name, process, out)
        self.agents.append(agent)
        return agent

    def status(self, machine: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        try:
            url = f"http://{machine['ip']}:{self.control_port}/status"
            with urllib.request.urlopen(url, timeout=2) as response:
                return dict(json.loads(response.read()))
        except OSError:
            return None

    def finish(self, machine: Dict[str, Any]) -> int:
        url = f"http://{machine['ip']}:{self.control_port}/finish"
        with urllib.request.urlopen(
            urllib.request.Request(url, method="POST", data=b""), timeout=5
        ) as response:
            return int(response.status)

    def await_state(self, machine: Dict[str, Any], state: str, timeout: float = 20) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = None
        while time.monotonic() < deadline:
            seen = self.status(machine)
            if seen is not None and seen["state"] == state:
                return seen
            time.sleep(0.05)
        raise AssertionError(f"{machine['role']}-{machine['index']} never said {state} (last: {seen})")

    def await_log(self, agent: Agent, line: str, timeout: float = 30) -> None:
        """Until ``agent``'s log holds ``line`` (what it has seen, not a guess at how long that takes)."""
        deadline = time.monotonic() + timeout
        while line not in agent.log():
            if agent.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{agent.name} never logged {line!r}; its log:\n{agent.log()}")
            time.sleep(0.05)

    def close(self) -> None:
        for agent in self.agents:
            if agent.process.poll() is None:
                os.killpg(agent.process.pid, signal.SIGTERM)
                try:
                    agent.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(agent.process.pid, signal.SIGKILL)
                    agent.process.wait()
