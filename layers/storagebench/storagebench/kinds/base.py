"""What every storage kind answers, so planning, costs, the workflow and the report ask the kind
instead of testing the target's type.

A kind is one module of this package (``ebs``, ``efs``, ...) holding one :class:`StorageKind`;
``kinds.registry`` maps the request's ``kind`` field to it and fails loudly on a kind it does not
know. The request model (``request.targets``) keeps the targets' fields and AWS's validation rules;
the kind module keeps everything else the product knows about that kind.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, Literal, TypeVar

from storagebench.core.errors import NotYetConsistentError
from storagebench.workloads.profile import TargetContext

if TYPE_CHECKING:
    from storagebench.catalog.envelope import TargetEnvelope
    from storagebench.catalog.network import StorageSide
    from storagebench.core.state import FileSystemRef, LaunchVolume, Resources
    from storagebench.protocol.plan import TargetSpec
    from storagebench.request.model import EbsTarget, EfsTarget, FsxLustreTarget

T = TypeVar("T")
Initialisation = Literal["none", "read", "provisioned-rate"]
"""What a target needs before it is measured (``request.prewarm``): nothing (a new, empty volume
delivers its performance at once), a read end to end (restored lazily from a snapshot), or nothing
from the agent because AWS initialises it at a provisioned rate (the workflow waits for 100 %)."""
MIB = 1 << 20
GIB_PER_TIB = 1024
# Launch to "ready": the instance is running within about a minute, EC2 runs its status checks
# every minute once it is (docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitoring-system-instance-
# status-check.html) and they typically pass 2-4 minutes after launch; SSM Agent registers within
# a minute of boot. 5 minutes covers the usual case.
INSTANCE_READY_S = 300.0


@dataclass(frozen=True)
class Rates:
    """What a target moves per second: MiB/s each way and, for EBS, IOPS of at most ``io_kib`` each."""

    read_mibps: float
    write_mibps: float
    iops: float | None = None  # None: no operation limit in the catalog (file systems)
    io_kib: int = 256

    def mibps(self, direction: Literal["read", "write"], block_bytes: int) -> float:
        """MiB/s for I/O of ``block_bytes``: the throughput ceiling, or the IOPS ceiling times the
        bytes one operation counts for (a larger I/O counts as several ``io_kib`` operations)."""
        ceiling = self.read_mibps if direction == "read" else self.write_mibps
        if self.iops is None:
            return ceiling
        per_operation = min(block_bytes, self.io_kib * 1024)
        return min(ceiling, self.iops * per_operation / MIB)

    def seconds(self, read_bytes: float, write_bytes: float, block_bytes: int) -> float:
        return read_bytes / MIB / self.mibps("read", block_bytes) + write_bytes / MIB / self.mibps(
            "write", block_bytes
        )


def unbounded(rate: float) -> float:
    """``math.inf`` for a ceiling the catalog leaves open (None or 0)."""
    return rate or math.inf


# ------------------------------------------------------------------------- the bill of a target
# A target is billed as AWS resources: EBS volumes, instance hours, an EFS or FSx file system.
# ``costs`` knows how each resource is priced; the kind says which resources its target is.


@dataclass(frozen=True)
class EbsVolumeBill:
    """One EBS volume; ``member`` numbers a stripe's volumes (None: a target of one volume)."""

    target_id: str
    volume_type: str
    size_gib: int
    iops: int | None
    throughput_mibps: int | None
    member: int | None = None


@dataclass(frozen=True)
class InstanceBill:
    """On-demand hours of an instance the target launches besides the config's (an appliance)."""

    name: str  # the cost component's name
    target_id: str
    instance_type: str
    label: str


@dataclass(frozen=True)
class EfsBill:
    target: EfsTarget


@dataclass(frozen=True)
class FsxLustreBill:
    target: FsxLustreTarget


BillItem = EbsVolumeBill | InstanceBill | EfsBill | FsxLustreBill


@dataclass(frozen=True)
class Bill:
    """The resources a target is billed as, notes on its price, and what is not priced (and why)."""

    items: tuple[BillItem, ...] = ()
    notes: tuple[str, ...] = ()
    unpriced: tuple[str, ...] = ()


def recorded_file_system(resources: Resources, target_id: str) -> FileSystemRef:
    """The file system Provision recorded for a target; not yet there is retried, never skipped."""
    ref = next((f for f in resources.file_systems if f.target_id == target_id), None)
    if ref is None:
        raise NotYetConsistentError(f"file system of target {target_id} is not recorded yet")
    return ref


class UnknownKindError(ValueError):
    """A target kind no module of ``storagebench.kinds`` implements."""

    def __init__(self, kind: object, known: tuple[str, ...]) -> None:
        super().__init__(f"kind {kind!r} is not a storage kind storagebench knows; known: {', '.join(known)}")
        self.kind = kind
        self.known = known


class StorageKind(ABC, Generic[T]):
    """One kind of storage target: the request's ``kind`` value and what the product does with it."""

    name: ClassVar[str]
    # Reached over the network: planned as media "network", each file op a round trip.
    network: ClassVar[bool] = False
    # Created beside the instance by Provision: seconds until it is usable (0: nothing to wait for).
    ready_seconds: ClassVar[float] = 0.0
    # Instances the target launches besides the config's own (a File Gateway appliance).
    appliances: ClassVar[int] = 0
    # The file system service Provision creates through the filesystems port, if any.
    file_system: ClassVar[Literal["efs", "fsx_lustre"] | None] = None
    # What the config's instances reach that file system on ("tcp/2049"): its mount targets join the
    # config's security group, which admits these from the config's own instances only.
    client_ports: ClassVar[tuple[str, ...]] = ()
    # Pre-warmed before the workloads (read end to end, or its cold read checked: planning.initialisation).
    prewarmed: ClassVar[bool] = False
    # Paid inside the instance-hours (instance store): no storage-only figure of its own to compare.
    in_instance_price: ClassVar[bool] = False

    @abstractmethod
    def option_key(self, target: T) -> str:
        """A stable description of the storage option: with the instance type, its history key."""

    @abstractmethod
    def report_text(self, target: T) -> tuple[str, str]:
        """(short description, the catalog's envelope or the long description) for the report."""

    @abstractmethod
    def bill(self, target: T, instance_type: str) -> Bill:
        """The AWS resources the target is billed as, on a config of ``instance_type``."""

    @abstractmethod
    def agent_spec(self, target: T, resources: Resources, region: str) -> TargetSpec:
        """What the agent binds and mounts, from what Provision created (AWS)."""

    def preview_text(self, target: T) -> str:
        """The kind in a guardrail message: ``ebs gp3``, ``file_gateway m5.xlarge, cache ...``."""
        return self.name

    def context(self, target: T, instance_type: str, mode: Literal["raw", "filesystem"]) -> TargetContext:
        """What the planner knows of the target for auto parameters (queue depth)."""
        return TargetContext(mode=mode, media="network" if self.network else "unknown")

    def rates(self, target: T, instance_type: str) -> Rates | None:
        """The catalog's sustained rates on that instance; None when the catalog has none."""
        return None

    def envelope(self, target: T, instance_type: str) -> TargetEnvelope | None:
        """The catalog's performance envelope; None for kinds the catalog does not model."""
        return None

    def envelope_text(self, target: T, instance_type: str) -> str | None:
        """The envelope in one line for validate and the dry run; None when the catalog has none."""
        envelope = self.envelope(target, instance_type)
        return envelope.describe() if envelope is not None else None

    def network_storage(self, target: T, clients: int) -> StorageSide | None:
        """What the storage could deliver to ``clients`` clients over their network, each way (their
        network then caps it: ``kinds.reach``); None for kinds not reached over the network."""
        return None

    def bursts(self, target: T) -> bool:
        """Whether the target can run above its baseline for a while (burst credits)."""
        return False

    def prewarm_seconds(self, target: T, instance_type: str, block_bytes: int, notes: list[str]) -> float:
        """How long reading it end to end takes (kinds that are not pre-warmed take none)."""
        return 0.0

    def initialisation(self, target: T) -> Initialisation:
        """What the target needs before measuring (kinds that are not pre-warmed need nothing)."""
        return "none"

    def cold_read_seconds(
        self, target: T, instance_type: str, sample_bytes: int, extents: int, block_bytes: int
    ) -> float:
        """How long the sampled cold-read check (both passes) takes (kinds not pre-warmed: none)."""
        return 0.0

    def duration_notes(self, target: T) -> tuple[str, ...]:
        """Caveats on the duration estimate that the target's settings bring."""
        return ()

    def credit_note(self, target: T, busy_seconds: float) -> str | None:
        """Whether burst credits outlast ``busy_seconds`` of full demand (the estimated workloads);
        None for kinds that do not burst, or that the duration estimate already holds to."""
        return None

    def shared_by_nodes(self, target: T) -> bool:
        """Whether a node group's target is one resource attached to every node (EBS Multi-Attach):
        priced and billed once for the group, not once per node."""
        return False

    def launch_volumes(self, target: T, devices: Iterator[str]) -> list[LaunchVolume]:
        """EBS volumes launched with the instance, each named by the next of ``devices``."""
        return []

    def appliance_instance_types(self, target: T) -> tuple[tuple[str, str], ...]:
        """(field, instance type) of each appliance it launches, for the instance-type guardrail."""
        return ()

    def local_spec(self, target: T, emulate_ebs: Callable[[EbsTarget], TargetSpec]) -> TargetSpec | None:
        """Its binding on this machine (local mode); None when it needs AWS."""
        return None
