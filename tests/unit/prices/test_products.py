"""Every price product is written once (``prices.products``) and every book answers every one of them."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.adapters.aws.pricing import ApiPriceBook, FallbackPriceBook, PriceListAccessError
from storagebench.catalog.loader import load_catalog
from storagebench.prices.models import Price, PriceNotFound, PriceTier
from storagebench.prices.products import PRODUCTS, PriceKey, TierKey, every_key
from storagebench.prices.snapshot import SnapshotPriceBook, load_snapshot

KEYS = every_key(sorted(load_catalog().instances))


def _id(key: PriceKey | TierKey) -> str:
    return key.label()


UNSEEDED = load_snapshot().regions["us-east-1"].unseeded
# Types optimised by default have no EBS-optimized fee product (a refresh lists them as missing).
OPTIMIZED = {n for n, s in load_catalog().instances.items() if s.ebs_optimized_by_default}
NO_FEE = {k for k in KEYS if k.product == "ec2_ebs_optimized_hour" and k.dimensions[0] in OPTIMIZED}
SEEDED = [k for k in KEYS if k.product not in UNSEEDED and k not in NO_FEE]


@pytest.mark.parametrize("key", SEEDED, ids=_id)
def test_the_snapshot_prices_every_key_of_every_product(key: PriceKey | TierKey) -> None:
    answer = SnapshotPriceBook("us-east-1").price(key)
    if isinstance(key, TierKey):
        assert isinstance(answer, list) and all(isinstance(t, PriceTier) for t in answer)
    else:
        assert isinstance(answer, Price) and answer.source == "snapshot"


def test_every_product_has_keys_in_the_snapshot() -> None:
    assert {k.product for k in KEYS} == set(PRODUCTS)


@pytest.mark.parametrize("product", sorted(UNSEEDED))
def test_an_unseeded_product_says_why_and_how_to_read_it(product: str) -> None:
    key = next(k for k in KEYS if k.product == product)
    with pytest.raises(PriceNotFound) as raised:
        SnapshotPriceBook("us-east-1").price(key)
    message = str(raised.value)
    assert UNSEEDED[product] in message and "storagebench prices refresh" in message
    assert len(UNSEEDED) <= 2, "seed a product's prices rather than growing the unseeded list"


class Unreachable:
    """The Price List API as a stack without pricing:GetProducts sees it."""

    def get_products(self, **request: Any) -> dict[str, Any]:
        raise PriceListAccessError(f"AccessDeniedException ({request['ServiceCode']})")


@pytest.mark.parametrize("key", SEEDED, ids=_id)
def test_the_fallback_answers_every_key_from_the_snapshot(key: PriceKey | TierKey) -> None:
    api = ApiPriceBook(Unreachable(), "us-east-1", cache_dir=None)
    book = FallbackPriceBook(api, SnapshotPriceBook("us-east-1"))
    assert book.price(key) == SnapshotPriceBook("us-east-1").price(key)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: PriceKey("ebs_snapshot_storage", ("gp3",)), "unknown price product 'ebs_snapshot_storage'"),
        (lambda: PriceKey("ebs_storage", ()), r"ebs_storage is priced by \(volume_type\), not by 0 value"),
        (lambda: PriceKey("ebs_iops", ("io2",)), "ebs_iops is tiered: ask with TierKey"),
        (lambda: TierKey("ebs_storage", ("gp3",)), "ebs_storage is one price: ask with PriceKey"),
    ],
)
def test_a_key_no_product_answers_is_refused_by_name(make: Any, message: str) -> None:
    with pytest.raises(PriceNotFound, match=message):
        make()


@pytest.mark.parametrize(
    "book",
    [
        SnapshotPriceBook("us-east-1"),
        ApiPriceBook(Unreachable(), "us-east-1", cache_dir=None),
    ],
    ids=["snapshot", "api"],
)
def test_an_unknown_dimension_names_the_product_and_what_is_known(book: Any) -> None:
    with pytest.raises(PriceNotFound, match=r"EBS gp9 storage.*unknown EBS volume type 'gp9' \(known: gp2"):
        book.price(PriceKey("ebs_storage", ("gp9",)))
    with pytest.raises(PriceNotFound, match=r"FSx for Lustre SCRATCH_9 storage.*known: SCRATCH_1"):
        book.price(PriceKey("fsx_lustre_storage", ("SCRATCH_9", None)))
