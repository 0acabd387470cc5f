"""A config: the machines it launches (its clients, their root volume, its node groups), their
image and targets, and the rules across them (target ids, volumes an instance holds, the tools an
image ships, shared targets, placement, purchase)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints, field_validator
from pydantic.json_schema import SkipJsonSchema

from storagebench.catalog import architecture, instance_type, unknown_instance_type
from storagebench.catalog.images import DEFAULT_IMAGE, image_problem, missing_tool
from storagebench.catalog.loader import ebs_volume_type
from storagebench.request.ebs_rules import check_ebs
from storagebench.request.fields import INSTANCE_TYPE_PATTERN, MAX_DATA_VOLUMES, EbsType, Slug, expansion_only
from storagebench.request.matrix_models import MatrixOrigin, MatrixValue
from storagebench.request.problems import Problems
from storagebench.request.purchase import PURCHASE_DESCRIPTION, Purchase
from storagebench.request.references import default_target_id
from storagebench.request.rules import RequestModel, rule
from storagebench.request.targets import (
    EbsTarget,
    FileGatewayTarget,
    InstanceStoreTarget,
    LocalTarget,
    Target,
    target_tools,
)
from storagebench.request.topology import (
    CLIENT_ROLE,
    MAX_CLIENTS,
    MAX_NODE_GROUPS,
    MAX_NODES,
    MAX_NODES_PER_GROUP,
    PLACEMENT_DESCRIPTION,
    PORT_PATTERN,
    PORTS_DESCRIPTION,
    SHARED_KINDS,
    Placement,
    parse_port,
)


class RootVolume(RequestModel):
    """The instance's boot volume: priced with the config, as the File Gateway study did."""

    type: EbsType = "gp3"
    size_gib: int = Field(default=8, ge=1)
    iops: int | None = Field(default=None, ge=1)
    throughput_mibps: int | None = Field(default=None, ge=1)
    encrypted: bool = True

    @rule("type", "size_gib", "iops", "throughput_mibps")
    def _aws_rules(self, problems: Problems) -> None:
        if self.type in ("st1", "sc1"):
            message = "st1 and sc1 cannot be boot volumes; use gp3, gp2, io1, io2 or standard"
            problems.add(("type",), self.type, message)
            return
        check_ebs(problems, self.type, self.size_gib, self.iops, self.throughput_mibps)


# Targets billed outside the config (a filer, a directory): nothing of theirs can back a local path.
UNBILLED_KINDS = ("local", "nfs")

# What one machine of a config must satisfy, a client or a node (_Machine's rules).


def _type_problems(problems: Problems, instance: str) -> None:
    unknown = unknown_instance_type(instance)
    if unknown is not None:
        problems.add(("instance_type",), instance, unknown)


def _target_problems(problems: Problems, instance: str, targets: list[Any]) -> None:
    """Unique target ids (defaults given), volumes it can attach, instance store it has."""
    seen: dict[str, int] = {}
    for position, target in enumerate(targets):
        if target.id is None:
            target.id = default_target_id(target.kind, position)
        if target.id in seen:
            problems.add(
                ("targets", position, "id"),
                target.id,
                f"already names targets[{seen[target.id]}]; target ids must be unique in a config",
            )
        seen[target.id] = position
    volumes = sum(t.count for t in targets if isinstance(t, EbsTarget))
    if volumes > MAX_DATA_VOLUMES:
        problems.add(
            ("targets",),
            volumes,
            f"at most {MAX_DATA_VOLUMES} data volumes per instance (device names /dev/sdf to /dev/sdz)",
        )
    spec = instance_type(instance)
    for position, target in enumerate(targets):
        if not isinstance(target, InstanceStoreTarget) or spec is None:
            continue
        store = spec.instance_store
        if store is None:
            problems.add(
                ("targets", position, "kind"),
                "instance_store",
                f"{instance} has no instance store; pick e.g. an i3en, m5d or c5d type",
            )
        elif target.count is not None and target.count > store.devices:
            problems.add(
                ("targets", position, "count"),
                target.count,
                f"{instance} has {store.devices} instance-store device(s)",
            )


def _architecture_problems(problems: Problems, instance: str, image: str) -> None:
    wrong = image_problem(image, architecture(instance))
    if wrong is not None:
        problems.add(("image",), image, f"{wrong.reason}; use {wrong.allowed}")


def _tool_problems(problems: Problems, instance: str, image: str, targets: list[Any]) -> None:
    """The image ships what the targets need (once it is an image for the architecture)."""
    if image_problem(image, architecture(instance)) is not None:
        return
    for position, target in enumerate(targets):
        for tool in target_tools(target):
            missing = missing_tool(image, tool)
            if missing is not None:
                problems.add(
                    ("targets", position),
                    f"{target.kind} on {image}",
                    f"{missing.reason}; use {missing.allowed}",
                )


class _Machine(RequestModel):
    """What a config's client and a node group have alike: a known type, an image for its
    architecture shipping what the targets need, targets the type can hold (one rule per set of
    inputs, so a field that failed to parse hides none of the others' problems)."""

    if TYPE_CHECKING:  # the subclasses' own fields, in their own order (the schema keeps it)
        instance_type: str
        image: str
        targets: list[Any]

    @rule("instance_type")
    def _known_instance_type(self, problems: Problems) -> None:
        _type_problems(problems, self.instance_type)

    @rule("instance_type", "targets")
    def _targets_fit(self, problems: Problems) -> None:
        _target_problems(problems, self.instance_type, list(self.targets))

    @rule("instance_type", "image")
    def _image_architecture(self, problems: Problems) -> None:
        _architecture_problems(problems, self.instance_type, self.image)

    @rule("instance_type", "image", "targets")
    def _image_tools(self, problems: Problems) -> None:
        _tool_problems(problems, self.instance_type, self.image, list(self.targets))


NodeTarget = Annotated[EbsTarget | InstanceStoreTarget, Field(discriminator="kind")]


class NodeGroup(_Machine):
    """Servers a config launches besides its clients: launched, awaited, priced and released with it.

    Each node runs the group's hooks (privileged shell, like a config's) with the topology in its
    environment; a node is bought on-demand whatever the config's purchase, as a reclaimed storage
    server would take the target away from every client."""

    role: Slug = Field(description="names the group, e.g. controller, master, chunk (not client)")
    count: int = Field(default=1, ge=1, le=MAX_NODES_PER_GROUP, description="identical nodes of this role")
    instance_type: Annotated[str, StringConstraints(pattern=INSTANCE_TYPE_PATTERN)]
    image: str = Field(default=DEFAULT_IMAGE, max_length=1011, description="as a config's image")
    root_volume: RootVolume = Field(default_factory=RootVolume)
    targets: list[NodeTarget] = Field(
        default_factory=list, max_length=8, description="each node's own EBS volumes or instance store"
    )
    ports: list[Annotated[str, StringConstraints(pattern=PORT_PATTERN)]] = Field(
        default_factory=list, max_length=16, description=PORTS_DESCRIPTION
    )
    setup: str | None = Field(
        default=None,
        max_length=16_384,
        description="shell run on each node before any client's setup (privileged), with the topology",
    )
    teardown: str | None = Field(
        default=None,
        max_length=16_384,
        description="shell run on each node after the clients' teardown, on every path",
    )

    @property
    def launch_ebs_optimized(self) -> bool | None:
        """As a config's default: EBS-optimized where it is optional, the type's default elsewhere."""
        spec = instance_type(self.instance_type)
        return None if spec is None or spec.ebs_optimized_by_default else True

    @rule("role")
    def _not_the_clients(self, problems: Problems) -> None:
        if self.role == CLIENT_ROLE:
            problems.add(
                ("role",),
                self.role,
                "client names the config's own instances (set clients for several); pick another role",
            )

    @rule("count", "instance_type", "targets")
    def _multi_attach(self, problems: Problems) -> None:
        """A Multi-Attach volume reaches every node of the group: Nitro nodes, no more than it allows."""
        spec = instance_type(self.instance_type)
        for position, target in enumerate(self.targets):
            if not isinstance(target, EbsTarget) or not target.multi_attach:
                continue
            rule_ = ebs_volume_type(target.type).multi_attach
            if rule_ is not None and self.count > rule_.max_instances:
                problems.add(
                    ("count",),
                    self.count,
                    f"targets[{position}] ({target.id}) is Multi-Attach, attached to every node: "
                    f"{target.type} allows at most {rule_.max_instances} instances per volume",
                )
            if spec is not None and not spec.nitro:
                problems.add(
                    ("instance_type",),
                    self.instance_type,
                    f"targets[{position}] ({target.id}) is Multi-Attach, which EBS offers on Nitro "
                    "instances only; pick a Nitro type (e.g. r5b.24xlarge)",
                )

    @rule("ports")
    def _ports(self, problems: Problems) -> None:
        for position, port in enumerate(self.ports):
            try:
                parse_port(port)
            except ValueError as exc:
                problems.add(("ports", position), port, str(exc))


class Config(_Machine):
    id: Slug
    description: str | None = Field(default=None, max_length=500)
    instance_type: Annotated[str, StringConstraints(pattern=INSTANCE_TYPE_PATTERN)]
    image: str = Field(
        default=DEFAULT_IMAGE,
        max_length=1011,
        description="al2023, ubuntu-24.04, ubuntu-22.04, debian-12, rhel-9, an AMI id, or an SSM "
        "parameter path holding one (the catalog publishers' public parameters or /storagebench/...)",
    )
    ebs_optimized: bool | None = Field(
        default=None,
        description="types where EBS optimisation is optional launch EBS-optimized (and are priced "
        "so) unless this is false; types optimised by default cannot turn it off",
    )
    root_volume: RootVolume = Field(default_factory=RootVolume)
    targets: list[Target] = Field(min_length=1, max_length=8)
    setup: str | None = Field(
        default=None, max_length=16_384, description="shell run before targets are prepared"
    )
    teardown: str | None = Field(
        default=None, max_length=16_384, description="shell run after, on every path"
    )
    purchase: Purchase | None = Field(default=None, description=PURCHASE_DESCRIPTION)
    clients: int = Field(
        default=1,
        ge=1,
        le=MAX_CLIENTS,
        description="identical client instances running every workload at once against the same shared "
        "target (efs, fsx_lustre, nfs, file_gateway, local): fio's client/server mode starts each "
        "workload on all of them together; records are kept per client and aggregated (IOPS and "
        "bandwidth summed, latency from the merged histograms)",
    )
    nodes: list[NodeGroup] = Field(
        default_factory=list,
        max_length=MAX_NODE_GROUPS,
        description="groups of servers launched with the config (virtual-SAN controllers, a file "
        "system's master and chunk servers): awaited, set up before the clients, priced with the "
        "config, released on every path",
    )
    placement: Placement | None = Field(default=None, description=PLACEMENT_DESCRIPTION)
    matrix: dict[str, Annotated[list[MatrixValue], Field(min_length=1)]] | None = Field(
        default=None,
        description="expands this config into one config per combination of the values (request."
        'matrix): field -> values, e.g. {"size_gib": [500, 1000], "iops": [3000, 6000]}; fields: '
        "instance_type, image, clients, or a target's type, size_gib, iops, throughput_mibps, count, "
        "filesystem, ... (<target id>.<field> when several targets have it); ids read "
        "<id>-500g-6000iops",
    )
    # Set by the matrix expansion only (request.matrix): refused from documents, left out of the
    # published schema and of the dumps; the report expands the run's document again to read it.
    origin: SkipJsonSchema[MatrixOrigin | None] = Field(default=None, exclude=True)

    @field_validator("origin", mode="before")
    @classmethod
    def _origin_from_the_expansion(cls, value: Any) -> Any:
        return expansion_only(value, MatrixOrigin)

    @rule("matrix")
    def _expanded(self, problems: Problems) -> None:
        if self.matrix is not None:
            problems.add(
                ("matrix",),
                self.matrix,
                "a matrix is expanded when the request document is parsed (storagebench.request."
                "parse_request); a config or request validated directly cannot hold one",
            )

    @rule("targets")
    def _one_gateway(self, problems: Problems) -> None:
        gateways = [p for p, t in enumerate(self.targets) if isinstance(t, FileGatewayTarget)]
        for position in gateways[1:]:
            problems.add(
                ("targets", position, "kind"),
                "file_gateway",
                f"one file gateway per config (targets[{gateways[0]}] is one); compare gateways as configs",
            )

    @rule("targets")
    def _multi_attach_on_nodes(self, problems: Problems) -> None:
        for position, target in enumerate(self.targets):
            if isinstance(target, EbsTarget) and target.multi_attach:
                problems.add(
                    ("targets", position, "multi_attach"),
                    True,
                    "a Multi-Attach volume is shared by the nodes of a node group: declare it in "
                    "nodes[].targets (the client reaches it through them, e.g. NVMe-oF), or remove it",
                )

    @rule("targets")
    def _local_backing(self, problems: Problems) -> None:
        """A local path's ``backed_by`` names other, billed targets of this config, once each."""
        ids = {t.id or default_target_id(t.kind, p): (p, t) for p, t in enumerate(self.targets)}
        for position, target in enumerate(self.targets):
            if not isinstance(target, LocalTarget):
                continue
            for index, backing in enumerate(target.backed_by):
                where = ("targets", position, "backed_by", index)
                found = ids.get(backing)
                billed = [i for i, (_, t) in ids.items() if t.kind not in UNBILLED_KINDS]
                allowed = f"the config's billed targets: {', '.join(billed) or 'none'}"
                if found is None:
                    problems.add(where, backing, f"names no target of this config; allowed: {allowed}")
                elif found[1].kind in UNBILLED_KINDS:
                    problems.add(
                        where,
                        backing,
                        f"targets[{found[0]}] is a {found[1].kind} target, billed outside the config; "
                        f"allowed: {allowed}",
                    )
                elif backing in target.backed_by[:index]:
                    problems.add(where, backing, "named twice; name each backing target once")

    @rule("clients", "targets")
    def _shared_targets(self, problems: Problems) -> None:
        if self.clients == 1:
            return
        own = [f"targets[{p}] ({t.kind})" for p, t in enumerate(self.targets) if t.kind not in SHARED_KINDS]
        if own:
            problems.add(
                ("clients",),
                self.clients,
                f"{self.clients} clients drive one shared target; {', '.join(own)} belong(s) to one "
                f"instance (shared kinds: {', '.join(SHARED_KINDS)}): set clients 1 or share the target",
            )

    @rule("nodes")
    def _node_groups(self, problems: Problems) -> None:
        seen: dict[str, int] = {}
        for position, group in enumerate(self.nodes):
            if group.role in seen:
                problems.add(
                    ("nodes", position, "role"),
                    group.role,
                    f"already names nodes[{seen[group.role]}]; roles must be unique in a config",
                )
            seen[group.role] = position
        total = sum(group.count for group in self.nodes)
        if total > MAX_NODES:
            problems.add(("nodes",), total, f"at most {MAX_NODES} nodes per config, every group together")

    @rule("placement", "nodes", "clients")
    def _placement(self, problems: Problems) -> None:
        if self.placement is not None and not self.nodes and self.clients == 1:
            problems.add(
                ("placement",),
                self.placement,
                "places several instances together or apart: add nodes or clients > 1, or remove it",
            )

    @rule("purchase", "nodes", "clients")
    def _on_demand_topology(self, problems: Problems) -> None:
        if self.purchase not in (None, "on-demand") and self.instance_count > 1:
            problems.add(
                ("purchase",),
                self.purchase,
                "a config of several machines (nodes or clients) is bought on-demand: one Spot "
                "interruption would stop them all; remove purchase or set on-demand",
            )

    @property
    def machines(self) -> str:
        """What the config launches, for people: ``4 x c5.2xlarge + 5 controller r5b.24xlarge``."""
        clients = self.instance_type if self.clients == 1 else f"{self.clients} x {self.instance_type}"
        return " + ".join([clients, *(f"{g.count} {g.role} {g.instance_type}" for g in self.nodes)])

    @property
    def instance_count(self) -> int:
        """Clients and nodes: the instances the config launches itself (gateway appliances aside)."""
        return self.clients + sum(group.count for group in self.nodes)

    @property
    def launch_ebs_optimized(self) -> bool | None:
        """What the launch asks for: True where optimisation is optional and not declined,
        False where declined, None (the type's own default) elsewhere."""
        spec = instance_type(self.instance_type)
        if spec is None or spec.ebs_optimized_by_default:
            return None
        return self.ebs_optimized is not False

    @rule("instance_type", "ebs_optimized")
    def _ebs_optimization(self, problems: Problems) -> None:
        spec = instance_type(self.instance_type)
        if self.ebs_optimized is False and spec is not None and spec.ebs_optimized_by_default:
            problems.add(
                ("ebs_optimized",),
                False,
                f"{self.instance_type} is always EBS-optimized; remove ebs_optimized or pick a type "
                "where it is optional (e.g. r3.4xlarge)",
            )
