"""A fake ``PriceBook`` holding the us-east-1 reference prices of the AWS storage facts page.

Shared by the cost tests (imported as a sibling module, like workflow_fakes).
"""

from __future__ import annotations

from typing import Any, Literal

from storagebench.prices.models import Price, PriceNotFound, PriceSource, PriceTier
from storagebench.prices.products import PriceKey, TierKey

AS_OF = "2026-11-21"

# us-east-1, from aws-storage-facts.md (instances: the catalog's seeds)
INSTANCE_HOUR = {
    "c5.large": 0.085,
    "c5.2xlarge": 0.34,
    "c5.4xlarge": 0.68,
    "r3.4xlarge": 1.33,
    "r5b.4xlarge": 1.192,
    "r5b.24xlarge": 7.152,
    "r5n.24xlarge": 7.152,  # the catalog seed (r5n.large x 48)
    "i3en.large": 0.226,
    "m5.large": 0.096,
}
EBS_GB_MONTH = {
    "gp3": 0.08,
    "gp2": 0.10,
    "io1": 0.125,
    "io2": 0.125,
    "st1": 0.045,
    "sc1": 0.015,
    "standard": 0.05,
}
EBS_IOPS_TIERS: dict[str, list[tuple[float, float | None, float]]] = {
    "io1": [(0, None, 0.065)],
    "io2": [(0, 32_000, 0.065), (32_000, 64_000, 0.0455), (64_000, None, 0.03185)],
    "gp3": [(3_000, None, 0.005)],
}
GP3_THROUGHPUT: list[tuple[float, float | None, float]] = [(125.0, None, 0.04)]
EFS_GB_MONTH = {False: 0.30, True: 0.16}
EFS_PROVISIONED_MIBPS_MONTH = 6.00
EFS_ELASTIC_GB = {"read": 0.03, "write": 0.06}
FSX_GB_MONTH: dict[tuple[str, int | None], float] = {
    ("SCRATCH_2", None): 0.14,
    ("PERSISTENT_2", 125): 0.145,
    ("PERSISTENT_2", 250): 0.21,
    ("PERSISTENT_2", 500): 0.34,
    ("PERSISTENT_2", 1000): 0.60,
}
SFN_TRANSITION = 0.000025
LAMBDA_GB_SECOND = {"x86_64": 0.0000166667, "arm64": 0.0000133334}
LAMBDA_REQUEST = 0.0000002


class ReferenceBook:
    """A ``PriceBook`` over plain tables; every table can be replaced, any product made to fail.

    ``sources`` maps a product family ("instance", "ebs", "efs", "fsx", "sfn", "lambda") to a
    (source, as_of) pair, for provenance tests; ``missing`` names families that raise PriceNotFound.
    """

    def __init__(
        self,
        region: str = "us-east-1",
        *,
        instances: dict[str, float] | None = None,
        ebs: dict[str, float] | None = None,
        efs: dict[bool, float] | None = None,
        fsx: dict[tuple[str, int | None], float] | None = None,
        sources: dict[str, tuple[PriceSource, str]] | None = None,
        missing: frozenset[str] = frozenset(),
        rhel: dict[str, float] | None = None,
        ebs_optimized_fee: dict[str, float] | None = None,
    ) -> None:
        self.region = region
        self.instances = {**INSTANCE_HOUR, **(instances or {})}
        self.ebs = {**EBS_GB_MONTH, **(ebs or {})}
        self.efs = {**EFS_GB_MONTH, **(efs or {})}
        self.fsx = {**FSX_GB_MONTH, **(fsx or {})}
        self.sources = sources or {}
        self.missing = missing
        # The reference page has neither: absent unless a test gives them (constructed values).
        self.rhel = rhel or {}
        self.ebs_optimized_fee = ebs_optimized_fee or {}
        self.asked: list[str] = []

    def _price(self, family: str, usd: float, unit: str, what: str) -> Price:
        self.asked.append(what)
        if family in self.missing:
            raise PriceNotFound(f"no price for {what} in {self.region} (test)")
        source, as_of = self.sources.get(family, ("snapshot", AS_OF))
        return Price(usd=usd, unit=unit, region=self.region, source=source, as_of=as_of, description=what)

    def _tiers(
        self, family: str, rows: list[tuple[float, float | None, float]], unit: str, what: str
    ) -> list[PriceTier]:
        return [PriceTier(begin=b, end=e, price=self._price(family, usd, unit, what)) for b, e, usd in rows]

    def price(self, key: PriceKey | TierKey) -> Any:
        """The one question every book answers, dispatched to the tables below."""
        method = "instance_hour" if key.product == "ec2_instance_hour" else key.product
        return getattr(self, method)(*key.dimensions)

    def instance_hour(self, instance_type: str) -> Price:
        if instance_type not in self.instances:
            raise PriceNotFound(f"no price for EC2 {instance_type} in {self.region}")
        return self._price("instance", self.instances[instance_type], "Hrs", f"EC2 {instance_type}")

    def ec2_os_instance_hour(self, instance_type: str, operating_system: str) -> Price:
        if operating_system != "RHEL" or instance_type not in self.rhel:
            raise PriceNotFound(
                f"no price for EC2 {instance_type} on-demand {operating_system} in {self.region}"
            )
        return self._price("instance", self.rhel[instance_type], "Hrs", f"EC2 {instance_type} RHEL")

    def ec2_ebs_optimized_hour(self, instance_type: str) -> Price:
        if instance_type not in self.ebs_optimized_fee:
            raise PriceNotFound(f"no price for EC2 {instance_type} EBS-optimized fee in {self.region}")
        fee = self.ebs_optimized_fee[instance_type]
        return self._price("instance", fee, "Hrs", f"EC2 {instance_type} EBS-optimized fee")

    def ebs_storage(self, volume_type: str) -> Price:
        return self._price("ebs", self.ebs[volume_type], "GB-Mo", f"EBS {volume_type} storage")

    def ebs_iops(self, volume_type: str) -> list[PriceTier]:
        rows = EBS_IOPS_TIERS.get(volume_type, [])
        return self._tiers("ebs", rows, "IOPS-Mo", f"EBS {volume_type} IOPS")

    def ebs_throughput(self, volume_type: str) -> list[PriceTier]:
        rows = GP3_THROUGHPUT if volume_type == "gp3" else []
        return self._tiers("ebs", rows, "MiBps-Mo", f"EBS {volume_type} throughput")

    def efs_storage(self, one_zone: bool) -> Price:
        return self._price("efs", self.efs[one_zone], "GB-Mo", "EFS storage")

    def efs_provisioned_throughput(self) -> Price:
        return self._price("efs", EFS_PROVISIONED_MIBPS_MONTH, "MiBps-Mo", "EFS provisioned throughput")

    def efs_elastic_transfer(self, direction: Literal["read", "write"]) -> Price:
        return self._price("efs", EFS_ELASTIC_GB[direction], "GB", f"EFS Elastic {direction}")

    def fsx_lustre_storage(self, deployment_type: str, per_unit_throughput: int | None) -> Price:
        key = (deployment_type, per_unit_throughput)
        if key not in self.fsx:
            raise PriceNotFound(f"no price for FSx for Lustre {key} in {self.region}")
        return self._price("fsx", self.fsx[key], "GB-Mo", f"FSx {key}")

    def stepfunctions_transition(self) -> Price:
        return self._price("sfn", SFN_TRANSITION, "Transition", "Step Functions transition")

    def lambda_gb_second(self, architecture: Literal["x86_64", "arm64"]) -> Price:
        return self._price("lambda", LAMBDA_GB_SECOND[architecture], "GB-Second", "Lambda duration")

    def lambda_request(self) -> Price:
        return self._price("lambda", LAMBDA_REQUEST, "Request", "Lambda requests")


def study3_book() -> ReferenceBook:
    """Study 3's published per-GB-month prices: EFS Standard $0.30, FSx for Lustre $0.14, EBS $0.10."""
    return ReferenceBook(
        ebs={"gp2": 0.10},
        efs={False: 0.30},
        fsx={("SCRATCH_2", None): 0.14},
        sources={"efs": ("snapshot", "2019-05-01"), "fsx": ("snapshot", "2019-05-01")},
    )
