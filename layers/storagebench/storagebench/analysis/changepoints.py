"""Change points in a metric's history: E-Divisive means (Matteson & James, 2014).

MongoDB's performance CI finds regressions this way (``signal_processing_algorithms.
energy_statistics.e_divisive`` on PyPI, ``signal-processing-algorithms``); this is the same
algorithm in pure Python (it runs in Lambda, without numpy), checked against that implementation
by ``tests/unit/analysis/test_changepoints_oracle.py``:

1. Every split ``tau`` of a window ``[a, b)`` into X = ``[a, tau)`` and Y = ``[tau, b)`` is scored
   by the energy test statistic ``t = n m / (n + m) * (2 E|X - Y| - E|X - X'| - E|Y - Y'|)``
   (V-statistics: the zero self-distances are in the within-sample means, as in the reference).
2. The best split over all windows between the change points found so far is a candidate.
3. A permutation test decides: each window's values are shuffled ``permutations`` times and the
   best statistic of the shuffled windows compared with the candidate's; the candidate is a change
   point when ``(times the shuffles did as well) / (permutations + 1) <= pvalue``.
4. Repeat with the windows the new change point splits, until a candidate fails the test.

Differences from the reference, none of which changes which points are found:

- the shuffles draw from ``random.Random(seed)``, so a history gives the same answer every time
  (the reference draws from numpy's global generator);
- a window's statistics are computed in O(w log w) from sorted ranks (Fenwick trees) instead of
  from the O(w^2) distance matrix, so a 200-run history with 100 permutations takes well under a
  second;
- a shuffle that reproduces the candidate's split (likely in a short window: 2 of the 15 splits
  of six values into four and two are the same split) counts as doing as well, although its
  statistic, summed in another order, may round a hair lower: the reference's sums happen to
  round the same way, and the test means "at least as extreme";
- the permutation test stops once enough shuffles did as well as the candidate for it to fail
  (the decision is the same; the search ends there, so no later draw is affected).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

__all__ = [
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_PVALUE",
    "DEFAULT_SEED",
    "STRICT_PERMUTATIONS",
    "STRICT_PVALUE",
    "ChangePoint",
    "e_divisive",
    "t_statistics",
]

DEFAULT_PVALUE = 0.05
DEFAULT_PERMUTATIONS = 100
DEFAULT_SEED = 1234
"""The reference's defaults (p <= 0.05 over 100 permutations); any fixed seed makes it repeatable."""
STRICT_PVALUE = 0.01
STRICT_PERMUTATIONS = 199
"""What the report uses: each test at 0.05 flags ~5 % of flat histories (and the search tests again
after every point it finds), so a report of a dozen metrics would show a false change most nights;
at 0.01 over 199 permutations ~1 % (tests/unit/analysis/test_changepoints.py)."""


@dataclass(frozen=True)
class ChangePoint:
    """A significant change: the series differs in distribution from ``index`` on.

    ``before`` and ``after`` are the means of the segments either side, each bounded by the
    neighbouring change points (or the series' ends).
    """

    index: int
    t_statistic: float
    p_value: float
    before: float
    after: float
    order: int
    """1 for the most significant change (found first), 2 for the next..."""


_TIE = 1e-9
"""Relative difference under which two statistics are the same split's, rounded differently."""


class _Fenwick:
    """Counts and sums of the values inserted so far, by rank: both prefix queries in O(log n)."""

    def __init__(self, size: int) -> None:
        self.count = [0] * (size + 1)
        self.total = [0.0] * (size + 1)

    def add(self, rank: int, value: float) -> None:
        i = rank + 1
        while i < len(self.count):
            self.count[i] += 1
            self.total[i] += value
            i += i & -i

    def below(self, rank: int) -> tuple[int, float]:
        """(count, sum) of the inserted values of rank < ``rank``."""
        n, s = 0, 0.0
        i = rank
        while i > 0:
            n += self.count[i]
            s += self.total[i]
            i -= i & -i
        return n, s


def _t(cross: float, x_term: float, y_term: float, n: int, m: int) -> float:
    """The test statistic from its three distance sums (the reference's ``calculate_t``)."""
    cross_mean = cross * 2.0 / (n * m) if n > 0 and m > 0 else 0.0
    x_mean = x_term / (n * n) if n > 0 else 0.0
    y_mean = y_term / (m * m) if m > 0 else 0.0
    return n * m / (n + m) * (cross_mean - x_mean - y_mean)


def _distance_sums(values: Sequence[float]) -> list[float]:
    """sum_j |v_i - v_j| for every i, from the sorted values and their prefix sums."""
    order = sorted(range(len(values)), key=values.__getitem__)
    sums = [0.0] * len(values)
    prefix = 0.0
    total = math.fsum(values)
    for position, i in enumerate(order):
        v = values[i]
        below = position * v - prefix
        above = (total - prefix - v) - (len(values) - position - 1) * v
        sums[i] = below + above
        prefix += v
    return sums


def _statistics(values: Sequence[float], ranks: Sequence[int], distances: Sequence[float]) -> list[float]:
    """The test statistic of every split of one window, ``ranks`` and ``distances`` aligned to
    ``values`` (the reference's ``_calculate_t_stats``, in O(w log w))."""
    size = len(values)
    tree = _Fenwick(max(ranks, default=0) + 1)
    cross = 0.0  # sum |x - y| over x in X, y in Y
    x_term = 0.0  # sum |x - x'| over pairs i < j in X
    y_term = math.fsum(distances) / 2.0  # the same within Y (all of the window at first)
    inserted_sum = 0.0
    stats: list[float] = []
    for tau in range(size):  # tau values are in X (inserted) before this one
        stats.append(_t(cross, 2.0 * x_term, 2.0 * y_term, tau, size - tau))
        v, rank = values[tau], ranks[tau]
        n_below, s_below = tree.below(rank)
        to_earlier = (n_below * v - s_below) + ((inserted_sum - s_below) - (tau - n_below) * v)
        to_later = distances[tau] - to_earlier
        cross += to_later - to_earlier
        x_term += to_earlier
        y_term -= to_later
        tree.add(rank, v)
        inserted_sum += v
    return stats


def _ranks(values: Sequence[float]) -> list[int]:
    distinct = sorted(set(values))
    return [bisect.bisect_left(distinct, v) for v in values]


def t_statistics(series: Sequence[float]) -> list[float]:
    """The test statistic of every split ``tau`` of the whole series (0 at ``tau = 0``)."""
    values = _checked(series)
    return _statistics(values, _ranks(values), _distance_sums(values))


def _checked(series: Sequence[float]) -> list[float]:
    values: list[float] = []
    for i, value in enumerate(series):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"series[{i}] is {value!r}: every value must be a finite number")
        values.append(float(value))
    return values


class _Window:
    """One stretch between change points: its values with what every shuffle reuses."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = list(values)
        self.ranks = _ranks(self.values)
        self.distances = _distance_sums(self.values)

    def best(self) -> tuple[int, float]:
        """(split, statistic) of the best split, the first of equals as numpy's argmax."""
        stats = _statistics(self.values, self.ranks, self.distances)
        best = max(range(len(stats)), key=stats.__getitem__)
        return best, stats[best]

    def best_shuffled(self, rng: random.Random) -> float:
        order = list(range(len(self.values)))
        rng.shuffle(order)
        stats = _statistics(
            [self.values[i] for i in order],
            [self.ranks[i] for i in order],
            [self.distances[i] for i in order],
        )
        return max(stats)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def e_divisive(
    series: Sequence[float],
    *,
    pvalue: float = DEFAULT_PVALUE,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> list[ChangePoint]:
    """The significant change points of ``series``, by index (module doc)."""
    if not 0.0 < pvalue < 1.0:
        raise ValueError(f"pvalue is {pvalue!r}: it must be between 0 and 1 (exclusive)")
    if isinstance(permutations, bool) or not isinstance(permutations, int) or permutations < 1:
        raise ValueError(f"permutations is {permutations!r}: it must be a whole number >= 1")
    values = _checked(series)
    if len(values) < 2:
        return []  # one value cannot change
    rng = random.Random(seed)
    found: list[tuple[int, float, float]] = []  # (index, t, p) in the order found
    best_of: dict[tuple[int, int], tuple[int, float]] = {}
    # shuffles that may do as well before the candidate fails: floor(pvalue * (permutations + 1))
    allowed = math.floor(pvalue * (permutations + 1) + 1e-9)
    while True:
        bounds = list(pairwise([0, *sorted(index for index, _, _ in found), len(values)]))
        windows = [_Window(values[a:b]) for a, b in bounds]
        candidates: list[tuple[int, float]] = []
        for (a, b), window in zip(bounds, windows, strict=True):
            if (a, b) not in best_of:
                split, stat = window.best()
                best_of[(a, b)] = (a + split, stat)
            candidates.append(best_of[(a, b)])
        index, stat = max(candidates, key=lambda c: c[1])
        if index == 0:  # no split beats the whole (a flat or empty series)
            break
        as_good = 0
        # a shuffle that puts the same values either side scores the same statistic, summed in
        # another order: "as good" allows for that rounding, as the reference's sums happen to
        tie = stat - _TIE * abs(stat)
        for _ in range(permutations):
            if max(window.best_shuffled(rng) for window in windows) >= tie:
                as_good += 1
                if as_good > allowed:
                    break
        p = as_good / (permutations + 1)
        if p > pvalue:
            break
        found.append((index, stat, p))
    edges = [0, *sorted(index for index, _, _ in found), len(values)]
    points: list[ChangePoint] = []
    for order, (index, stat, p) in enumerate(found, start=1):
        position = edges.index(index)
        start, end = edges[position - 1], edges[position + 1]
        points.append(
            ChangePoint(
                index=index,
                t_statistic=stat,
                p_value=p,
                before=_mean(values[start:index]),
                after=_mean(values[index:end]),
                order=order,
            )
        )
    return sorted(points, key=lambda point: point.index)
