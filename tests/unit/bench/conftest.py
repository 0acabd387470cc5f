"""The bench's helpers live as scripts in ``bench/`` (run as ``python bench/<name>.py``), importing
each other by module name; put that directory on the path as running them does."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
