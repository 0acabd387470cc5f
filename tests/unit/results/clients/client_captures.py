"""Real fio client/server output (tests/data/fio/clients, see tests/data/fio/README.md) for the unit tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CLIENTS_DATA = Path(__file__).resolve().parents[3] / "data" / "fio" / "clients"
# The --client strings each capture was made with (ports of the two fio --server daemons).
CLIENTS_333 = ["ip:127.0.0.1,18765", "127.0.0.1,18766"]
CLIENTS_341 = ["127.0.0.1,18775", "127.0.0.1,18776"]


def capture(name: str) -> str:
    return (CLIENTS_DATA / name).read_text()


def document(name: str) -> dict[str, Any]:
    """The JSON object of a capture (the servers' ``<host>`` text before it skipped)."""
    text = capture(name)
    decoded: dict[str, Any] = json.loads(text[text.index("\n{") + 1 :])
    return decoded


RANDRW_333 = "randrw-2clients-fio-3.33.json"  # fio 3.33 (installed here): "All clients" has no percentiles
RANDRW_341 = "randrw-2clients-fio-3.41.json"  # fio 3.41 (built from axboe/fio): it has them
