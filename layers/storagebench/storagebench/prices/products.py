"""Every price product storagebench asks for, written once: its key, how it reads, how the Price List
finds it, where the snapshot keeps it, and when it is free.

A book (the Price List API, the bundled snapshot, the fallback of the one to the other) has one
method, ``price(key)``; what differs between products lives here, so a new product is one entry
below (with its query and selector in ``prices.pricelist`` and its field in the snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from storagebench.prices import pricelist as pl
from storagebench.prices.models import PriceNotFound

ProductName = Literal[
    "ec2_instance_hour",
    "ec2_os_instance_hour",
    "ec2_ebs_optimized_hour",
    "ebs_storage",
    "ebs_iops",
    "ebs_throughput",
    "efs_storage",
    "efs_provisioned_throughput",
    "efs_elastic_transfer",
    "fsx_lustre_storage",
    "stepfunctions_transition",
    "lambda_gb_second",
    "lambda_request",
]
Dimension = str | int | bool | None


@dataclass(frozen=True)
class _Key:
    product: ProductName
    dimensions: tuple[Dimension, ...] = ()

    def __post_init__(self) -> None:
        product = PRODUCTS.get(self.product)
        if product is None:
            raise PriceNotFound(f"unknown price product {self.product!r} (known: {', '.join(PRODUCTS)})")
        if len(self.dimensions) != len(product.dimensions):
            raise PriceNotFound(
                f"{self.product} is priced by ({', '.join(product.dimensions)}), "
                f"not by {len(self.dimensions)} value(s) {self.dimensions!r}"
            )
        if product.tiered != isinstance(self, TierKey):
            kind, shape = ("TierKey", "tiered") if product.tiered else ("PriceKey", "one price")
            raise PriceNotFound(f"{self.product} is {shape}: ask with {kind}")

    @property
    def spec(self) -> Product:
        return PRODUCTS[self.product]

    def label(self) -> str:
        """What was asked, as messages name it: ``EBS gp3 storage``, ``EC2 m5.large on-demand Linux``."""
        return self.spec.label(*self.dimensions)


@dataclass(frozen=True)
class PriceKey(_Key):
    """One price: the book answers a :class:`~storagebench.prices.models.Price`."""


@dataclass(frozen=True)
class TierKey(_Key):
    """A price by tier of the quantity: the book answers a list of ``PriceTier`` (``[]``: free)."""


def _one(_: Sequence[str]) -> list[tuple[Dimension, ...]]:
    return [()]


def _always(*_: Any) -> bool:
    return True


def _no_check(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class Product:
    name: ProductName
    dimensions: tuple[str, ...]
    label: Callable[..., str]
    query: Callable[..., pl.Query]  # (region, *dimensions)
    select: Callable[..., Any]  # (products, *dimensions) -> Rate, or list[Rate] when tiered
    tiered: bool = False
    # Raises PriceNotFound for an argument no price list could answer (unknown volume type).
    check: Callable[..., None] = _no_check
    # False: there is no such charge (gp2 IOPS): no lookup, no tiers.
    charged: Callable[..., bool] = _always
    # The snapshot's key in the product's table; None: the product is one rate, no table.
    snapshot_key: Callable[..., str] | None = None
    # Every dimension a snapshot refresh reads, given the catalog's instance types.
    everything: Callable[[Sequence[str]], list[tuple[Dimension, ...]]] = _one
    # The label when the dimensions are checked, before they are normalised (FSx: the raw type).
    check_label: Callable[..., str] | None = None


def _fsx_label(deployment_type: str, per_unit: int | None) -> str:
    return f"FSx for Lustre {pl.fsx_key(deployment_type, per_unit)} storage"


def _check_fsx(deployment_type: str, per_unit: int | None) -> None:
    pl.fsx_key(deployment_type, per_unit)


LICENSED_OS = ("RHEL",)  # operating systems whose images carry a licence charge


def _check_os(_instance_type: str, operating_system: str) -> None:
    if operating_system not in LICENSED_OS:
        raise PriceNotFound(
            f"operating system {operating_system!r} has no licence price (known: {', '.join(LICENSED_OS)}; "
            "Linux is ec2_instance_hour)"
        )


def _efs_zone(one_zone: bool) -> str:
    return "one_zone" if one_zone else "standard"


_PRODUCTS = (
    Product(
        "ec2_instance_hour",
        ("instance_type",),
        lambda t: f"EC2 {t} on-demand Linux",
        pl.ec2_instance_query,
        pl.instance_hour,
        snapshot_key=str,
        everything=lambda types: [(t,) for t in types],
    ),
    Product(
        "ec2_os_instance_hour",
        ("instance_type", "operating_system"),
        lambda t, os_: f"EC2 {t} on-demand {os_}",
        pl.ec2_os_instance_query,
        pl.os_instance_hour,
        check=_check_os,
        snapshot_key=lambda t, os_: f"{os_}:{t}",
        everything=lambda types: [(t, os_) for os_ in LICENSED_OS for t in types],
    ),
    Product(
        "ec2_ebs_optimized_hour",
        ("instance_type",),
        lambda t: f"EC2 {t} EBS-optimized fee",
        pl.ec2_ebs_optimized_query,
        pl.ebs_optimized_hour,
        snapshot_key=str,
        # Types optimised by default have no such product: a refresh lists them as missing.
        everything=lambda types: [(t,) for t in types],
    ),
    Product(
        "ebs_storage",
        ("volume_type",),
        lambda v: f"EBS {v} storage",
        pl.ebs_storage_query,
        pl.ebs_storage,
        check=pl.check_volume_type,
        snapshot_key=str,
        everything=lambda _: [(v,) for v in pl.EBS_VOLUME_TYPES],
    ),
    Product(
        "ebs_iops",
        ("volume_type",),
        lambda v: f"EBS {v} provisioned IOPS",
        lambda region, _v: pl.ebs_iops_query(region),
        pl.ebs_iops,
        tiered=True,
        check=pl.check_volume_type,
        charged=lambda v: v in pl.EBS_IOPS_USAGE,
        snapshot_key=str,
        everything=lambda _: [(v,) for v in pl.EBS_IOPS_USAGE],
    ),
    Product(
        "ebs_throughput",
        ("volume_type",),
        lambda v: f"EBS {v} provisioned throughput",
        lambda region, _v: pl.ebs_throughput_query(region),
        pl.ebs_throughput,
        tiered=True,
        check=pl.check_volume_type,
        charged=lambda v: v == "gp3",
        snapshot_key=str,
        everything=lambda _: [("gp3",)],
    ),
    Product(
        "efs_storage",
        ("one_zone",),
        lambda one_zone: f"EFS {'One Zone' if one_zone else 'Standard'} storage",
        lambda region, _z: pl.efs_query(region),
        pl.efs_storage,
        snapshot_key=_efs_zone,
        everything=lambda _: [(False,), (True,)],
    ),
    Product(
        "efs_provisioned_throughput",
        (),
        lambda: "EFS provisioned throughput",
        pl.efs_query,
        pl.efs_provisioned_throughput,
    ),
    Product(
        "efs_elastic_transfer",
        ("direction",),
        lambda direction: f"EFS Elastic throughput {direction}s",
        lambda region, _d: pl.efs_query(region),
        pl.efs_elastic_transfer,
        snapshot_key=str,
        everything=lambda _: [("read",), ("write",)],
    ),
    Product(
        "fsx_lustre_storage",
        ("deployment_type", "per_unit_throughput"),
        _fsx_label,
        lambda region, _d, _p: pl.fsx_lustre_query(region),
        pl.fsx_lustre_storage,
        check=_check_fsx,
        snapshot_key=pl.fsx_key,
        everything=lambda _: [(d, t) for d, ts in pl.FSX_DEPLOYMENT_TYPES.items() for t in ts or (None,)],
        check_label=lambda d, _p: f"FSx for Lustre {d} storage",
    ),
    Product(
        "stepfunctions_transition",
        (),
        lambda: "Step Functions standard state transition",
        pl.stepfunctions_query,
        pl.stepfunctions_transition,
    ),
    Product(
        "lambda_gb_second",
        ("architecture",),
        lambda arch: f"Lambda {arch} duration",
        lambda region, _a: pl.lambda_query(region),
        pl.lambda_gb_second,
        snapshot_key=str,
        everything=lambda _: [("x86_64",), ("arm64",)],
    ),
    Product("lambda_request", (), lambda: "Lambda requests", pl.lambda_query, pl.lambda_request),
)
PRODUCTS: dict[str, Product] = {p.name: p for p in _PRODUCTS}


def checked_label(key: _Key) -> str:
    """The label of a key before its dimensions are checked (what an argument error names)."""
    spec = key.spec
    return (spec.check_label or spec.label)(*key.dimensions)


def every_key(instance_types: Sequence[str]) -> list[PriceKey | TierKey]:
    """Every key a snapshot holds, in the snapshot's order (instance types from the catalog)."""
    keys: list[PriceKey | TierKey] = []
    for spec in _PRODUCTS:
        for dimensions in spec.everything(instance_types):
            keys.append(TierKey(spec.name, dimensions) if spec.tiered else PriceKey(spec.name, dimensions))
    return keys
