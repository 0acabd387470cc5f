"""Cleanup with the run's request lost: the note that an unrecorded gateway could not be looked up
by name is given only when one can exist (a gateway recorded, or an appliance of the config still
running: activation needs one); a config that never launched an appliance has nothing to say, so
its cleanup is not marked with a leftover (local mode now serves gateways: it was, for every config)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from storagebench.core.state import Resources
from storagebench.workflow.gateways import release_recorded_gateways


class Appliances:
    def __init__(self, alive: list[str]) -> None:
        self.alive = alive
        self.asked: list[tuple[str, str]] = []

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        self.asked.append((run_id, config_id))
        return self.alive


def setup(alive: list[str]) -> Any:
    return SimpleNamespace(ports=SimpleNamespace(appliances=Appliances(alive)))


def test_no_appliance_and_no_gateway_recorded_leaves_nothing_to_say() -> None:
    services = setup([])
    report = release_recorded_gateways("run-1", "gp3", Resources(), services, "request.json: missing")
    assert report.leftovers == [] and report.deleted == []
    assert services.ports.appliances.asked == [("run-1", "gp3")]


def test_a_running_appliance_means_an_unrecorded_gateway_may_exist() -> None:
    alive = ["appliance i-0abc (running)"]
    report = release_recorded_gateways("run-1", "gw", Resources(), setup(alive), "request.json: missing")
    (note,) = report.leftovers
    assert (
        note.startswith("the run's request could not be read (request.json: missing)") and "janitor" in note
    )
