"""Spot in the run's cost (the price paid) and in estimates (the bundled Spot price)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from reference_book import ReferenceBook

from storagebench.core.errors import ProvisioningError
from storagebench.core.guardrails import Guardrails
from storagebench.costs.economics import spot_charge
from storagebench.costs.run_cost import ConfigUsage, run_cost
from storagebench.planning.preview import preview_request
from storagebench.prices.spot import LINUX, SpotPricePoint, paid
from storagebench.request import parse_request
from storagebench.store.models import StoredConfig

REPO = Path(__file__).resolve().parents[3]
LAUNCHED = "2026-11-01T10:00:00Z"
UPDATED = "2026-11-01T12:00:00Z"


class History:
    """A ``SpotPriceHistory`` over fixed points; records what it was asked."""

    def __init__(self, points: list[SpotPricePoint] | Exception) -> None:
        self.points = points
        self.asked: list[tuple[str, str, datetime, datetime, str]] = []

    def history(
        self, instance_type: str, zone: str, start: datetime, end: datetime, product: str = LINUX
    ) -> list[SpotPricePoint]:
        self.asked.append((instance_type, zone, start, end, product))
        if isinstance(self.points, Exception):
            raise self.points
        return self.points


def stored(market: str | None, zone: str | None = "us-east-1b", **state_fields: Any) -> StoredConfig:
    state: dict[str, Any] = {
        "item": {
            "run_id": "r",
            "config_id": "gp3",
            "suite": "s",
            "region": "us-east-1",
            "started_at": LAUNCHED,
            "expires_at": "2026-11-02T10:00:00Z",
            "timing": {
                "ready_poll_s": 15,
                "ready_timeout_s": 600,
                "heartbeat_s": 300,
                "command_timeout_s": 3600,
            },
            "artifacts_prefix": "runs/r/gp3/",
        },
        "resources": {
            "instance_id": "i-1",
            "launched_at": LAUNCHED,
            "market": market,
            "availability_zone": zone,
        },
    }
    state.update(state_fields)
    return StoredConfig.decode({"config_id": "gp3", "updated_at": UPDATED, "state": state})


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_spot_config_is_priced_from_its_zones_history_over_its_life() -> None:
    history = History(
        [
            SpotPricePoint(moment("2026-11-01T09:00:00Z"), 0.20),
            SpotPricePoint(moment("2026-11-01T11:00:00Z"), 0.30),
        ]
    )
    notes: list[str] = []
    charge = spot_charge(stored("spot"), "c5.4xlarge", UPDATED, history, notes)
    assert charge is not None and notes == []
    assert history.asked == [("c5.4xlarge", "us-east-1b", moment(LAUNCHED), moment(UPDATED), LINUX)]
    assert charge.usd == pytest.approx(0.20 + 0.30) and charge.average_usd_per_hour == pytest.approx(0.25)


def test_on_demand_configs_have_no_spot_charge() -> None:
    notes: list[str] = []
    assert spot_charge(stored("on-demand"), "c5.4xlarge", UPDATED, History([]), notes) is None
    assert spot_charge(stored(None), "c5.4xlarge", UPDATED, History([]), notes) is None
    assert notes == []


@pytest.mark.parametrize(
    ("config", "history", "why"),
    [
        (stored("spot"), None, "no Spot price history here"),
        (stored("spot", zone=None), History([]), "its zone was not recorded"),
        (stored("spot"), History([]), "no Spot price of c5.4xlarge in us-east-1b is known"),
        (stored("spot"), History(ProvisioningError("AccessDenied")), "AccessDenied"),
    ],
    ids=["no-port", "no-zone", "no-price-at-launch", "api-error"],
)
def test_a_spot_config_that_cannot_be_priced_is_priced_on_demand_and_says_why(
    config: StoredConfig, history: History | None, why: str
) -> None:
    notes: list[str] = []
    assert spot_charge(config, "c5.4xlarge", UPDATED, history, notes) is None
    [note] = notes
    assert note.startswith("config gp3 ran on Spot but ") and why in note
    assert note.endswith("priced on-demand, the upper bound")


def test_the_run_cost_prices_a_spot_instance_at_what_it_paid() -> None:
    start, end = moment(LAUNCHED), moment(UPDATED)
    charge = paid(
        [
            SpotPricePoint(moment("2026-11-01T09:00:00Z"), 0.20),
            SpotPricePoint(moment("2026-11-01T11:00:00Z"), 0.30),
        ],
        "c5.4xlarge",
        "us-east-1b",
        start,
        end,
    )
    book = ReferenceBook()
    spot = run_cost([ConfigUsage("gp3", "c5.4xlarge", 7200.0, spot=charge)], book)
    on_demand = run_cost([ConfigUsage("gp3", "c5.4xlarge", 7200.0)], book)
    [line] = [c for c in spot.components if c.name == "instance"]
    assert line.usd == pytest.approx(0.25 * 2) and line.source == "spot-price-history"
    assert line.price_usd == pytest.approx(0.25) and line.as_of == "2026-11-01"
    assert "Spot in us-east-1b, time-weighted over 2 price(s)" in line.detail
    [od_line] = [c for c in on_demand.components if c.name == "instance"]
    assert od_line.usd == pytest.approx(0.68 * 2) and "on-demand" in od_line.detail
    short = paid([SpotPricePoint(moment("2026-11-01T09:00:00Z"), 0.36)], "c5.4xlarge", "z", start, start)
    [minimum] = [
        c
        for c in run_cost([ConfigUsage("gp3", "c5.4xlarge", 10.0, spot=short)], book).components
        if c.name == "instance"
    ]
    assert minimum.quantity == 60 and minimum.usd == pytest.approx(0.36 / 60)  # the 60 s minimum holds


# ------------------------------------------------------------------------ estimates


def demo(**changes: Any) -> Any:
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    document.update(changes)
    return parse_request(document)


def test_a_spot_request_is_estimated_at_the_spot_price_and_bounded_on_demand() -> None:
    timing = {"max_run_hours": 2, "command_timeout_h": 1}
    on_demand = preview_request(demo(timing=timing), Guardrails())
    spot = preview_request(demo(timing=timing, purchase="spot-then-on-demand"), Guardrails())
    for od, sp in zip(on_demand.configs, spot.configs, strict=True):
        assert (od.purchase, sp.purchase) == ("on-demand", "spot-then-on-demand")
        assert (od.instance_usd_per_hour, sp.instance_usd_per_hour) == (None, 0.2631)  # c5.4xlarge
        assert od.run_usd - sp.run_usd == pytest.approx((0.68 - 0.2631) * od.expected_hours, abs=1e-5)
        assert sp.upper_bound_usd == od.upper_bound_usd  # the upper bound stays on-demand
        assert sp.monthly_usd == od.monthly_usd
    assert spot.estimate.total_usd < on_demand.estimate.total_usd
    assert any("bundled Spot price (as of 2026-08-06" in n for n in spot.estimate.notes)
    assert not any("Spot" in n for n in on_demand.estimate.notes)


def test_a_config_and_the_stack_default_choose_spot_too() -> None:
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    document["configs"][1]["purchase"] = "spot"
    preview = preview_request(parse_request(document), Guardrails())
    assert [c.purchase for c in preview.configs] == ["on-demand", "spot", "on-demand"]
    by_stack = preview_request(demo(), Guardrails(default_purchase="spot"))
    assert {c.purchase for c in by_stack.configs} == {"spot"}
    assert {c.instance_usd_per_hour for c in by_stack.configs} == {0.2631}


def test_an_unknown_spot_price_is_estimated_on_demand_and_said_so() -> None:
    document = json.loads((REPO / "events" / "report-card.json").read_text(encoding="utf-8"))
    document["purchase"] = "spot"
    on_demand = preview_request(parse_request({**document, "purchase": "on-demand"}), Guardrails())
    spot = preview_request(parse_request(document), Guardrails())
    assert [c.run_usd for c in spot.configs] == [c.run_usd for c in on_demand.configs]
    notes = [n for n in spot.estimate.notes if "Spot price unknown" in n]
    assert len(notes) == len(spot.configs)
    assert all("r3.4xlarge" in n and n.endswith("on-demand used as the upper bound") for n in notes)


def test_the_cost_command_expects_spot_configs_at_the_spot_price(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import typer
    from typer.testing import CliRunner

    from storagebench.cli import cost_cmd

    monkeypatch.setattr(cost_cmd, "price_book", ReferenceBook)
    monkeypatch.delenv("DEFAULT_PURCHASE", raising=False)
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """test root"""

    cost_cmd.register(app)
    document = json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    documents = {}
    for purchase in ("on-demand", "spot"):
        path = tmp_path / f"{purchase}.json"
        path.write_text(json.dumps({**document, "purchase": purchase}), encoding="utf-8")
        result = CliRunner().invoke(app, ["cost", "--json", "--expected", "--suite", str(path)])
        assert result.exit_code == 0, result.output
        documents[purchase] = json.loads(result.stdout)["expected"]
    for config_id, spot in documents["spot"]["configs"].items():
        od = documents["on-demand"]["configs"][config_id]
        assert (od["purchase"], spot["purchase"]) == ("on-demand", "spot")
        assert (od["spot_usd_per_hour"], spot["spot_usd_per_hour"]) == (None, 0.2631)
        assert od["usd"] - spot["usd"] == pytest.approx((0.68 - 0.2631) * od["hours"], abs=2e-6)
    assert any("bundled Spot price" in n for n in documents["spot"]["spot_notes"])
    assert documents["on-demand"]["spot_notes"] == []


def test_an_attempt_ended_by_an_interruption_is_priced_from_its_launch_to_the_interruption() -> None:
    from storagebench.costs.economics import earlier_attempts

    interruption = {
        "attempt": 1,
        "instance_id": "i-0",
        "market": "spot",
        "detected_by": "notice",
        "stage": "workloads",
        "action_time": "2026-11-01T09:30:00Z",
        "noticed_at": "2026-11-01T09:28:00Z",
        "launched_at": "2026-11-01T09:00:00Z",
        "availability_zone": "us-east-1a",
    }
    relaunched = stored("on-demand", zone="us-east-1c", interruptions=[interruption])  # attempt 2: on-demand
    assert relaunched.state is not None
    relaunched.state.item.attempt = 2
    request = parse_request(
        json.loads((REPO / "events" / "local-demo.json").read_text(encoding="utf-8"))
    ).configs[0]
    history = History([SpotPricePoint(moment("2026-11-01T08:00:00Z"), 0.30)])
    notes: list[str] = []
    [usage] = earlier_attempts(request, relaunched, history, notes)
    assert notes == []
    assert usage.instance_seconds == 1800  # launch to the time EC2 said it would act
    assert (
        usage.spot is not None and usage.spot.zone == "us-east-1a" and usage.spot.usd == pytest.approx(0.15)
    )
    assert history.asked == [
        ("c5.4xlarge", "us-east-1a", moment("2026-11-01T09:00:00Z"), moment("2026-11-01T09:30:00Z"), LINUX)
    ]
    # the state's own attempt is not an earlier one
    assert earlier_attempts(request, stored("spot"), history, notes) == []
