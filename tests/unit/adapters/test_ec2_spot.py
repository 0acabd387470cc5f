"""Spot launches on EC2 (moto): the request sent, the market and zone read back, the price history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from storagebench.adapters.aws.ec2 import SPOT_MARKET_OPTIONS, Ec2Compute, Image
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.spot_prices import LOOKBACK, Ec2SpotPriceHistory
from storagebench.core.state import LaunchSpec, LaunchVolume
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_CONFIG, TAG_RUN
from storagebench.prices.spot import SpotPricePoint, paid

REGION = "us-east-1"
AMI = Image("ami-1", "/dev/xvda", "x86_64")
TAGS = {TAG_RUN: "run-1", TAG_CONFIG: "gp3", "Name": "storagebench run-1/gp3"}


def spec(market: Any = "on-demand", token: str = "b" * 64) -> LaunchSpec:
    return LaunchSpec(
        client_token=token,
        instance_type="m6i.large",
        architecture="x86_64",
        root=LaunchVolume(target_id="root", member=0, device_name="/dev/xvda", volume_type="gp3", size_gib=8),
        volumes=[
            LaunchVolume(target_id="data", member=0, device_name="/dev/sdf", volume_type="gp3", size_gib=100)
        ],
        tags=TAGS,
        market=market,
    )


@pytest.fixture
def compute(settings: AwsSettings, ami: dict[str, str]) -> Ec2Compute:
    return Ec2Compute(
        boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION), settings
    )


def test_spot_request_is_a_one_time_spot_run_instances_with_its_request_tagged(compute: Ec2Compute) -> None:
    request = compute.run_instances_request(spec("spot"), AMI)
    assert request["InstanceMarketOptions"] == {
        "MarketType": "spot",
        "SpotOptions": {"SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"},
    }
    assert request["InstanceMarketOptions"] == SPOT_MARKET_OPTIONS
    by_type = {t["ResourceType"]: t["Tags"] for t in request["TagSpecifications"]}
    assert sorted(by_type) == ["instance", "spot-instances-request", "volume"]
    assert by_type["spot-instances-request"] == by_type["instance"]
    assert {"Key": TAG_CLIENT_TOKEN, "Value": "b" * 64} in by_type["spot-instances-request"]
    # the rest is the on-demand launch unchanged: same volumes, same token, same shutdown behaviour
    on_demand = compute.run_instances_request(spec("on-demand"), AMI)
    assert "InstanceMarketOptions" not in on_demand
    assert {k: v for k, v in request.items() if k not in ("InstanceMarketOptions", "TagSpecifications")} == {
        k: v for k, v in on_demand.items() if k != "TagSpecifications"
    }


def test_spot_launch_on_moto_reads_back_market_and_zone(compute: Ec2Compute) -> None:
    resources = compute.launch(spec("spot"))
    assert resources.market == "spot"
    assert resources.availability_zone == f"{REGION}a"
    instance = compute.ec2.describe_instances(InstanceIds=[resources.instance_id])["Reservations"][0][
        "Instances"
    ][0]
    assert instance["InstanceLifecycle"] == "spot"
    assert [v.volume_id is not None for v in resources.volumes] == [True]  # data volume made by the launch
    # a retried launch (same token) finds the same instance, and says Spot again
    again = compute.launch(spec("spot"))
    assert again.instance_id == resources.instance_id
    assert again.market == "spot"


def test_on_demand_launch_is_recorded_as_on_demand(compute: Ec2Compute) -> None:
    resources = compute.launch(spec("on-demand", token="c" * 64))
    assert resources.market == "on-demand"
    assert resources.availability_zone == f"{REGION}a"


# ------------------------------------------------------------------------ Spot price history


def _entry(zone: str, price: str, at: datetime, product: str = "Linux/UNIX") -> dict[str, Any]:
    return {
        "AvailabilityZone": zone,
        "InstanceType": "m6i.large",
        "ProductDescription": product,
        "SpotPrice": price,
        "Timestamp": at,
    }


LAUNCH = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)  # the Spot instance the history tests price


def _stubbed() -> tuple[Any, Stubber]:
    ec2 = boto3.client("ec2", region_name=REGION)
    return ec2, Stubber(ec2)


def _asked(since: datetime, until: datetime) -> dict[str, Any]:
    """The DescribeSpotPriceHistory an m6i.large in us-east-1a asks for: Linux, from since to until."""
    return {
        "InstanceTypes": ["m6i.large"],
        "ProductDescriptions": ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
        "AvailabilityZone": "us-east-1a",
        "StartTime": since,
        "EndTime": until,
    }


def test_history_asks_for_type_zone_product_and_lifetime_and_keeps_only_that_zone() -> None:
    ec2, stubber = _stubbed()
    start, end = LAUNCH, LAUNCH + timedelta(hours=2)
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                _entry("us-east-1a", "0.0400", start - timedelta(minutes=30)),
                _entry("us-east-1a", "0.0500", start + timedelta(hours=1), "Linux/UNIX (Amazon VPC)"),
                _entry("us-east-1b", "0.9000", start),  # another zone: never this instance's price
                _entry("us-east-1a", "0.9000", start, "Windows"),  # another product
            ]
        },
        _asked(start, end),
    )
    with stubber:
        points = Ec2SpotPriceHistory(ec2).history("m6i.large", "us-east-1a", start, end)
    stubber.assert_no_pending_responses()
    assert points == [
        SpotPricePoint(start - timedelta(minutes=30), 0.04),
        SpotPricePoint(start + timedelta(hours=1), 0.05),
    ]
    charge = paid(points, "m6i.large", "us-east-1a", start, end)
    assert charge.usd == pytest.approx(0.04 + 0.05)
    assert charge.average_usd_per_hour == pytest.approx(0.045)


def test_history_looks_back_for_the_price_in_effect_at_launch() -> None:
    ec2, stubber = _stubbed()
    start, end = LAUNCH, LAUNCH + timedelta(hours=1)
    stubber.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [_entry("us-east-1a", "0.0600", start + timedelta(minutes=30))]},
    )
    stubber.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                _entry("us-east-1a", "0.0100", start - timedelta(days=3)),
                _entry("us-east-1a", "0.0300", start - timedelta(days=1)),
            ]
        },
        _asked(start - LOOKBACK, start),
    )
    with stubber:
        points = Ec2SpotPriceHistory(ec2).history("m6i.large", "us-east-1a", start, end)
    assert [p.usd_per_hour for p in points] == [0.03, 0.06]  # the latest before the launch, then the change
    assert paid(points, "m6i.large", "us-east-1a", start, end).usd == pytest.approx(0.5 * 0.03 + 0.5 * 0.06)


def test_moto_history_prices_a_spot_instance(aws: None) -> None:
    """moto answers one synthetic price per zone (ignoring AvailabilityZone): the adapter keeps the zone's."""
    start = datetime.now(UTC) - timedelta(hours=1)
    history = Ec2SpotPriceHistory(boto3.client("ec2", region_name=REGION))
    points = history.history("m6i.large", f"{REGION}b", start, start + timedelta(hours=1))
    assert len(points) == 1 and points[0].at < start
    charge = paid(points, "m6i.large", f"{REGION}b", start, start + timedelta(hours=1))
    assert charge.zone == f"{REGION}b" and charge.average_usd_per_hour == points[0].usd_per_hour
