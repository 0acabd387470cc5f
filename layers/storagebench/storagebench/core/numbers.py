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
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, 2 - magnitude)
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > magnitude:
        decimals = max(0, decimals - 1)  # 99.97 rounds to 100: three figures, not "100.0"
    text = f"{round(value, decimals):.{decimals}f}"
    if abs(float(text)) >= 1000:  # 999.96 rounds up to 1000
        return f"{value:,.0f}"
    return text
