"""Every storage kind by the request's ``kind`` value; an unknown kind is an error, never a default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storagebench.kinds.base import StorageKind, UnknownKindError
from storagebench.kinds.ebs import Ebs
from storagebench.kinds.efs import Efs
from storagebench.kinds.file_gateway import FileGateway
from storagebench.kinds.fsx_lustre import FsxLustre
from storagebench.kinds.instance_store import InstanceStore
from storagebench.kinds.local import Local
from storagebench.kinds.nfs import Nfs

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
