"""The vCPUs a request needs at once, per EC2 quota (catalog ``vcpu_quotas``).

Every instance a config launches counts: its clients (``clients`` of ``instance_type``), its nodes
and its File Gateway appliances, each with the catalog's vCPUs. Clients bought on Spot count against
their group's Spot quota; nodes and appliances are always on-demand (``request.model.NodeGroup``),
and so is every machine of a config of several (``request.purchase.effective_purchase``). A
``spot-then-on-demand`` client counts against both: its first attempt is Spot, its relaunch after
an interruption on-demand, possibly while the other configs still run.

The Map runs ``concurrency`` configs at once, any of them together, so a quota's need at once is
the sum of the ``concurrency`` largest configs' needs of that quota.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field

from storagebench.catalog import instance_type, load_catalog
from storagebench.catalog.quota_models import QuotaMarket, QuotaRef, VcpuQuotaGroup
from storagebench.core.launch import Purchase
from storagebench.kinds import kind_of
from storagebench.request.model import BenchmarkRequest, Config
from storagebench.request.purchase import effective_purchase


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuotaNeed(_Frozen):
    """One quota's need: the vCPUs at once, and each config's own share."""

    code: str = Field(description="the Service Quotas code, e.g. L-1216C47A")
    name: str = Field(description="the quota's name, as Service Quotas lists it")
    group: str = Field(description="the catalog's instance-family group, e.g. Standard")
    market: QuotaMarket
    vcpus_at_once: int = Field(description="the largest `configs_at_once` configs' vCPUs together")
    configs_at_once: int = Field(description="configs counted together (the Map's concurrency at most)")
    per_config: dict[str, int] = Field(description="config id -> its vCPUs under this quota")

    def fitting(self, quota: float) -> int:
        """How many configs at once fit within ``quota`` (largest first); 0: not even the largest."""
        total, fitting = 0, 0
        for vcpus in sorted(self.per_config.values(), reverse=True):
            total += vcpus
            if total > quota:
                break
            fitting += 1
        return fitting


def _markets(purchase: Purchase) -> tuple[QuotaMarket, ...]:
    if purchase == "spot":
        return ("spot",)
    if purchase == "spot-then-on-demand":
        return ("spot", "on-demand")
    return ("on-demand",)


def _machines(
    request: BenchmarkRequest, config: Config, default_purchase: Purchase
) -> Iterator[tuple[str, str, int, tuple[QuotaMarket, ...]]]:
    """(what, instance type, how many, markets) of every instance the config launches."""
    purchase = effective_purchase(
        config.purchase, request.purchase, default_purchase, machines=config.instance_count
    )
    yield "client", config.instance_type, config.clients, _markets(purchase)
    for group in config.nodes:
        yield f"{group.role} node", group.instance_type, group.count, ("on-demand",)
    for target in config.targets:
        for _, appliance in kind_of(target).appliance_instance_types(target):
            yield f"{target.id} appliance", appliance, 1, ("on-demand",)


def vcpu_needs(
    request: BenchmarkRequest, concurrency: int, default_purchase: Purchase
) -> tuple[list[QuotaNeed], list[str]]:
    """Each quota's vCPUs at once with ``concurrency`` configs running together, and notes on what
    could not be counted (a type the catalog does not know, a group without a quota for its market)."""
    quotas = load_catalog().vcpu_quotas
    per_quota: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    refs: dict[str, tuple[QuotaRef, VcpuQuotaGroup, QuotaMarket]] = {}
    notes: list[str] = []
    for config in request.configs:
        for what, name, count, markets in _machines(request, config, default_purchase):
            spec, group = instance_type(name), quotas.group_of(name)
            if spec is None or group is None:
                why = "no vCPUs in the catalog" if spec is None else "no quota group holds its family"
                notes.append(f"{config.id}: {what} {name}: not counted against any vCPU quota ({why})")
                continue
            for market in markets:
                ref = group.quota(market)
                if ref is None:
                    notes.append(
                        f"{config.id}: {what} {name}: AWS lists no {market} quota for {group.group} "
                        "instances; not counted"
                    )
                    continue
                refs[ref.code] = (ref, group, market)
                per_quota[ref.code][config.id] += count * spec.vcpus
    needs: list[QuotaNeed] = []
    for code, configs in per_quota.items():
        ref, group, market = refs[code]
        at_once = min(concurrency, len(configs))
        largest = sorted(configs.values(), reverse=True)[:at_once]
        needs.append(
            QuotaNeed(
                code=code,
                name=ref.name,
                group=group.group,
                market=market,
                vcpus_at_once=sum(largest),
                configs_at_once=at_once,
                per_config=dict(configs),
            )
        )
    needs.sort(key=lambda n: (n.market != "on-demand", -n.vcpus_at_once, n.code))
    return needs, notes
