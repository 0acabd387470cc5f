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
from functools import partial
from pathlib import Path
from typing import Any, Literal, cast

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.clock import Clock, SystemClock, iso, parse_iso
from storagebench.core.errors import WorkflowError
from storagebench.prices import pricelist as pl
from storagebench.prices.models import Price, PriceBook, PriceNotFound, PriceTier
from storagebench.prices.pricelist import PriceListError, Product, Query, Rate

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

    def _instance_hour(self, instance_type: str) -> tuple[Rate, str]:
        query = pl.ec2_instance_query(self.region, instance_type)
        return self._look_up(
            query, f"EC2 {instance_type} on-demand Linux", lambda ps: pl.instance_hour(ps, instance_type)
        )

    def _ebs_storage(self, volume_type: str) -> tuple[Rate, str]:
        self._known(f"EBS {volume_type} storage", lambda: pl.check_volume_type(volume_type))
        query = pl.ebs_storage_query(self.region, volume_type)
        return self._look_up(query, f"EBS {volume_type} storage", lambda ps: pl.ebs_storage(ps, volume_type))

    def _ebs_iops(self, volume_type: str) -> tuple[list[Rate], str]:
        product = f"EBS {volume_type} provisioned IOPS"
        self._known(product, lambda: pl.check_volume_type(volume_type))
        if volume_type not in pl.EBS_IOPS_USAGE:  # no IOPS charge: no API call needed
            return [], iso(self.clock.now())
        return self._look_up(pl.ebs_iops_query(self.region), product, lambda ps: pl.ebs_iops(ps, volume_type))

    def _ebs_throughput(self, volume_type: str) -> tuple[list[Rate], str]:
        product = f"EBS {volume_type} provisioned throughput"
        self._known(product, lambda: pl.check_volume_type(volume_type))
        if volume_type != "gp3":  # no throughput charge: no API call needed
            return [], iso(self.clock.now())
        query = pl.ebs_throughput_query(self.region)
        return self._look_up(query, product, lambda ps: pl.ebs_throughput(ps, volume_type))

    def _efs_storage(self, one_zone: bool) -> tuple[Rate, str]:
        product = f"EFS {'One Zone' if one_zone else 'Standard'} storage"
        return self._look_up(pl.efs_query(self.region), product, lambda ps: pl.efs_storage(ps, one_zone))

    def _efs_provisioned_throughput(self) -> tuple[Rate, str]:
        return self._look_up(
            pl.efs_query(self.region), "EFS provisioned throughput", pl.efs_provisioned_throughput
        )

    def _efs_elastic_transfer(self, direction: Literal["read", "write"]) -> tuple[Rate, str]:
        product = f"EFS Elastic throughput {direction}s"
        return self._look_up(
            pl.efs_query(self.region), product, lambda ps: pl.efs_elastic_transfer(ps, direction)
        )

    def _fsx_lustre_storage(self, deployment_type: str, per_unit: int | None) -> tuple[Rate, str]:
        self._known(
            f"FSx for Lustre {deployment_type} storage", lambda: pl.fsx_key(deployment_type, per_unit)
        )
        product = f"FSx for Lustre {pl.fsx_key(deployment_type, per_unit)} storage"
        return self._look_up(
            pl.fsx_lustre_query(self.region),
            product,
            lambda ps: pl.fsx_lustre_storage(ps, deployment_type, per_unit),
        )

    def _stepfunctions_transition(self) -> tuple[Rate, str]:
        return self._look_up(
            pl.stepfunctions_query(self.region),
            "Step Functions standard state transition",
            pl.stepfunctions_transition,
        )

    def _lambda_gb_second(self, architecture: Literal["x86_64", "arm64"]) -> tuple[Rate, str]:
        return self._look_up(
            pl.lambda_query(self.region),
            f"Lambda {architecture} duration",
            lambda ps: pl.lambda_gb_second(ps, architecture),
        )

    def _lambda_request(self) -> tuple[Rate, str]:
        return self._look_up(pl.lambda_query(self.region), "Lambda requests", pl.lambda_request)

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

    def instance_hour(self, instance_type: str) -> Price:
        return self._price(*self._instance_hour(instance_type))

    def ebs_storage(self, volume_type: str) -> Price:
        return self._price(*self._ebs_storage(volume_type))

    def ebs_iops(self, volume_type: str) -> list[PriceTier]:
        """io1 one tier; io2 three; gp3 one from 3,000. gp2/st1/sc1/standard: ``[]`` (no IOPS charge)."""
        return self._tiers(self._ebs_iops(volume_type))

    def ebs_throughput(self, volume_type: str) -> list[PriceTier]:
        """gp3 one tier from 125 MiB/s, per MiBps-month; other volume types ``[]``."""
        return self._tiers(self._ebs_throughput(volume_type))

    def efs_storage(self, one_zone: bool) -> Price:
        return self._price(*self._efs_storage(one_zone))

    def efs_provisioned_throughput(self) -> Price:
        return self._price(*self._efs_provisioned_throughput())

    def efs_elastic_transfer(self, direction: Literal["read", "write"]) -> Price:
        return self._price(*self._efs_elastic_transfer(direction))

    def fsx_lustre_storage(self, deployment_type: str, per_unit_throughput: int | None) -> Price:
        return self._price(*self._fsx_lustre_storage(deployment_type, per_unit_throughput))

    def stepfunctions_transition(self) -> Price:
        return self._price(*self._stepfunctions_transition())

    def lambda_gb_second(self, architecture: Literal["x86_64", "arm64"]) -> Price:
        return self._price(*self._lambda_gb_second(architecture))

    def lambda_request(self) -> Price:
        return self._price(*self._lambda_request())


class FallbackPriceBook:
    """The API's prices; the bundled snapshot's for a question the API cannot answer right now
    (no permission, throttled, unreachable). Each price still names its source and date, so a
    cost priced partly from the snapshot says so. A product the API does not list is not
    guessed from the snapshot: that ``PriceNotFound`` stands."""

    def __init__(self, primary: PriceBook, fallback: PriceBook) -> None:
        self.primary, self.fallback = primary, fallback
        self.region = primary.region
        self.fell_back: list[str] = []

    def _ask(self, question: str, *args: Any) -> Any:
        try:
            return getattr(self.primary, question)(*args)
        except WorkflowError as exc:
            self.fell_back.append(f"{question}{args}: {type(exc).__name__}: {exc}")
            return getattr(self.fallback, question)(*args)

    def instance_hour(self, instance_type: str) -> Price:
        return cast(Price, self._ask("instance_hour", instance_type))

    def ebs_storage(self, volume_type: str) -> Price:
        return cast(Price, self._ask("ebs_storage", volume_type))

    def ebs_iops(self, volume_type: str) -> list[PriceTier]:
        return cast(list[PriceTier], self._ask("ebs_iops", volume_type))

    def ebs_throughput(self, volume_type: str) -> list[PriceTier]:
        return cast(list[PriceTier], self._ask("ebs_throughput", volume_type))

    def efs_storage(self, one_zone: bool) -> Price:
        return cast(Price, self._ask("efs_storage", one_zone))

    def efs_provisioned_throughput(self) -> Price:
        return cast(Price, self._ask("efs_provisioned_throughput"))

    def efs_elastic_transfer(self, direction: Literal["read", "write"]) -> Price:
        return cast(Price, self._ask("efs_elastic_transfer", direction))

    def fsx_lustre_storage(self, deployment_type: str, per_unit_throughput: int | None) -> Price:
        return cast(Price, self._ask("fsx_lustre_storage", deployment_type, per_unit_throughput))

    def stepfunctions_transition(self) -> Price:
        return cast(Price, self._ask("stepfunctions_transition"))

    def lambda_gb_second(self, architecture: Literal["x86_64", "arm64"]) -> Price:
        return cast(Price, self._ask("lambda_gb_second", architecture))

    def lambda_request(self) -> Price:
        return cast(Price, self._ask("lambda_request"))


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


def _region_prices(book: ApiPriceBook, instance_types: Sequence[str]) -> dict[str, Any]:
    prices: dict[str, Any] = {
        "ec2_instance_hour": {},
        "ebs_storage": {},
        "ebs_iops": {},
        "ebs_throughput": {},
        "efs_storage": {},
        "efs_elastic_transfer": {},
        "fsx_lustre_storage": {},
        "lambda_gb_second": {},
    }
    missing: list[dict[str, str]] = []

    def record(family: str, key: str | None, product: str, read: Callable[[], tuple[Any, str]]) -> None:
        try:
            found, _ = read()
        except PriceNotFound as exc:
            label = f"{family}.{key}" if key is not None else family
            reason = exc.reason if isinstance(exc, NotInPriceList) else str(exc)
            missing.append({"product": product, "key": label, "reason": reason})
            return
        value = [_entry(r) for r in found] if isinstance(found, list) else _entry(found)
        if key is None:
            prices[family] = value
        else:
            prices[family][key] = value

    for name in instance_types:
        record("ec2_instance_hour", name, f"EC2 {name} on-demand Linux", partial(book._instance_hour, name))
    for volume in pl.EBS_VOLUME_TYPES:
        record("ebs_storage", volume, f"EBS {volume} storage", partial(book._ebs_storage, volume))
    for volume in pl.EBS_IOPS_USAGE:
        record("ebs_iops", volume, f"EBS {volume} provisioned IOPS", partial(book._ebs_iops, volume))
    record("ebs_throughput", "gp3", "EBS gp3 provisioned throughput", lambda: book._ebs_throughput("gp3"))
    record("efs_storage", "standard", "EFS Standard storage", lambda: book._efs_storage(False))
    record("efs_storage", "one_zone", "EFS One Zone storage", lambda: book._efs_storage(True))
    record("efs_provisioned_throughput", None, "EFS provisioned throughput", book._efs_provisioned_throughput)
    directions: tuple[Literal["read", "write"], ...] = ("read", "write")
    for direction in directions:
        record(
            "efs_elastic_transfer",
            direction,
            f"EFS Elastic throughput {direction}s",
            partial(book._efs_elastic_transfer, direction),
        )
    for deployment, tiers in pl.FSX_DEPLOYMENT_TYPES.items():
        for tier in tiers or (None,):
            key = pl.fsx_key(deployment, tier)
            record(
                "fsx_lustre_storage",
                key,
                f"FSx for Lustre {key} storage",
                partial(book._fsx_lustre_storage, deployment, tier),
            )
    record(
        "stepfunctions_transition",
        None,
        "Step Functions standard state transition",
        book._stepfunctions_transition,
    )
    architectures: tuple[Literal["x86_64", "arm64"], ...] = ("x86_64", "arm64")
    for arch in architectures:
        record("lambda_gb_second", arch, f"Lambda {arch} duration", partial(book._lambda_gb_second, arch))
    record("lambda_request", None, "Lambda requests", book._lambda_request)
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
