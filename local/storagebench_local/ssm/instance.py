"""One local instance: its own view of the paths the document uses, its metadata service, its shell.

An EC2 instance gives the document three things this machine must give each local instance
separately, so configs that run at once cannot collide:

* its own ``/opt/storagebench`` and ``/var/lib/storagebench``: each command runs in a private
  mount namespace (``unshare --mount``) where both are bind mounts of the instance's directory;
* an instance metadata service: AWS's ``ec2-metadata-mock`` on its own port, IMDSv2 only, with the
  instance's id, type, zone and role credentials (the agent, like the SDKs, finds it through
  ``AWS_EC2_METADATA_SERVICE_ENDPOINT``, the variable for a non-default address);
* AWS endpoints: ``AWS_ENDPOINT_URL`` points every call at the local server (moto's server mode),
  as the instance's network would route them to AWS;
* its power button: ``systemctl poweroff`` (a node removing itself, ``agent.power``) freezes the
  instance's own processes, found by its metadata address, instead of powering off the host
  (``ssm/power/systemctl``, bound over ``/usr/local/sbin``; the host's ``systemctl`` stays hidden
  behind it for every other verb).

Nothing else of the host's environment reaches the shell: SSM runs documents as root with a
minimal environment, and host credentials must not stand in for the instance role's.
``overrides`` change the instance's world for the fault matrix (a package manager that fails, a
Step Functions endpoint that refuses callbacks), never the document.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from storagebench_local.ssm.image_root import instance_copy
from storagebench_local.ssm.nfs_client import install_nfs_client

INSTANCE_PATHS = ("/opt/storagebench", "/var/lib/storagebench")
"""What the document writes on the instance: the agent and plan, and the agent's output."""
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
POWER = Path(__file__).with_name("power")
"""The machine's power button: a ``systemctl`` whose ``poweroff`` stops this instance's processes,
bound over ``/usr/local/sbin`` (first on ``SYSTEM_PATH``) in the instance's mount namespace, so the
agent's ``systemctl poweroff`` (``agent.power``, a node_loss) stops this instance, never the host."""
STOP_GRACE_S = 30.0
IMDS_START_S = 10.0
NO_SPOT_NOTICE = "2999-12-31T23:59:59Z"
"""ec2-metadata-mock serves a Spot notice from its start unless told when: not before this."""
SPOT_NOTICE_LEAD = timedelta(minutes=2)  # EC2 acts two minutes after the notice


class InstanceError(RuntimeError):
    """The local instance cannot be started (a tool is missing, its metadata service does not answer)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Tools:
    """Where the instance's metadata service comes from (``make setup`` builds it under ``.tools``)."""

    imds_mock: Path
    # The compiled EBS twin the plan names (LocalOptions.twin_program): hardware this machine
    # provides, so a chrooted instance sees it at the same path, read-only.
    twin: Path | None = None
    # The user-space NFS client (native/nfs-client) each instance image gets as its mount.nfs
    # (ssm.nfs_client); None: local instances have no NFS client
    nfs_client: Path | None = None

    def check(self) -> None:
        if not self.imds_mock.exists():
            raise InstanceError(
                f"local instances need {self.imds_mock} (make setup builds it with go install)"
            )


@dataclass
class MetadataService:
    """``ec2-metadata-mock`` serving one instance's metadata and role credentials (IMDSv2 only)."""

    binary: Path
    directory: Path
    instance_id: str
    instance_type: str
    zone: str
    role: str
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    spot_notice_at: datetime | None = None  # None: no Spot interruption notice (an on-demand instance)
    spot_action: str = "terminate"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, object]:
        expires = (datetime.now(UTC) + timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        notice: dict[str, object] = {
            "mock-trigger-time": NO_SPOT_NOTICE,
            "spot": {"action": self.spot_action},
        }
        if self.spot_notice_at is not None:
            action_at = self.spot_notice_at + SPOT_NOTICE_LEAD
            notice = {
                "mock-trigger-time": self.spot_notice_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "spot": {"action": self.spot_action, "time": action_at.strftime("%Y-%m-%dT%H:%M:%SZ")},
            }
        return {
            **notice,
            "imdsv2": True,
            "server": {"hostname": "127.0.0.1", "port": str(self.port)},
            "metadata": {
                "paths": {
                    "iam-security-credentials": f"/latest/meta-data/iam/security-credentials/{self.role}"
                },
                "values": {
                    "instance-id": self.instance_id,
                    "instance-type": self.instance_type,
                    "instance-life-cycle": "on-demand",
                    "placement-availability-zone": self.zone,
                    "placement-region": self.zone[:-1],
                    "iam-security-credentials-role": self.role,
                    "iam-security-credentials": {
                        "code": "Success",
                        "type": "AWS-HMAC",
                        "accesskeyid": "ASIALOCALINSTANCE",
                        "secretaccesskey": "local-instance-secret",
                        "token": f"local-instance-token-{self.instance_id}",
                        "lastupdated": now,
                        "expiration": expires,
                    },
                },
            },
        }

    def start(self) -> None:
        self.port = self.port or free_port()  # a restart keeps the address the instance knows
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "imds.json"
        config.write_text(json.dumps(self.config(), indent=2))
        log = (self.directory / "imds.log").open("wb")
        self.process = subprocess.Popen(
            [str(self.binary), "--config-file", str(config)],
            cwd=self.directory,
            env={"HOME": str(self.directory), "PATH": SYSTEM_PATH},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + IMDS_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if self.answers():
                return
            time.sleep(0.1)
        self.stop()
        raise InstanceError(
            f"the metadata service of {self.instance_id} did not answer on {self.endpoint} "
            f"(log: {self.directory / 'imds.log'})"
        )

    def arm_spot_notice(self, at: datetime | None = None, action: str = "terminate") -> None:
        """From ``at`` (default now) the service answers ``spot/instance-action`` with a notice, as
        EC2 does two minutes before it reclaims a Spot instance. ec2-metadata-mock reads its trigger
        time at start: the service restarts on the same port (the agent's credentials are cached,
        and a poll that finds it restarting asks again)."""
        self.spot_notice_at = at or datetime.now(UTC)
        self.spot_action = action
        self.stop()
        self.start()

    def answers(self) -> bool:
        request = urllib.request.Request(
            f"{self.endpoint}/latest/api/token",
            method="PUT",
            headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"},
        )
        try:
            with urllib.request.urlopen(request, timeout=1) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@dataclass
class LocalInstance:
    """A benchmark instance on this machine: the document's shell runs here, isolated per instance."""

    instance_id: str
    directory: Path
    tools: Tools
    aws_endpoint: str
    metadata: MetadataService
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    terminated: bool = False
    overrides: dict[str, str] = field(default_factory=dict)
    image: Path | None = None  # a root file system to chroot into (None: this machine's own)

    @classmethod
    def boot(
        cls,
        instance_id: str,
        instance_type: str,
        zone: str,
        role: str,
        root: Path,
        tools: Tools,
        aws_endpoint: str,
        image: Path | None = None,
    ) -> LocalInstance:
        tools.check()
        directory = root / instance_id
        for path in INSTANCE_PATHS:
            Path(path).mkdir(parents=True, exist_ok=True)  # mount points on the host, left empty
            (directory / "root" / path.lstrip("/")).mkdir(parents=True, exist_ok=True)
        metadata = MetadataService(
            tools.imds_mock, directory / "imds", instance_id, instance_type, zone, role
        )
        own_image = instance_copy(image, directory) if image is not None else None
        if own_image is not None and tools.nfs_client is not None:
            install_nfs_client(own_image, tools.nfs_client)
        metadata.start()
        return cls(instance_id, directory, tools, aws_endpoint, metadata, image=own_image)

    def environment(self) -> dict[str, str]:
        return {
            "PATH": SYSTEM_PATH,
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": self.metadata.endpoint,
            "AWS_ENDPOINT_URL": self.aws_endpoint,
            **self.overrides,
        }

    def shell(self, script: Path, stdout: Path, stderr: Path) -> subprocess.Popen[bytes]:
        """Start ``bash script`` as root in the instance's own mount namespace."""
        if self.terminated:
            raise InstanceError(f"{self.instance_id} is terminated")
        own = self.directory / "root"
        base = "" if self.image is None else str(self.image)
        binds = " && ".join(
            f'mkdir -p "{base}{path}" && mount --bind "{own / path.lstrip("/")}" "{base}{path}"'
            for path in INSTANCE_PATHS
        )
        binds += f' && mkdir -p "{base}/usr/local/sbin" && mount --bind "{POWER}" "{base}/usr/local/sbin"'
        run = 'cd / && exec /bin/bash "$0"'
        if self.image is not None:  # the image's own tools and packages, this machine's kernel and devices
            system = " && ".join(f'mount --rbind "{p}" "{base}{p}"' for p in ("/dev", "/proc", "/sys"))
            binds += (
                f" && {system} && cp /etc/resolv.conf {base}/etc/resolv.conf"
                f' && install -D -m 0700 "$0" {base}/run/ssm/step.sh'
            )
            twin = self.tools.twin
            if twin is not None and twin.is_file():
                binds += (
                    f' && mkdir -p "{base}{twin.parent}" && touch "{base}{twin}"'
                    f' && mount --bind "{twin}" "{base}{twin}" && mount -o remount,bind,ro "{base}{twin}"'
                )
            run = f"exec chroot {base} /bin/bash -c 'cd / && exec /bin/bash /run/ssm/step.sh'"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(
                [
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "--",
                    "/bin/bash",
                    "-c",
                    f"{binds} && {run}",
                    str(script),
                ],
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        self.processes.append(process)
        return process

    def signal_all(self, sig: int) -> None:
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                    os.killpg(process.pid, sig)

    def terminate(self) -> None:
        """The machine goes away: every process it runs dies at once, nothing is torn down. That
        includes daemons its commands started in sessions of their own (a hook's server, ``fio
        --server``), found by the metadata address every process of the instance inherits."""
        self.terminated = True
        self.signal_all(signal.SIGKILL)
        for process in self.processes:
            process.wait()
        for pid in self._daemons():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.metadata.stop()

    def _daemons(self) -> list[int]:
        """Processes still alive whose environment holds this instance's metadata address."""
        marker = f"AWS_EC2_METADATA_SERVICE_ENDPOINT={self.metadata.endpoint}".encode()
        found: list[int] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environment = (entry / "environ").read_bytes()
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if marker in environment.split(b"\0"):
                found.append(int(entry.name))
        return found
