"""Student's t distribution in the standard library: its CDF and quantile.

The agent decides when an adaptive series is precise enough (``agent.adaptive``) on the instance,
where only the standard library runs (Python 3.9); the domain's repetition statistics
(``analysis.stats``) use the same functions, so the agent's stopping rule and the report's
intervals are one computation. The t quantile inverts the regularized incomplete beta function.
"""

from __future__ import annotations

import functools
import math
import statistics

__all__ = ["regularized_incomplete_beta", "t_cdf", "t_quantile"]

_CF_DF = 1e4
"""Above this many degrees of freedom the Cornish-Fisher expansion is exact to ~1e-12."""


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Lentz's evaluation of the continued fraction for I_x(a, b) (Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    max_iter = 1000 + int(20 * math.sqrt(max(a, b)))
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the CDF of Beta(a, b) at x; the t distribution's tails are expressed in it."""
    if a <= 0 or b <= 0:
        raise ValueError("a and b must be positive")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    # The continued fraction converges fast only on one side of the mean; use symmetry on the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def _t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0, computed directly so small tails keep their precision."""
    return 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (any positive real df)."""
    if not df > 0:
        raise ValueError("df must be positive")
    tail = _t_upper_tail(abs(t), df)
    return 1.0 - tail if t >= 0 else tail


def _cornish_fisher(p: float, df: float) -> float:
    """t quantile from the normal one by the Cornish-Fisher expansion (good for large df)."""
    z = statistics.NormalDist().inv_cdf(p)
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@functools.lru_cache(maxsize=1024)  # ~50 incomplete-beta evaluations; aggregates ask the same few
def t_quantile(p: float, df: float) -> float:
    """Inverse CDF of Student's t: the t with P(T <= t) = p.

    Inverts the incomplete beta by bisection (monotone, so it cannot diverge); for very large
    df the Cornish-Fisher expansion is used, where the beta's continued fraction gets slow.
    """
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if not df > 0:
        raise ValueError("df must be positive")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    if df >= _CF_DF:
        return _cornish_fisher(p, df)
    target = 1.0 - p  # upper tail, decreasing in t
    lo, hi = 0.0, 1.0
    while _t_upper_tail(hi, df) > target:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            raise ArithmeticError("t quantile out of range")
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if _t_upper_tail(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)
