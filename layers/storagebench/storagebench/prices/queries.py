"""The Price List queries (``pricing:GetProducts``): one function per product, each documenting its
TERM_MATCH filters and why. Queries never filter on ``usagetype``, whose region prefix differs by
region (``prices.pricelist``'s docstring); the selectors there pick the rates from what they return.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Query:
    """One GetProducts request: a service code and TERM_MATCH filters, for one region."""

    service_code: str
    region: str
    filters: tuple[tuple[str, str], ...]

    def api_filters(self) -> list[dict[str, str]]:
        return [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in self.filters]

    def describe(self) -> str:
        terms = ", ".join(f"{f}={v}" for f, v in self.filters)
        return f"{self.service_code} [{terms}]"


def _query(service_code: str, region: str, **filters: str) -> Query:
    return Query(service_code, region, (("regionCode", region), *sorted(filters.items())))


def ec2_instance_query(region: str, instance_type: str) -> Query:
    """On-demand Linux, shared tenancy: without ``capacitystatus=Used`` the capacity-reservation
    SKUs (AllocatedCapacityReservation, UnusedCapacityReservation) match too; without
    ``preInstalledSw=NA`` and ``licenseModel`` the SQL Server and BYOL variants do."""
    return ec2_os_instance_query(region, instance_type, "Linux")


def ec2_os_instance_query(region: str, instance_type: str, operating_system: str) -> Query:
    """On-demand, shared tenancy, for an operating system (RHEL's licence is the difference of its
    hour and Linux's, so both are read with the same filters)."""
    return _query(
        "AmazonEC2",
        region,
        instanceType=instance_type,
        operatingSystem=operating_system,
        tenancy="Shared",
        preInstalledSw="NA",
        capacitystatus="Used",
        licenseModel="No License required",
    )


def ec2_ebs_optimized_query(region: str, instance_type: str) -> Query:
    """The hourly EBS optimisation fee (``EBSOptimized:<type>``) is listed under the instance
    type with no operating system; the selector picks it by usage type."""
    return _query("AmazonEC2", region, instanceType=instance_type)


def ebs_storage_query(region: str, volume_type: str) -> Query:
    """``productFamily=Storage`` with the API's volume type name (``standard`` for magnetic)."""
    return _query("AmazonEC2", region, productFamily="Storage", volumeApiName=volume_type)


def ebs_iops_query(region: str) -> Query:
    """Every provisioned-IOPS product of the region (io1, the io2 tiers, gp3): a handful. The
    usage type is matched after the query, prefix removed (see the module docstring)."""
    return _query("AmazonEC2", region, productFamily="System Operation", group="EBS IOPS")


def ebs_throughput_query(region: str) -> Query:
    """gp3 provisioned throughput: ``productFamily=Provisioned Throughput`` (unit GiBps-mo)."""
    return _query("AmazonEC2", region, productFamily="Provisioned Throughput")


def efs_query(region: str) -> Query:
    """Every EFS product of the region (a few dozen: storage classes, provisioned and Elastic
    throughput, IA access): one query serves all four EFS prices."""
    return _query("AmazonEFS", region)


def fsx_lustre_query(region: str) -> Query:
    """FSx for Lustre products of the region (unverified attribute names: ``fileSystemType``,
    ``deploymentOption``, ``throughputCapacity``, ``storageType``)."""
    return _query("AmazonFSx", region, fileSystemType="Lustre")


def lambda_query(region: str) -> Query:
    """Lambda's ``Serverless`` products; duration and requests are told apart by ``group``."""
    return _query("AWSLambda", region, productFamily="Serverless")


def stepfunctions_query(region: str) -> Query:
    """Every Step Functions product of the region (standard transitions and Express)."""
    return _query("AmazonStates", region)
