"""How evenly the clients delivered: min, max, median, coefficient of variation and the straggler."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from storagebench.results.records import ClientSpread


@dataclass(frozen=True)
class ClientRate:
    """One client's IOPS in one (group, direction)."""

    index: int  # 1-based position in the step's clients
    client: str  # host:port
    iops: float


def client_spread(rates: Sequence[ClientRate]) -> ClientSpread:
    """The spread of the clients' IOPS.

    The coefficient of variation uses the population standard deviation: these clients are the
    whole population measured, not a sample of some larger one. The straggler is the client
    furthest below the median (the lowest position on a tie), with its shortfall in % of the
    median; there is none when no client is below the median (all equal).
    """
    if not rates:
        raise ValueError("client_spread: no client rates")
    values = [rate.iops for rate in rates]
    mean = statistics.fmean(values)
    median = statistics.median(values)
    cv = statistics.pstdev(values) / mean * 100 if mean > 0 else 0.0
    slowest = min(rates, key=lambda rate: (rate.iops, rate.index))
    below = slowest.iops < median
    return ClientSpread(
        clients=len(rates),
        iops_min=min(values),
        iops_max=max(values),
        iops_median=median,
        iops_cv_pct=cv,
        straggler=slowest.client if below else None,
        straggler_index=slowest.index if below else None,
        straggler_shortfall_pct=(median - slowest.iops) / median * 100 if below else None,
    )
