"""Which packages give the agent each tool, per distribution: the table both sides read.

``PACKAGES`` is the one table of package names per distribution (``/etc/os-release`` ``ID``);
``None`` means the distribution ships no such package, which request validation refuses
before anything is launched (``catalog.images``); the agent installs from it
(``agent.packages``). Sources:

* btrfs: Amazon Linux 2023 does not ship btrfs-progs (AL2023 user guide, "Comparing AL2 and
  AL2023": "btrfs is not supported"); RHEL 9 removed Btrfs (RHEL 8 release notes, "Btrfs has
  been removed"); Debian and Ubuntu ship ``btrfs-progs``, SUSE ``btrfsprogs``.
* Lustre: FSx for Lustre user guide, "Installing the Lustre client": Amazon Linux 2023
  ``dnf install lustre-client``; Ubuntu 22.04/24.04 ``lustre-client-modules-$(uname -r)`` from
  AWS's FSx apt repository; RHEL/Rocky 8-9 ``kmod-lustre-client lustre-client`` from AWS's FSx
  yum repository; no client for Debian.
* NFS: ``nfs-utils`` (dnf family), ``nfs-common`` (Debian, Ubuntu), ``nfs-client`` (SUSE).
"""

from __future__ import annotations

from typing import Dict, Optional

# tool -> distribution (os-release ID) -> package names (space separated), None: not shipped
PACKAGES: Dict[str, Dict[str, Optional[str]]] = {
    "fio": {"amzn": "fio", "rhel": "fio", "debian": "fio", "ubuntu": "fio", "sles": "fio"},
    "xfs": {
        "amzn": "xfsprogs",
        "rhel": "xfsprogs",
        "debian": "xfsprogs",
        "ubuntu": "xfsprogs",
        "sles": "xfsprogs",
    },
    "ext4": {
        "amzn": "e2fsprogs",
        "rhel": "e2fsprogs",
        "debian": "e2fsprogs",
        "ubuntu": "e2fsprogs",
        "sles": "e2fsprogs",
    },
    "btrfs": {
        "amzn": None,
        "rhel": None,
        "debian": "btrfs-progs",
        "ubuntu": "btrfs-progs",
        "sles": "btrfsprogs",
    },
    "mdadm": {"amzn": "mdadm", "rhel": "mdadm", "debian": "mdadm", "ubuntu": "mdadm", "sles": "mdadm"},
    "nfs": {
        "amzn": "nfs-utils",
        "rhel": "nfs-utils",
        "debian": "nfs-common",
        "ubuntu": "nfs-common",
        "sles": "nfs-client",
    },
    "lustre": {
        "amzn": "lustre-client",
        "rhel": "kmod-lustre-client lustre-client",
        "debian": None,
        "ubuntu": "lustre-client-modules-{kernel} lustre-client-utils",
        "sles": None,
    },
}
