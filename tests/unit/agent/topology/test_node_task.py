"""``agent.pyz task`` on a node: empty task-token parameters, its output uploaded, nobody called back."""

from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path
from typing import Any, Dict

import pytest
from machines import Cluster
from tests.support.agent_task import task_arguments
from tests.support.fake_aws import FakeAws

from storagebench.agent.task import EXIT_FAILED, EXIT_USAGE, main


def arguments(fake: FakeAws, tmp_path: Path, plan: Dict[str, Any], **changes: Any) -> argparse.Namespace:
    output_uri = "s3://artifacts/runs/r-topo/c1/nodes/server-0/agent/"
    return task_arguments(
        fake, tmp_path, plan, **{"plan_path": "/plan.json", "output_uri": output_uri, **changes}
    )


def test_a_node_runs_without_a_task_token_uploads_and_reports_to_nobody(
    fake: FakeAws, cluster: Cluster, tmp_path: Path
) -> None:
    cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    plan = cluster.plan(server, setup="echo set up", teardown=f"touch {tmp_path}/down")
    answers = []

    def primary() -> None:
        cluster.await_state(server, "ready")
        answers.append(cluster.finish(server))
        answers.append(cluster.await_state(server, "finished")["state"])

    thread = threading.Thread(target=primary)
    thread.start()
    assert main(arguments(fake, tmp_path, plan)) == 0
    thread.join(10)
    assert answers == [202, "finished"]
    assert (tmp_path / "down").exists()
    assert not [a for a in fake.actions() if a.startswith("SendTask")]
    manifest = json.loads(fake.objects["artifacts/runs/r-topo/c1/nodes/server-0/agent/manifest.json"])
    assert manifest["status"] == "ok" and manifest["topology"]["role"] == "server"
    assert "artifacts/runs/r-topo/c1/nodes/server-0/agent/topology.json" in fake.objects


def test_a_node_whose_setup_fails_exits_non_zero_after_the_primary_read_why(
    fake: FakeAws, cluster: Cluster, tmp_path: Path
) -> None:
    cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    seen = []

    def primary() -> None:
        seen.append(cluster.await_state(server, "failed"))
        cluster.finish(server)
        cluster.await_state(server, "finished")

    thread = threading.Thread(target=primary)
    thread.start()
    assert main(arguments(fake, tmp_path, cluster.plan(server, setup="exit 9"))) == EXIT_FAILED
    thread.join(10)
    assert seen[0]["error"] == "the setup hook exited with status 9 (see hooks/setup.out)"
    assert "artifacts/runs/r-topo/c1/nodes/server-0/agent/manifest.json" in fake.objects


def test_empty_token_parameters_are_refused_for_the_primary_and_a_single_machine(
    fake: FakeAws, cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    primary = cluster.machine("client", 0)
    cluster.machine("server", 0)
    primary_plan = cluster.plan(primary, targets=[{"id": "t", "kind": "directory", "path": str(tmp_path)}])
    assert main(arguments(fake, tmp_path, primary_plan)) == EXIT_USAGE
    assert (
        "empty --task-token-uri and --task-token-sha256 are only for a node of a multi-machine config "
        "(a plan whose topology.self is not client 0); this plan is the primary client's"
    ) in capsys.readouterr().err
    single = dict(primary_plan)
    del single["topology"]
    assert main(arguments(fake, tmp_path, single)) == EXIT_USAGE
    assert "this plan is a single machine's, which reports to the workflow" in capsys.readouterr().err
    assert fake.calls == [] and not (tmp_path / "out").exists()


def test_one_empty_token_parameter_is_refused(
    fake: FakeAws, cluster: Cluster, tmp_path: Path, capsys: Any
) -> None:
    cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    args = arguments(fake, tmp_path, cluster.plan(server), task_token_sha256="a" * 64)
    assert main(args) == EXIT_USAGE
    assert "both empty (a node of a multi-machine config) or both given" in capsys.readouterr().err
    assert fake.calls == []
