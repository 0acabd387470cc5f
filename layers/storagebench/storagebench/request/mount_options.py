"""Which mount options a request may pass: an allow-list per file-system family.

The agent mounts as root (``mount -o <options>``, no shell), so options are not a way into a
shell, but some are a way around the benchmark or the machine: ``loop``/``offset`` mount
something else, ``context=`` relabels, ``x-*`` options drive systemd, ``sec=krb5`` needs secrets
the instance must not have. Options not listed are refused by name. Sources: mount(8),
nfs(5), xfs(5), ext4(5), btrfs(5), and the Lustre manual's client mount options.
"""

from __future__ import annotations

import re
from typing import Literal

Family = Literal["nfs", "lustre", "xfs", "ext4", "btrfs"]
FAMILIES: tuple[Family, ...] = ("nfs", "lustre", "xfs", "ext4", "btrfs")
_GENERIC = frozenset(
    {"ro", "rw", "sync", "async", "atime", "noatime", "relatime", "strictatime", "nodiratime", "lazytime"}
)
ALLOWED: dict[Family, frozenset[str]] = {
    "nfs": _GENERIC
    | {
        "nfsvers",
        "vers",
        "rsize",
        "wsize",
        "hard",
        "soft",
        "softerr",
        "timeo",
        "retrans",
        "noresvport",
        "resvport",
        "nolock",
        "lock",
        "proto",
        "port",
        "actimeo",
        "acregmin",
        "acregmax",
        "acdirmin",
        "acdirmax",
        "noac",
        "ac",
        "nocto",
        "cto",
        "lookupcache",
        "nconnect",
        "max_connect",
        "tcp",
        "udp",
        "intr",
        "nointr",
        "local_lock",
        "namlen",
        "fsc",
        "nofsc",
        "sec",
    },
    "lustre": _GENERIC
    | {
        "flock",
        "localflock",
        "noflock",
        "user_xattr",
        "nouser_xattr",
        "lazystatfs",
        "nolazystatfs",
        "acl",
        "noacl",
        "checksum",
        "nochecksum",
        "user_fid2path",
        "nouser_fid2path",
    },
    "xfs": _GENERIC
    | {
        "allocsize",
        "inode64",
        "inode32",
        "largeio",
        "nolargeio",
        "swalloc",
        "sunit",
        "swidth",
        "logbufs",
        "logbsize",
        "discard",
        "nodiscard",
        "noalign",
        "wsync",
        "attr2",
        "noattr2",
        "dax",
    },
    "ext4": _GENERIC
    | {
        "data",
        "commit",
        "barrier",
        "nobarrier",
        "journal_async_commit",
        "delalloc",
        "nodelalloc",
        "discard",
        "nodiscard",
        "stripe",
        "max_batch_time",
        "min_batch_time",
        "dax",
        "dioread_nolock",
        "dioread_lock",
        "noauto_da_alloc",
        "auto_da_alloc",
        "init_itable",
        "noinit_itable",
    },
    "btrfs": _GENERIC
    | {
        "compress",
        "compress-force",
        "ssd",
        "nossd",
        "ssd_spread",
        "space_cache",
        "nospace_cache",
        "autodefrag",
        "noautodefrag",
        "nodatacow",
        "datacow",
        "nodatasum",
        "datasum",
        "discard",
        "nodiscard",
        "commit",
        "thread_pool",
        "flushoncommit",
        "noflushoncommit",
        "max_inline",
    },
}
# Values that would let the instance speak for someone else.
REFUSED_VALUES = {("sec", "krb5"), ("sec", "krb5i"), ("sec", "krb5p")}
_VALUE = re.compile(r"^[A-Za-z0-9_.:/+-]{1,128}$")


def mount_options_problem(options: str, family: Family) -> str | None:
    """Why ``options`` may not be used for a ``family`` mount, or None when they may."""
    if not options:
        return None
    problems: list[str] = []
    for item in options.split(","):
        name, sep, value = item.partition("=")
        if name not in ALLOWED[family]:
            problems.append(f"{name or '(empty)'} is not a {family} mount option storagebench allows")
        elif sep and not _VALUE.match(value):
            problems.append(f"{name}={value}: values are letters, digits and _ . : / + - (at most 128)")
        elif (name, value) in REFUSED_VALUES:
            problems.append(f"{name}={value}: needs credentials the benchmark instance must not hold")
    if not problems:
        return None
    return "; ".join(problems) + f" (allowed: {', '.join(sorted(ALLOWED[family]))})"
