"""What a plan needs installed, and installing it with the image's own package manager.

``needs(plan)`` derives the tools from the plan (fio for fio workloads and fio pre-warm, the
mkfs of each file system, mdadm for a striped set, the NFS and Lustre clients for network
targets); ``ensure_packages`` installs the missing ones (dnf, apt-get or zypper, found from
``/etc/os-release``) and returns ``{package: version}`` for the manifest.

``PACKAGES`` (``protocol.packages``) is the one table of package names per distribution.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from storagebench.protocol.packages import PACKAGES
from storagebench.protocol.plan import BLOCK_KINDS, Plan
from storagebench.protocol.topology import CLIENT_ROLE, extra_clients

INSTALL_TIMEOUT_S = 1800
FSX_REPO = "https://fsx-lustre-client-repo.s3.amazonaws.com"
FSX_KEY = "https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-ubuntu-public-key.asc"
FSX_RPM_KEY = "https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-rpm-public-key.asc"

COMMANDS = {
    "fio": "fio",
    "xfs": "mkfs.xfs",
    "ext4": "mkfs.ext4",
    "btrfs": "mkfs.btrfs",
    "mdadm": "mdadm",
    "nfs": "mount.nfs",
    "lustre": "mount.lustre",
}
FAMILIES = {
    "amzn": "amzn",
    "rhel": "rhel",
    "centos": "rhel",
    "rocky": "rhel",
    "almalinux": "rhel",
    "fedora": "rhel",
    "debian": "debian",
    "ubuntu": "ubuntu",
    "sles": "sles",
    "opensuse-leap": "sles",
}


class PackageError(RuntimeError):
    """A package the plan needs is not available on this image, or its installation failed."""


Runner = Callable[[Sequence[str]], Tuple[int, str]]


def _run(argv: Sequence[str]) -> Tuple[int, str]:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    done = subprocess.run(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    return done.returncode, done.stdout.decode("utf-8", "replace")


def needs(plan: Plan) -> List[str]:
    """The tools (keys of ``PACKAGES``) this plan uses, in a stable order."""
    found = set()
    phases = [phase for step in plan.get("steps", []) for phase in step.get("phases", [])]
    if any(phase.get("engine", "fio") == "fio" for phase in phases):
        found.add("fio")
    if (plan.get("prewarm") or {}).get("method") == "fio":
        found.add("fio")
    topology = plan.get("topology")
    if topology is not None and topology["self"]["role"] == CLIENT_ROLE and extra_clients(topology):
        found.add("fio")  # every client of a multi-client config serves fio --server
    for target in plan.get("targets", []):
        kind = target.get("kind")
        if kind in BLOCK_KINDS:
            filesystem = target.get("filesystem", "xfs")
            if filesystem != "raw" and target.get("prepare") is not False:
                found.add(filesystem)
            listed = target.get("volume_ids") or target.get("emulate") or []
            # instance_store: count 0 takes every device the type has, possibly several
            devices = len(listed) if kind == "ebs" else (target.get("count", 0) or 2)
            if (
                devices > 1
                and target.get("layout", "raid0") == "raid0"
                and target.get("prepare") is not False
            ):
                found.add("mdadm")
        elif kind in ("efs", "nfs"):
            found.add("nfs")
        elif kind == "fsx_lustre":
            found.add("lustre")
    return [tool for tool in PACKAGES if tool in found]


def os_release(path: str = "/etc/os-release") -> Dict[str, str]:
    values: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                name, sep, value = line.strip().partition("=")
                if sep:
                    values[name] = value.strip().strip('"')
    except OSError:
        pass
    return values


def family(release: Mapping[str, str]) -> Optional[str]:
    for candidate in [release.get("ID", ""), *release.get("ID_LIKE", "").split()]:
        if candidate in FAMILIES:
            return FAMILIES[candidate]
    return None


def package_names(tool: str, distro: str, kernel: str) -> Optional[List[str]]:
    names = PACKAGES[tool].get(distro)
    return names.format(kernel=kernel).split() if names else None


class Installer:
    """One distribution's package manager: query versions, add AWS's Lustre repository, install."""

    def __init__(self, distro: str, release: Mapping[str, str], run: Runner = _run) -> None:
        self.distro = distro
        self.release = release
        self.run = run
        self.apt_updated = False

    def version(self, package: str) -> Optional[str]:
        if self.distro in ("debian", "ubuntu"):
            code, out = self.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", package])
            parts = out.split()
            return parts[-1] if code == 0 and out.startswith("install ok installed") else None
        code, out = self.run(["rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", package])
        return out.strip() if code == 0 else None

    def install(self, packages: List[str], tools: List[str]) -> None:
        if "lustre" in tools and self.distro in ("ubuntu", "rhel"):
            self._lustre_repository()
        if self.distro in ("debian", "ubuntu"):
            if not self.apt_updated:
                self._check(["apt-get", "-o", "DPkg::Lock::Timeout=300", "update", "-q"], "apt-get update")
                self.apt_updated = True
            argv = [
                "apt-get",
                "-o",
                "DPkg::Lock::Timeout=300",
                "install",
                "-y",
                "-q",
                "--no-install-recommends",
            ]
        elif self.distro == "sles":
            argv = ["zypper", "--non-interactive", "install", "--no-recommends"]
        else:
            argv = ["dnf", "install", "-y", "-q"] if shutil.which("dnf") else ["yum", "install", "-y", "-q"]
        self._check(argv + packages, " ".join(argv[:2]) + " " + " ".join(packages))

    def _lustre_repository(self) -> None:
        """AWS's FSx client repository, as the FSx user guide sets it up for Ubuntu and RHEL."""
        if self.distro == "ubuntu":
            codename = self.release.get("VERSION_CODENAME", "")
            armored = "/usr/share/keyrings/fsx-ubuntu-public-key.asc"
            try:
                with urllib.request.urlopen(FSX_KEY, timeout=60) as response, open(armored, "wb") as handle:
                    handle.write(response.read())
            except OSError as exc:
                raise PackageError(f"the FSx repository key {FSX_KEY}: {exc}") from exc
            dearmored = "/usr/share/keyrings/fsx-ubuntu-public-key.gpg"
            self._check(["gpg", "--dearmor", "--yes", "-o", dearmored, armored], "the FSx repository key")
            with open("/etc/apt/sources.list.d/fsxlustreclientrepo.list", "w", encoding="utf-8") as handle:
                handle.write(
                    f"deb [signed-by=/usr/share/keyrings/fsx-ubuntu-public-key.gpg] "
                    f"{FSX_REPO}/ubuntu {codename} main\n"
                )
            self.apt_updated = False
        else:
            major = self.release.get("VERSION_ID", "9").split(".")[0]
            self._check(["rpm", "--import", FSX_RPM_KEY], "the FSx repository key")
            with open("/etc/yum.repos.d/aws-fsx.repo", "w", encoding="utf-8") as handle:
                handle.write(
                    f"[aws-fsx]\nname=AWS FSx Packages\nbaseurl={FSX_REPO}/el/{major}/$basearch/\n"
                    f"enabled=1\ngpgcheck=1\ngpgkey={FSX_RPM_KEY}\n"
                )

    def _check(self, argv: List[str], what: str) -> None:
        code, out = self.run(argv)
        if code != 0:
            tail = "\n".join(out.strip().splitlines()[-5:])
            raise PackageError(f"{what} failed (exit {code}): {tail}")


def ensure_packages(
    tools: Sequence[str],
    say: Callable[[str], None],
    release: Optional[Mapping[str, str]] = None,
    run: Runner = _run,
    which: Callable[[str], Optional[str]] = shutil.which,
    kernel: Optional[str] = None,
) -> Dict[str, str]:
    """Install what is missing of ``tools``; ``{package: version}`` of every package used."""
    release = os_release() if release is None else release
    distro = family(release)
    kernel = kernel or os.uname().release
    if distro is None:
        missing = [tool for tool in tools if which(COMMANDS[tool]) is None]
        if missing:
            raise PackageError(
                f"{', '.join(missing)} missing and no known package manager for ID={release.get('ID')!r} "
                f"(known: {', '.join(sorted(FAMILIES))})"
            )
        return {}
    installer = Installer(distro, release, run)
    wanted: List[str] = []
    for tool in tools:
        names = package_names(tool, distro, kernel)
        if names is None:
            if which(COMMANDS[tool]) is not None:
                continue  # built into this image by hand: use it
            raise PackageError(f"{tool}: {release.get('PRETTY_NAME', distro)} ships no package for it")
        wanted.extend(names)
    missing_packages = [p for p in wanted if installer.version(p) is None]
    if missing_packages:
        say(f"installing {' '.join(missing_packages)}")
        installer.install(missing_packages, list(tools))
    versions: Dict[str, str] = {}
    for package in wanted:
        version = installer.version(package)
        if version is None:
            raise PackageError(f"{package} is not installed after installing it")
        versions[package] = version
    return versions
