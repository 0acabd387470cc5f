"""On AWS, Finalize prices with the API and falls back to the snapshot per question it cannot ask."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.adapters.aws import price_book
from storagebench.adapters.aws.pricing import FallbackPriceBook, NotInPriceList, PriceListAccessError
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.prices.products import PriceKey, TierKey
from storagebench.prices.snapshot import SnapshotPriceBook


class DeniedBook:
    """The API as a role without pricing:GetProducts sees it; one question answers NotInPriceList."""

    region = "us-east-1"

    def price(self, key: PriceKey | TierKey) -> Any:
        if key == PriceKey("ec2_instance_hour", ("x9.nothing",)):
            raise NotInPriceList("EC2 x9.nothing", self.region, "no product")
        raise PriceListAccessError("AccessDeniedException: not authorized to perform pricing:GetProducts")


def test_each_question_the_api_cannot_answer_comes_from_the_snapshot_and_says_so() -> None:
    snapshot = SnapshotPriceBook("us-east-1")
    book = FallbackPriceBook(DeniedBook(), snapshot)  # type: ignore[arg-type]
    price = book.price(PriceKey("ec2_instance_hour", ("c5.4xlarge",)))
    assert (
        price == snapshot.price(PriceKey("ec2_instance_hour", ("c5.4xlarge",))) and price.source == "snapshot"
    )
    assert book.price(TierKey("ebs_iops", ("io2",))) == snapshot.price(TierKey("ebs_iops", ("io2",)))
    assert len(book.fell_back) == 2 and "AccessDeniedException" in book.fell_back[0]


def test_a_product_the_api_does_not_list_is_not_guessed() -> None:
    book = FallbackPriceBook(DeniedBook(), SnapshotPriceBook("us-east-1"))  # type: ignore[arg-type]
    with pytest.raises(NotInPriceList):
        book.price(PriceKey("ec2_instance_hour", ("x9.nothing",)))


def test_the_stack_chooses_the_source() -> None:
    settings = AwsSettings.model_validate(
        {
            "results_table": "t",
            "artifacts_bucket": "b",
            "stack_name": "s",
            "region": "eu-west-1",
            "subnet_id": "subnet-1",
            "security_group_id": "sg-1",
            "instance_profile_arn": "arn:aws:iam::1:instance-profile/p",
            "instance_role_id": "AROAEXAMPLEROLE12345",
            "agent_document": "d",
        }
    )
    assert isinstance(price_book(settings, "snapshot", "eu-west-1"), SnapshotPriceBook)
    api = price_book(settings, "price-list-api", "eu-west-1")
    assert isinstance(api, FallbackPriceBook) and api.region == "eu-west-1"
