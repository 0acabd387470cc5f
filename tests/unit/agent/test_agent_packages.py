"""What a plan needs installed, per distribution, and how the agent installs it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from storagebench.agent.packages import PackageError, ensure_packages, family, needs, package_names

DEBIAN = {"ID": "debian", "VERSION_ID": "12", "PRETTY_NAME": "Debian GNU/Linux 12 (bookworm)"}
AL2023 = {"ID": "amzn", "VERSION_ID": "2023", "ID_LIKE": "fedora", "PRETTY_NAME": "Amazon Linux 2023"}
ROCKY = {"ID": "rocky", "ID_LIKE": "rhel centos fedora", "VERSION_ID": "9.4"}


def fio_phase() -> dict:
    return {"name": "p", "engine": "fio", "fio": {"jobs": [{"name": "j", "options": {}}]}}


def plan(*targets: dict, phases: list[dict] | None = None, prewarm: str = "none") -> dict:
    return {
        "targets": list(targets),
        "prewarm": {"method": prewarm},
        "steps": [{"id": "s", "target": "t", "repetition": 1, "phases": phases or []}],
    }


def test_needs_follow_the_plan() -> None:
    striped = {"id": "a", "kind": "ebs", "volume_ids": ["vol-1", "vol-2"], "filesystem": "btrfs"}
    single = {"id": "b", "kind": "ebs", "volume_ids": ["vol-3"], "filesystem": "xfs"}
    raw = {"id": "c", "kind": "ebs", "volume_ids": ["vol-4", "vol-5"], "filesystem": "raw", "layout": "jbod"}
    lustre = {"id": "d", "kind": "fsx_lustre", "source": "fs@tcp:/x", "fstype": "lustre"}
    efs = {"id": "e", "kind": "efs", "source": "fs:/", "fstype": "nfs4"}
    assert needs(plan(striped, single, lustre, efs, phases=[fio_phase()])) == [
        "fio",
        "xfs",
        "btrfs",
        "mdadm",
        "nfs",
        "lustre",
    ]
    assert needs(plan(raw, phases=[{"name": "c", "engine": "command", "command": {"script": "true"}}])) == []
    assert needs(plan(raw, prewarm="fio")) == ["fio"]
    attach_only = {"id": "f", "kind": "ebs", "volume_ids": ["vol-6", "vol-7"], "prepare": False}
    assert needs(plan(attach_only)) == []  # the setup hook builds it: nothing is ours to install


def test_distribution_families() -> None:
    assert family(AL2023) == "amzn"
    assert family(ROCKY) == "rhel"
    assert family({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}) == "ubuntu"
    assert family({"ID": "alpine"}) is None
    assert package_names("lustre", "ubuntu", "6.8.0-1015-aws") == [
        "lustre-client-modules-6.8.0-1015-aws",
        "lustre-client-utils",
    ]
    assert package_names("btrfs", "amzn", "6.1") is None


class FakeManager:
    """dpkg-query/rpm answers from ``installed``; an install adds the packages (or fails)."""

    def __init__(self, installed: dict[str, str], fail: bool = False) -> None:
        self.installed = dict(installed)
        self.fail = fail
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
        argv = list(argv)
        self.calls.append(argv)
        if argv[0] == "dpkg-query":
            version = self.installed.get(argv[-1])
            return (0, f"install ok installed {version}") if version else (1, "no packages found")
        if argv[0] == "rpm" and argv[1] == "-q":
            version = self.installed.get(argv[-1])
            return (0, version) if version else (1, f"package {argv[-1]} is not installed")
        if "install" in argv:
            if self.fail:
                return 100, "E: Unable to locate package btrfs-progs"
            for name in argv[argv.index("install") + 1 :]:
                if not name.startswith("-"):
                    self.installed[name] = "1.0-test"
        return 0, ""


def test_installs_what_is_missing_with_apt_and_reports_versions() -> None:
    manager = FakeManager({"fio": "3.33-3"})
    versions = ensure_packages(["fio", "btrfs"], lambda _: None, DEBIAN, manager, kernel="6.1")
    assert versions == {"fio": "3.33-3", "btrfs-progs": "1.0-test"}
    installs = [c for c in manager.calls if "install" in c or "update" in c]
    assert installs[0][-2:] == ["update", "-q"]
    assert installs[1][-1] == "btrfs-progs" and "fio" not in installs[1]


def test_nothing_is_installed_when_everything_is_there() -> None:
    manager = FakeManager({"fio": "3.35-1.amzn2023", "xfsprogs": "6.4"})
    assert ensure_packages(["fio", "xfs"], lambda _: None, AL2023, manager, kernel="6.1") == {
        "fio": "3.35-1.amzn2023",
        "xfsprogs": "6.4",
    }
    assert not [c for c in manager.calls if "install" in c]


def test_a_package_the_distribution_does_not_ship_is_named() -> None:
    with pytest.raises(PackageError, match="btrfs: Amazon Linux 2023 ships no package for it"):
        ensure_packages(
            ["btrfs"], lambda _: None, AL2023, FakeManager({}), which=lambda _: None, kernel="6.1"
        )
    # built into the image by hand: used as it is
    assert (
        ensure_packages(["btrfs"], lambda _: None, AL2023, FakeManager({}), which=lambda _: "/x", kernel="6")
        == {}
    )


def test_a_failed_install_is_named_with_the_managers_words() -> None:
    with pytest.raises(PackageError, match=r"apt-get .* failed \(exit 100\): E: Unable to locate package"):
        ensure_packages(["btrfs"], lambda _: None, DEBIAN, FakeManager({}, fail=True), kernel="6.1")


def test_an_unknown_distribution_needs_the_tools_present() -> None:
    alpine = {"ID": "alpine"}
    assert (
        ensure_packages(["fio"], lambda _: None, alpine, FakeManager({}), which=lambda _: "/usr/bin/fio")
        == {}
    )
    with pytest.raises(PackageError, match="fio missing and no known package manager for ID='alpine'"):
        ensure_packages(["fio"], lambda _: None, alpine, FakeManager({}), which=lambda _: None)
