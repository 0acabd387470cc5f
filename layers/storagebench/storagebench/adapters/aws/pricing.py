"""Prices from the AWS Price List Query API (``pricing:GetProducts``), cached at most a day.

* ``PriceListClient`` sends one query (TERM_MATCH filters), follows ``NextToken`` to the last
  page and returns every ``PriceList`` entry; botocore errors become workflow errors through
  ``aws_call`` (no credentials -> ``PriceListAccessError``, no network -> ``ThrottledError``).
* ``ApiPriceBook`` implements ``PriceBook``: each question is a query of
  ``prices.pricelist`` and a selection from its products. Every query's raw answer is kept in
  a JSON file under ``cache_dir`` (key: service, region, filters) and reused for
  ``max_age_hours``; prices carry ``source="price-list-api"`` and ``as_of`` = when the API was
  read.
* ``build_snapshot`` reads everything the snapshot holds for some regions and returns the
  structure of ``prices/snapshot.json``, so the bundled snapshot is rebuilt from the API.

The Price List API has endpoints in us-east-1, eu-central-1 and ap-south-1 only; any region's
prices can be read from any of them (the client's region is not the priced region).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, overload

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.clock import Clock, SystemClock, iso, parse_iso
from storagebench.core.errors import WorkflowError
from storagebench.prices import pricelist as pl
from storagebench.prices.book import PriceBook
from storagebench.prices.models import Price, PriceNotFound, PriceTier
from storagebench.prices.pricelist import PriceListError, Product, Query, Rate
from storagebench.prices.products import PRODUCTS, PriceKey, TierKey, checked_label, every_key

__all__ = [
    "API_REGIONS",
    "ApiPriceBook",
    "FallbackPriceBook",
    "NotInPriceList",
    "PriceListAccessError",
    "PriceListClient",
    "build_snapshot",
]

API_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")
MAX_RESULTS = 100  # GetProducts' largest page
MAX_PAGES = 1000
CACHE_FORMAT = 1


class PriceListAccessError(WorkflowError):
    """The Price List API could not be read: no credentials, access denied, bad request."""


class NotInPriceList(PriceNotFound):
    """The Price List has no usable product for the question in this region (``reason`` says why:
    nothing matched, or what matched was malformed or ambiguous)."""

    def __init__(self, product: str, region: str, reason: str) -> None:
        super().__init__(f"no price for {product} in {region} from the Price List API: {reason}")
        self.product = product
        self.region = region
        self.reason = reason


class PriceListClient:
    """GetProducts with TERM_MATCH filters, every page."""

    def __init__(self, pricing_client: Any, max_results: int = MAX_RESULTS) -> None:
        self.client = pricing_client
        self.max_results = max_results

    def get_products(self, query: Query) -> list[str]:
        """Every PriceList entry (a JSON string each) of the query, all pages in order."""
        entries: list[str] = []
        token: str | None = None
        seen: set[str] = set()
        with aws_call(f"pricing:GetProducts {query.describe()}", default=PriceListAccessError):
            for _ in range(MAX_PAGES):
                request: dict[str, Any] = {
                    "ServiceCode": query.service_code,
                    "Filters": query.api_filters(),
                    "FormatVersion": "aws_v1",
                    "MaxResults": self.max_results,
                }
                if token:
                    request["NextToken"] = token
                response = self.client.get_products(**request)
                entries += [e if isinstance(e, str) else json.dumps(e) for e in response.get("PriceList", [])]
                token = response.get("NextToken") or None
                if token is None:
                    return entries
                if token in seen:
                    raise PriceListAccessError(f"pricing:GetProducts {query.describe()}: NextToken repeats")
                seen.add(token)
        raise PriceListAccessError(f"pricing:GetProducts {query.describe()}: more than {MAX_PAGES} pages")


@dataclass(frozen=True)
class _Fetched:
    products: list[Product]
    read_at: datetime


def cache_key(query: Query) -> str:
    """The cache file name of a query: service, region and a digest of the filters."""
    document = {"service": query.service_code, "region": query.region, "filters": sorted(query.filters)}
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:24]
    return f"{query.service_code}-{query.region}-{digest}.json"


class ApiPriceBook:
    """``PriceBook`` on the Price List API (``source="price-list-api"``), cached per query.

    ``cache_dir`` None keeps answers in memory only (``build_snapshot`` does that). A cached
    answer younger than ``max_age_hours`` is used without calling the API; an older one, an
    unreadable one or one for other filters is replaced by a fresh read.
    """

    def __init__(
        self,
        client: PriceListClient | Any,
        region: str,
        cache_dir: Path | None,
        clock: Clock | None = None,
        max_age_hours: float = 24,
    ) -> None:
        self.client = client if isinstance(client, PriceListClient) else PriceListClient(client)
        self.region = region
        self.cache_dir = cache_dir
        self.clock: Clock = clock or SystemClock()
        self.max_age = timedelta(hours=max_age_hours)
        self._memory: dict[str, _Fetched] = {}

    # ----------------------------------------------------------------------------- cache

    def _fresh(self, read_at: datetime) -> bool:
        age = self.clock.now() - read_at
        return timedelta(0) <= age < self.max_age

    def _load(self, query: Query, path: Path) -> _Fetched | None:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            read_at = parse_iso(document["read_at"])
            same = (
                document.get("format") == CACHE_FORMAT
                and document.get("service") == query.service_code
                and document.get("region") == query.region
                and [tuple(f) for f in document.get("filters", [])] == list(query.filters)
            )
            if not same or not self._fresh(read_at):
                return None
            return _Fetched(pl.parse_price_list(document["price_list"]), read_at)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing, stale-format or corrupt: read the API again

    def _store(self, query: Query, path: Path, entries: list[str], read_at: datetime) -> None:
        """Write the answer atomically; a cache that cannot be written only costs API calls."""
        document = {
            "format": CACHE_FORMAT,
            "service": query.service_code,
            "region": query.region,
            "filters": [list(f) for f in query.filters],
            "read_at": iso(read_at),
            "price_list": entries,
        }
        temporary: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(document, stream)
            Path(temporary).replace(path)
        except OSError:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)

    def _fetch(self, query: Query) -> _Fetched:
        key = cache_key(query)
        held = self._memory.get(key)
        if held is not None and self._fresh(held.read_at):
            return held
        path = self.cache_dir / key if self.cache_dir is not None else None
        fetched = self._load(query, path) if path is not None else None
        if fetched is None:
            entries = self.client.get_products(query)
            read_at = self.clock.now()
            fetched = _Fetched(pl.parse_price_list(entries), read_at)
            if path is not None:
                self._store(query, path, entries, read_at)
        self._memory[key] = fetched
        return fetched

    # ----------------------------------------------------------------------------- lookups

    def _look_up(self, query: Query, product: str, select: Callable[[list[Product]], Any]) -> tuple[Any, str]:
        try:
            fetched = self._fetch(query)
            return select(fetched.products), iso(fetched.read_at)
        except PriceNotFound as exc:
            reason = str(exc).removeprefix(f"{product}: ")
            raise NotInPriceList(product, self.region, f"{reason} (query {query.describe()})") from None
        except PriceListError as exc:  # the PriceBook contract knows only PriceNotFound
            reason = f"unusable Price List data: {exc}"
            raise NotInPriceList(product, self.region, f"{reason} (query {query.describe()})") from exc

    def _known(self, product: str, check: Callable[[], Any]) -> None:
        """Argument checks that need no API call (unknown volume or deployment types)."""
        try:
            check()
        except PriceNotFound as exc:
            raise NotInPriceList(product, self.region, str(exc)) from None

    def _rates(self, key: PriceKey | TierKey) -> tuple[Any, str]:
        """The Price List's rate (a tiered product: its rates) and when it was read."""
        spec, dimensions = key.spec, key.dimensions
        self._known(checked_label(key), lambda: spec.check(*dimensions))
        if not spec.charged(*dimensions):  # no such charge: no API call needed
            return [], iso(self.clock.now())
        query = spec.query(self.region, *dimensions)
        return self._look_up(query, key.label(), lambda found: spec.select(found, *dimensions))

    # ----------------------------------------------------------------------------- PriceBook

    def _price(self, rate: Rate, as_of: str) -> Price:
        return Price(
            usd=rate.usd,
            unit=rate.unit,
            region=self.region,
            source="price-list-api",
            as_of=as_of,
            sku=rate.sku,
            description=rate.description,
        )

    def _tiers(self, found: tuple[list[Rate], str]) -> list[PriceTier]:
        rates, as_of = found
        return [PriceTier(begin=r.begin, end=r.end, price=self._price(r, as_of)) for r in rates]

    @overload
    def price(self, key: TierKey) -> list[PriceTier]: ...

    @overload
    def price(self, key: PriceKey) -> Price: ...

    def price(self, key: PriceKey | TierKey) -> Price | list[PriceTier]:
        if isinstance(key, TierKey):
            return self._tiers(self._rates(key))
        return self._price(*self._rates(key))


class FallbackPriceBook:
    """The API's prices; the bundled snapshot's for a question the API cannot answer right now
    (no permission, throttled, unreachable). Each price still names its source and date, so a
    cost priced partly from the snapshot says so. A product the API does not list is not
    guessed from the snapshot: that ``PriceNotFound`` stands."""

    def __init__(self, primary: PriceBook, fallback: PriceBook) -> None:
        self.primary, self.fallback = primary, fallback
        self.region = primary.region
        self.fell_back: list[str] = []

    @overload
    def price(self, key: TierKey) -> list[PriceTier]: ...

    @overload
    def price(self, key: PriceKey) -> Price: ...

    def price(self, key: PriceKey | TierKey) -> Price | list[PriceTier]:
        try:
            return self.primary.price(key)
        except WorkflowError as exc:
            self.fell_back.append(f"{key.label()}: {type(exc).__name__}: {exc}")
            return self.fallback.price(key)


# --------------------------------------------------------------------------------- snapshot


def _entry(rate: Rate, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"usd": rate.usd, "unit": rate.unit, "begin": rate.begin, "end": rate.end}
    for name in ("usagetype", "sku", "rate_code", "description", "api_unit", "api_usd"):
        value = getattr(rate, name)
        if value is not None:
            entry[name] = value
    entry.update(extra)
    entry["source"] = "price-list-api"
    return entry


def _catalog_instance_types() -> list[str]:
    from storagebench.catalog.loader import load_catalog

    return sorted(load_catalog().instances)


def _charged(key: PriceKey | TierKey) -> bool:
    """Whether the account could be charged this at all: the EBS optimisation fee exists only
    for the types where optimisation is optional (asking for the others lists them as missing)."""
    from storagebench.catalog.loader import instance_type

    if key.product != "ec2_ebs_optimized_hour":
        return True
    spec = instance_type(str(key.dimensions[0]))
    return spec is None or not spec.ebs_optimized_by_default


def _region_prices(book: ApiPriceBook, instance_types: Sequence[str]) -> dict[str, Any]:
    prices: dict[str, Any] = {p.name: {} for p in PRODUCTS.values() if p.snapshot_key is not None}
    missing: list[dict[str, str]] = []
    for key in filter(_charged, every_key(instance_types)):
        spec = key.spec
        table = spec.snapshot_key(*key.dimensions) if spec.snapshot_key is not None else None
        try:
            found, _ = book._rates(key)
        except PriceNotFound as exc:
            label = f"{spec.name}.{table}" if table is not None else spec.name
            reason = exc.reason if isinstance(exc, NotInPriceList) else str(exc)
            missing.append({"product": key.label(), "key": label, "reason": reason})
            continue
        value = [_entry(r) for r in found] if isinstance(found, list) else _entry(found)
        if table is None:
            prices[spec.name] = value
        else:
            prices[spec.name][table] = value
    prices["missing"] = missing
    return prices


def build_snapshot(
    client: PriceListClient | Any,
    regions: Sequence[str],
    *,
    clock: Clock | None = None,
    instance_types: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Every price the snapshot holds, read from the Price List API for ``regions``.

    The result has the structure of ``prices/snapshot.json`` (``Snapshot.model_validate``
    accepts it). A product the API does not have in a region, or has in a shape this code
    cannot read, is listed under that region's ``missing`` with the reason instead of stopping
    the build; API errors (credentials, network) do stop it.
    """
    if not regions:
        raise ValueError("build_snapshot needs at least one region")
    clock = clock or SystemClock()
    started = clock.now()
    names = list(instance_types) if instance_types is not None else _catalog_instance_types()
    built: dict[str, Any] = {}
    for region in sorted(set(regions)):
        book = ApiPriceBook(client, region, cache_dir=None, clock=clock)
        prices = _region_prices(book, names)
        built[region] = {"as_of": clock.now().date().isoformat(), **prices}
    date = started.date().isoformat()
    return {
        "snapshot_version": f"{date}.api.{started.strftime('%H%M%S')}",
        "as_of": date,
        "source": f"AWS Price List Query API (pricing:GetProducts), read {iso(started)}",
        "sources": {"price-list-api": "AWS Price List Query API, pricing:GetProducts, on-demand terms"},
        "coverage": {
            "regions": sorted(built),
            "note": "regions read from the Price List API; products it could not price are under each "
            "region's 'missing'",
        },
        "regions": built,
    }
