"""Numbers as people read them: three significant figures, thousands separated, never "100.0"."""

from __future__ import annotations

import math

import pytest

from storagebench.core.numbers import num


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12_345.6, "12,346"),
        (999.4, "999"),
        (999.6, "1,000"),
        (123.4, "123"),
        (99.967, "100"),  # rounds across a power of ten: still three figures
        (9.996, "10.0"),
        (0.99951, "1.00"),
        (12.34, "12.3"),
        (0.012345, "0.0123"),
        (-4.567, "-4.57"),
        (0, "0"),
        (None, "-"),
        (math.nan, "-"),
        (math.inf, "-"),
    ],
)
def test_three_significant_figures(value: float | None, text: str) -> None:
    assert num(value) == text
