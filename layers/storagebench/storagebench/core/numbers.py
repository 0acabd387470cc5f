"""Numbers as people read them, one rule everywhere (report, kinds' descriptions, CLI).

From 1,000 up, whole numbers with thousands separators (12,345 IOPS); below, three significant
digits (123, 12.3, 1.23, 0.0123).
"""

from __future__ import annotations

import math

DASH = "-"


def num(value: float | None) -> str:
    """12,345 / 123 / 12.3 / 0.0123; '-' for None and non-finite values."""
    if value is None or not math.isfinite(value):
        return DASH
    if value == 0:
        return "0"
    if abs(value) >= 999.5:
        return f"{value:,.0f}"
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):.{decimals}f}"
    if abs(float(text)) >= 1000:  # 999.96 rounds up to 1000
        return f"{value:,.0f}"
    return text
