"""Spot on this machine: a config bought on Spot launches on moto's Spot market (a local instance runs
the agent as for on-demand), its state records the market and zone EC2 reports, and the run is priced
at the Spot price history of that zone (moto's synthetic price), the on-demand config at on-demand."""

from __future__ import annotations

import pytest

from storagebench.workflow.artifact_keys import economics_key

from .conftest import Bench, request

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_a_spot_config_runs_on_spot_and_is_priced_at_what_it_paid(bench: Bench) -> None:
    spot = {**bench.local("spot-dir"), "purchase": "spot"}
    on_demand = bench.local("od-dir")  # inherits the request's purchase
    document = request("wf-spot", [spot, on_demand]) | {"purchase": "on-demand"}
    result = bench.run(document)
    causes = [e["cause"] for c in result.configs.values() for e in c.get("errors", [])]
    assert result.status == "SUCCEEDED", causes
    assert {c["status"] for c in result.configs.values()} == {"succeeded"}
    assert all(c["records"] > 0 and c["leftovers"] == [] for c in result.configs.values())

    states = {c["config_id"]: c["state"] for c in bench.store(result.run_id)["configs"]}
    resources = {cid: states[cid]["resources"] for cid in ("spot-dir", "od-dir")}
    assert resources["spot-dir"]["market"] == "spot"
    assert resources["od-dir"]["market"] == "on-demand"
    assert all(r["availability_zone"] for r in resources.values())
    ec2 = bench.session.services.compute.ec2  # type: ignore[union-attr]
    instance = ec2.describe_instances(InstanceIds=[resources["spot-dir"]["instance_id"]])["Reservations"][0][
        "Instances"
    ][0]
    assert instance["InstanceLifecycle"] == "spot"

    economics = bench.services.artifacts.get_json(economics_key(result.run_id))
    lines = {c["config_id"]: c for c in economics["run_cost"]["components"] if c["name"] == "instance"}
    assert lines["spot-dir"]["source"] == "spot-price-history"
    assert "Spot in us-east-1" in lines["spot-dir"]["detail"]
    assert lines["od-dir"]["source"] != "spot-price-history" and "on-demand" in lines["od-dir"]["detail"]
    assert lines["spot-dir"]["price_usd"] < lines["od-dir"]["price_usd"]
    assert not any("ran on Spot but" in n for n in economics["notes"])
