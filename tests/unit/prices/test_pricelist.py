"""Price List parsing and selection (pure): recorded GetProducts data where public code had it,
constructed data in the documented shape elsewhere (tests/data/pricing/README.md says which)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.prices import pricelist as pl
from storagebench.prices.models import PriceNotFound
from storagebench.prices.pricelist import PriceListError, Product

DATA = Path(__file__).resolve().parents[2] / "data" / "pricing"


def response(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return document


def products(*names: str) -> list[Product]:
    return [p for name in names for p in pl.parse_price_list(response(name)["PriceList"])]


def entry(usagetype: str, usd: str = "1.0", unit: str = "GB-Mo", **attributes: str) -> dict[str, Any]:
    """A minimal constructed PriceList document (for malformed and ambiguous cases)."""
    sku = "TEST" + usagetype.replace(":", "").replace(".", "").replace("-", "").upper()[:12] + usd
    return {
        "product": {
            "sku": sku,
            "productFamily": "Storage",
            "attributes": {"usagetype": usagetype, **attributes},
        },
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": {
                f"{sku}.JRTCKXETXF": {
                    "priceDimensions": {
                        f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                            "unit": unit,
                            "beginRange": "0",
                            "endRange": "Inf",
                            "pricePerUnit": {"USD": usd},
                            "description": "constructed",
                        }
                    }
                }
            }
        },
    }


# ------------------------------------------------------------------------------ parsing (recorded)


def test_recorded_ec2_product_reads_on_demand_terms_only() -> None:
    [m5] = products("recorded/cloudlint-getproducts-m5-large-us-east-1.json")
    assert m5.sku == "6C86BEPQVG73ZGGR"
    assert m5.product_family == "Compute Instance"
    assert m5.usagetype == "BoxUsage:m5.large"
    # Twelve Reserved terms in the recording, none read: one on-demand dimension.
    assert [(d.usd, d.unit, d.begin, d.end) for d in m5.dimensions] == [(0.096, "Hrs", 0.0, None)]
    assert m5.publication_date == "2020-07-09T22:30:13Z"

    rate = pl.instance_hour([m5], "m5.large")
    assert (rate.usd, rate.unit, rate.sku) == (0.096, "Hrs", "6C86BEPQVG73ZGGR")
    assert rate.description == "$0.096 per On Demand Linux m5.large Instance Hour"
    with pytest.raises(PriceNotFound, match=r"c5\.large"):
        pl.instance_hour([m5], "c5.large")


@pytest.mark.parametrize(
    ("name", "prefixed", "region_name"),
    [
        ("recorded/botocore-examples-getproducts-io1-storage-ca-central-1.json", "CAN1-", "Canada (Central)"),
        (
            "recorded/awscli-example-getproducts-io1-storage-ap-southeast-1.json",
            "APS1-",
            "Asia Pacific (Singapore)",
        ),
    ],
)
def test_recorded_region_prefixed_usage_type_matches_the_documented_one(
    name: str, prefixed: str, region_name: str
) -> None:
    [product] = products(name)
    assert product.usagetype == f"{prefixed}EBS:VolumeUsage.piops"
    assert product.base_usage_type == "EBS:VolumeUsage.piops"
    assert product.attribute("location") == region_name
    # These recordings predate the volumeApiName attribute: the usage type identifies io1.
    rate = pl.ebs_storage([product], "io1")
    assert (rate.usd, rate.unit) == (0.138, "GB-Mo")
    with pytest.raises(PriceNotFound):
        pl.ebs_storage([product], "io2")


def test_recorded_ebs_items_gp2_storage_and_io1_iops() -> None:
    [gp2] = products("recorded/awspricing-items-ebs-gp2-storage-us-east-1.json")
    [io1] = products("recorded/awspricing-items-ebs-io1-iops-us-east-1.json")
    assert pl.ebs_storage([gp2], "gp2").usd == 0.10
    [tier] = pl.ebs_iops([io1], "io1")
    assert (tier.usd, tier.unit, tier.begin, tier.end, tier.sku) == (
        0.065,
        "IOPS-Mo",
        0,
        None,
        "D8RDVC722HKNR55G",
    )
    assert io1.service_code == "AmazonEC2"  # this recording spells the top-level key 'servicecode'


@pytest.mark.parametrize(
    ("usagetype", "base"),
    [
        ("USE2-EBS:VolumeP-IOPS.io2", "EBS:VolumeP-IOPS.io2"),
        ("EU-EBS:VolumeUsage.gp3", "EBS:VolumeUsage.gp3"),
        ("USE1-StateTransition", "StateTransition"),
        ("EBS:VolumeP-IOPS.io2.tier2", "EBS:VolumeP-IOPS.io2.tier2"),
        ("EBS:VolumeUsage", "EBS:VolumeUsage"),
        ("BoxUsage:m5.large", "BoxUsage:m5.large"),
        ("TimedStorage-ByteHrs", "TimedStorage-ByteHrs"),
        ("ProvisionedTP-MiBpsHrs", "ProvisionedTP-MiBpsHrs"),
        ("IATimedStorage-ByteHrs", "IATimedStorage-ByteHrs"),
    ],
)
def test_base_usage_type_strips_only_a_region_prefix(usagetype: str, base: str) -> None:
    assert pl.base_usage_type(usagetype) == base


# ------------------------------------------------------------------------------ EBS (constructed)


def test_io2_three_tiers_from_begin_and_end_range() -> None:
    tiers = pl.ebs_iops(products("constructed/ebs-iops-io2-ranged-us-east-1.json"), "io2")
    assert [(t.begin, t.end, t.usd) for t in tiers] == [
        (0, 32000, 0.065),
        (32000, 64000, 0.0455),
        (64000, None, 0.03185),
    ]
    assert {t.sku for t in tiers} == {"TESTIOPSIO2USE1"}
    assert all(t.unit == "IOPS-Mo" for t in tiers)


def test_io2_tiers_as_region_prefixed_usage_types_each_zero_to_inf() -> None:
    found = products("constructed/ebs-iops-us-east-2.json")
    assert {p.usagetype for p in found} >= {"USE2-EBS:VolumeP-IOPS.io2", "USE2-EBS:VolumeP-IOPS.io2.tier3"}
    tiers = pl.ebs_iops(found, "io2")
    assert [(t.begin, t.end, t.usd, t.usagetype) for t in tiers] == [
        (0, 32000, 0.065, "USE2-EBS:VolumeP-IOPS.io2"),
        (32000, 64000, 0.0455, "USE2-EBS:VolumeP-IOPS.io2.tier2"),
        (64000, None, 0.03185, "USE2-EBS:VolumeP-IOPS.io2.tier3"),
    ]
    [io1] = pl.ebs_iops(found, "io1")
    assert (io1.usd, io1.usagetype) == (0.065, "USE2-EBS:VolumeP-IOPS.piops")
    [gp3] = pl.ebs_iops(found, "gp3")
    assert (gp3.begin, gp3.end, gp3.usd) == (3000, None, 0.005)  # starts at the 3,000 included IOPS


def test_io2_tiers_with_a_gap_are_refused() -> None:
    found = [p for p in products("constructed/ebs-iops-us-east-2.json") if not p.usagetype.endswith("tier2")]
    with pytest.raises(PriceListError, match="tiers do not cover"):
        pl.ebs_iops(found, "io2")


def test_gp3_throughput_is_converted_from_gibps_month_to_mibps_month() -> None:
    [tier] = pl.ebs_throughput(products("constructed/ebs-throughput-gp3-us-east-1.json"), "gp3")
    assert tier.usd == pytest.approx(0.04)  # 40.96 / 1,024
    assert (tier.unit, tier.begin, tier.end) == ("MiBps-Mo", 125, None)
    assert (tier.api_unit, tier.api_usd) == ("GiBps-mo", 40.96)


def test_volume_types_without_iops_or_throughput_charges_and_unknown_ones() -> None:
    for volume_type in ("gp2", "st1", "sc1", "standard"):
        assert pl.ebs_iops([], volume_type) == []
    for volume_type in ("gp2", "io1", "io2", "st1"):
        assert pl.ebs_throughput([], volume_type) == []
    with pytest.raises(PriceNotFound, match="unknown EBS volume type"):
        pl.ebs_iops([], "gp9")
    with pytest.raises(PriceNotFound, match="unknown EBS volume type"):
        pl.ebs_storage([], "gp9")


@pytest.mark.parametrize(
    ("volume_type", "usd"),
    [("gp3", 0.08), ("io1", 0.125), ("io2", 0.125), ("st1", 0.045), ("sc1", 0.015), ("standard", 0.05)],
)
def test_ebs_storage_by_volume_api_name(volume_type: str, usd: float) -> None:
    rate = pl.ebs_storage(products(f"constructed/ebs-storage-{volume_type}-us-east-1.json"), volume_type)
    assert (rate.usd, rate.unit) == (usd, "GB-Mo")  # io2's "GB-month" spelling is read as GB-Mo


# ------------------------------------------------------------------------- EFS, FSx, Lambda, Step Functions


def test_efs_prices() -> None:
    efs = products("constructed/efs-us-east-1.json")
    assert pl.efs_storage(efs, one_zone=False).usd == 0.30
    assert pl.efs_storage(efs, one_zone=True).usd == 0.16
    provisioned = pl.efs_provisioned_throughput(efs)
    assert (provisioned.usd, provisioned.unit) == (6.00, "MiBps-Mo")
    read, write = pl.efs_elastic_transfer(efs, "read"), pl.efs_elastic_transfer(efs, "write")
    assert (read.usd, read.unit, write.usd) == (0.03, "GB", 0.06)  # not the IA read ($0.01)


@pytest.mark.parametrize(
    ("deployment", "tier", "usd"),
    [
        ("SCRATCH_1", None, 0.14),
        ("SCRATCH_2", None, 0.14),
        ("PERSISTENT_1", 50, 0.145),
        ("PERSISTENT_1", 200, 0.29),
        ("PERSISTENT_2", 125, 0.145),
        ("PERSISTENT_2", 1000, 0.60),
    ],
)
def test_fsx_lustre_storage_by_deployment_and_tier(deployment: str, tier: int | None, usd: float) -> None:
    rate = pl.fsx_lustre_storage(products("constructed/fsx-lustre-us-east-1.json"), deployment, tier)
    assert (rate.usd, rate.unit) == (usd, "GB-Mo")


def test_fsx_key_needs_a_known_tier_for_persistent_types() -> None:
    assert pl.fsx_key("scratch_2", None) == "SCRATCH_2"
    assert pl.fsx_key("PERSISTENT_2", 250) == "PERSISTENT_2/250"
    with pytest.raises(PriceNotFound, match="125, 250, 500, 1000"):
        pl.fsx_key("PERSISTENT_2", None)
    with pytest.raises(PriceNotFound, match="unknown FSx for Lustre deployment type"):
        pl.fsx_key("PERSISTENT_9", 100)


def test_lambda_first_tier_by_architecture_and_requests() -> None:
    found = products("constructed/lambda-us-east-1.json")
    x86, arm = pl.lambda_gb_second(found, "x86_64"), pl.lambda_gb_second(found, "arm64")
    assert (x86.usd, x86.unit, x86.begin, x86.end) == (0.0000166667, "GB-Second", 0, None)
    assert arm.usd == 0.0000133334
    request = pl.lambda_request(found)
    assert (request.usd, request.unit) == (0.0000002, "Request")


def test_step_functions_transition_skips_a_free_tier() -> None:
    rate = pl.stepfunctions_transition(products("constructed/states-us-east-1.json"))
    assert (rate.usd, rate.unit, rate.begin) == (0.000025, "Transition", 0)
    assert rate.usagetype == "USE1-StateTransition"


# ------------------------------------------------------------------------------ queries


def test_ec2_instance_query_filters() -> None:
    query = pl.ec2_instance_query("eu-west-1", "c5.large")
    assert query.service_code == "AmazonEC2"
    assert {f["Field"]: f["Value"] for f in query.api_filters()} == {
        "regionCode": "eu-west-1",
        "instanceType": "c5.large",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
    }
    assert all(f["Type"] == "TERM_MATCH" for f in query.api_filters())


@pytest.mark.parametrize(
    ("query", "service", "fields"),
    [
        (
            pl.ebs_storage_query("us-east-2", "gp3"),
            "AmazonEC2",
            {"productFamily": "Storage", "volumeApiName": "gp3"},
        ),
        (
            pl.ebs_iops_query("us-east-2"),
            "AmazonEC2",
            {"productFamily": "System Operation", "group": "EBS IOPS"},
        ),
        (pl.ebs_throughput_query("us-east-2"), "AmazonEC2", {"productFamily": "Provisioned Throughput"}),
        (pl.efs_query("us-east-2"), "AmazonEFS", {}),
        (pl.fsx_lustre_query("us-east-2"), "AmazonFSx", {"fileSystemType": "Lustre"}),
        (pl.lambda_query("us-east-2"), "AWSLambda", {"productFamily": "Serverless"}),
        (pl.stepfunctions_query("us-east-2"), "AmazonStates", {}),
    ],
)
def test_queries_filter_on_region_code_never_on_usage_type(
    query: pl.Query, service: str, fields: dict[str, str]
) -> None:
    assert query.service_code == service
    assert dict(query.filters) == {"regionCode": "us-east-2", **fields}
    assert "usagetype" not in dict(query.filters)  # its value would depend on the region's prefix


# ------------------------------------------------------------------------------ malformed and ambiguous


def test_units_are_canonical() -> None:
    assert pl.canonical_unit("GB-month") == "GB-Mo"
    assert pl.canonical_unit("Lambda-GB-Second") == "GB-Second"
    assert pl.canonical_unit("Requests") == "Request"
    assert pl.canonical_unit("StateTransitions") == "Transition"
    assert pl.canonical_unit("Quantity") == "Quantity"


def test_malformed_entries_are_refused_with_a_reason() -> None:
    with pytest.raises(PriceListError, match="not JSON"):
        pl.parse_product("{not json")
    with pytest.raises(PriceListError, match="no 'product'"):
        pl.parse_product({"terms": {}})
    other_currency = entry("CNN1-EBS:VolumeUsage.gp3")
    dimension = next(
        iter(next(iter(other_currency["terms"]["OnDemand"].values()))["priceDimensions"].values())
    )
    dimension["pricePerUnit"] = {"CNY": "0.53"}
    with pytest.raises(PriceListError, match="no USD price"):
        pl.parse_product(json.dumps(other_currency))
    with pytest.raises(PriceListError, match="not a number"):
        pl.parse_product(json.dumps(entry("EBS:VolumeUsage.gp3", usd="n/a")))


def test_two_products_with_different_prices_are_ambiguous() -> None:
    found = pl.parse_price_list(
        [
            json.dumps(entry("EBS:VolumeUsage.gp3", "0.08", volumeApiName="gp3")),
            json.dumps(entry("EBS:VolumeUsage.gp3", "0.09", volumeApiName="gp3")),
        ]
    )
    with pytest.raises(PriceListError, match="different prices"):
        pl.ebs_storage(found, "gp3")
    same = pl.parse_price_list([json.dumps(entry("EBS:VolumeUsage.gp3", "0.08", volumeApiName="gp3"))] * 2)
    assert pl.ebs_storage(same, "gp3").usd == 0.08


def test_an_unexpected_unit_is_refused() -> None:
    found = pl.parse_price_list(
        [json.dumps(entry("EBS:VolumeUsage.gp3", "0.08", unit="Hrs", volumeApiName="gp3"))]
    )
    with pytest.raises(PriceListError, match="unit 'Hrs'"):
        pl.ebs_storage(found, "gp3")


def test_local_zone_products_are_not_region_prices() -> None:
    local = entry(
        "USE1-BOS1-EBS:VolumeUsage.gp3", "0.096", volumeApiName="gp3", locationType="AWS Local Zone"
    )
    with pytest.raises(PriceNotFound):
        pl.ebs_storage(pl.parse_price_list([json.dumps(local)]), "gp3")
