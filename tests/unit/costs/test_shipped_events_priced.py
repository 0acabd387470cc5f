"""Every shipped request (``events/*.json`` and the request bodies of ``events/api/``) priced
completely offline, as ``storagebench cost`` prints it with the bundled snapshot: no config
"incomplete" (a price missing) or "not priced" (a target billed nowhere), no line at $0, and a delta
to the baseline for every other config."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from test_cost_cli import make_app
from typer.testing import CliRunner

from storagebench.request import RequestError, parse_request

EVENTS = Path(__file__).resolve().parents[3] / "events"


def _api_bodies() -> dict[str, str]:
    """The request bodies of the API's sample events (POST /runs), by file name."""
    bodies: dict[str, str] = {}
    for path in sorted((EVENTS / "api").glob("*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        body = event.get("body")
        if event.get("rawPath") != "/runs" or not body:
            continue
        bodies[path.name] = base64.b64decode(body).decode() if event.get("isBase64Encoded") else body
    return bodies


def _requests() -> list[tuple[str, str]]:
    found = [(f"events/{p.name}", p.read_text(encoding="utf-8")) for p in sorted(EVENTS.glob("*.json"))]
    valid_bodies: list[tuple[str, str]] = []
    for name, body in _api_bodies().items():
        try:
            parse_request(json.loads(body))
        except RequestError:
            assert "invalid" in name, f"events/api/{name}: its request body does not validate"
            continue
        valid_bodies.append((f"events/api/{name}", body))
    return found + valid_bodies


REQUESTS = _requests()


def test_every_shipped_request_is_found() -> None:
    names = [name for name, _ in REQUESTS]
    assert "events/report-card.json" in names and "events/genomics-file-systems.json" in names
    assert "events/api/post-runs-dry-run.json" in names
    assert len(names) == len(list(EVENTS.glob("*.json"))) + 1


def _cost(tmp_path: Path, text: str, *args: str) -> Any:
    suite = tmp_path / "request.json"
    suite.write_text(text, encoding="utf-8")
    return CliRunner().invoke(make_app(), ["cost", "--suite", str(suite), *args])


def problems_of(document: dict[str, Any], table: str) -> list[str]:
    """What keeps a priced request from being complete, each named."""
    found: list[str] = []
    for entry in document["configs"]:
        where = entry["id"]
        if not entry["complete"]:
            found.append(f"{where}: incomplete: {entry['missing_prices']}")
        found += [f"{where}: not priced: {line}" for line in entry["unpriced"]]
        found += [f"{where}: $0 line: {c['detail']}" for c in entry["components"] if c["monthly_usd"] <= 0]
        if entry["id"] != document["baseline"] and entry["delta_monthly_pct"] is None:
            found.append(f"{where}: no delta to the baseline: {entry['delta_monthly_reason']}")
    for marker in ("(incomplete)", "not priced:", "missing price:", "no delta"):
        if marker in table:
            found.append(f"the table prints {marker!r}")
    return found


@pytest.mark.parametrize(("name", "text"), REQUESTS, ids=[name for name, _ in REQUESTS])
def test_a_shipped_request_prices_completely_offline(name: str, text: str, tmp_path: Path) -> None:
    priced = _cost(tmp_path, text, "--json")
    assert priced.exit_code == 0, f"{name}: {priced.output}"
    table = _cost(tmp_path, text)
    assert table.exit_code == 0, f"{name}: {table.output}"
    assert problems_of(json.loads(priced.stdout), table.output) == [], name


def test_the_check_fails_on_each_kind_of_gap(tmp_path: Path) -> None:
    # A local path backed by nothing the config bills, and a type whose EBS-optimized fee is
    # unknown to the snapshot, are each reported: the check above can fail.
    document = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    document["configs"][0]["targets"].append({"id": "scratch", "kind": "local", "path": "/mnt/x"})
    priced = _cost(tmp_path, json.dumps(document), "--json")
    table = _cost(tmp_path, json.dumps(document))
    found = problems_of(json.loads(priced.stdout), table.output)
    assert any("not priced" in line and "/mnt/x" in line for line in found)
    assert "the table prints 'not priced:'" in found
    empty: dict[str, Any] = {
        "baseline": "a",
        "configs": [
            {"id": "a", "complete": True, "unpriced": [], "components": [], "delta_monthly_pct": None},
            {
                "id": "b",
                "complete": False,
                "missing_prices": ["x"],
                "unpriced": [],
                "components": [{"detail": "free", "monthly_usd": 0.0}],
                "delta_monthly_pct": None,
                "delta_monthly_reason": "why",
            },
        ],
    }
    assert problems_of(empty, "") == [
        "b: incomplete: ['x']",
        "b: $0 line: free",
        "b: no delta to the baseline: why",
    ]
