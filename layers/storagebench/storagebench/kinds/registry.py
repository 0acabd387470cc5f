"""Every storage kind by the request's ``kind`` value; an unknown kind is an error, never a default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from storagebench.kinds.base import StorageKind, UnknownKindError
from storagebench.kinds.ebs import Ebs
from storagebench.kinds.efs import Efs
from storagebench.kinds.file_gateway import FileGateway
from storagebench.kinds.fsx_lustre import FsxLustre
from storagebench.kinds.instance_store import InstanceStore
from storagebench.kinds.local import Local
from storagebench.kinds.nfs import Nfs
from storagebench.protocol.caveats import EMULATED_LABEL_PREFIX, EMULATOR_LABEL_PREFIX

if TYPE_CHECKING:
    from storagebench.request.model import Config

KINDS: Mapping[str, StorageKind[Any]] = {
    kind.name: kind for kind in (Ebs(), InstanceStore(), Efs(), FsxLustre(), Nfs(), FileGateway(), Local())
}


def storage_kind(name: object) -> StorageKind[Any]:
    """The kind named ``name``; :class:`UnknownKindError` names it and the known ones otherwise."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownKindError(name, tuple(KINDS))
    return kind


def kind_of(target: object) -> StorageKind[Any]:
    """The kind of a request target (by its ``kind`` field)."""
    return storage_kind(getattr(target, "kind", None))


def storage_option(config: Config, target_id: str) -> str:
    """A stable description of one storage option, the key of its history across runs: the target on
    its instance, then what stands behind it when the config has more than one machine (so a virtual
    SAN of 5 controllers and one of 8 keep separate histories, and 4 clients on EFS are not 1)."""
    option = option_of(config.instance_type, next(t for t in config.targets if t.id == target_id))
    return option + topology_key(config)


def emulator_key(labels: Iterable[str]) -> str:
    """``+emulated=twin`` or ``+emulated=throttle`` for records measured on an emulated volume, else
    ``""``: an EBS twin's latency and the throttle's are different measurements of no EBS at all, so
    neither joins the other's history (nor, with the same storage option, a real volume's)."""
    seen = list(labels)
    emulators = sorted(
        {label[len(EMULATOR_LABEL_PREFIX) :] for label in seen if label.startswith(EMULATOR_LABEL_PREFIX)}
    )
    if not emulators and any(label.startswith(EMULATED_LABEL_PREFIX) for label in seen):
        emulators = ["throttle"]  # the only emulator before the twin
    return "".join(f"+emulated={name}" for name in emulators)


def topology_key(config: Config) -> str:
    """``""`` for one client and no nodes (every key stored before topologies stays the same), else
    ``+4clients`` and ``+controller=5xr5b.24xlarge[ebs:io2:4096GiB:256000iops,...]`` per node group."""
    parts: list[str] = []
    if config.clients > 1:
        parts.append(f"{config.clients}clients")
    for group in sorted(config.nodes, key=lambda g: g.role):
        targets = ",".join(kind_of(t).option_key(t) for t in group.targets)
        image = "" if group.image == config.image else f"@{group.image}"
        parts.append(f"{group.role}={group.count}x{group.instance_type}{image}[{targets}]")
    if config.placement is not None:
        parts.append(f"placement:{config.placement}")
    return "".join(f"+{part}" for part in parts)


def option_of(instance_type: str, target: object) -> str:
    """``storage_option`` of a target in hand: ``c5.4xlarge/ebs:gp3:100GiB:xfs``."""
    return f"{instance_type}/{kind_of(target).option_key(target)}"
