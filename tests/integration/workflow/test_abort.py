"""An execution stopped mid-run cleans nothing; ``cleanup_run`` then releases everything by tag.

StopExecution ends an execution where it stands: no Cleanup state runs, so the instances and
their volumes stay. The agents notice at their next heartbeat (Step Functions answers
TaskTimedOut) and stop, tearing down what they made on the machine (here: loop devices, mounts,
cgroups). An operator (or the janitor) releases the run from its id and config ids alone:
``cleanup_run`` finds every resource by its tags.
"""

from __future__ import annotations

import boto3
import pytest

from storagebench.workflow.steps.sweep_run import cleanup_run

from .conftest import SUMMARY, Bench, command, ebs, read_json, request, transitions, wait_for

pytestmark = [pytest.mark.root, pytest.mark.slow]

CONFIGS = ("abort-ebs", "abort-dir")


def test_an_aborted_execution_leaves_everything_until_cleanup_run(bench: Bench) -> None:
    document = request(
        "wf-abort",
        [ebs("abort-ebs", "gp3"), bench.local("abort-dir")],
        workloads=[command("long-sleep", "sleep 300")],
    )
    run_id, arn = bench.start(document)
    sfn = boto3.client("stepfunctions", region_name="us-east-1")

    def stage(config_id: str) -> str | None:
        if bench.session.instance_prefix(run_id, config_id) is None:
            return None  # not launched yet: the output prefix is the instance's
        return read_json(bench.artifacts(run_id, config_id) / "progress.json").get("stage")

    wait_for(lambda: all(stage(c) == "workloads" for c in CONFIGS), "both agents to run their workload", 90)
    statuses = {c["config_id"]: c["status"] for c in bench.store(run_id)["configs"]}
    assert statuses == dict.fromkeys(CONFIGS, "RUNNING")

    sfn.stop_execution(executionArn=arn, error="Aborted", cause="stopped by the abort test")
    status = wait_for(
        lambda: (s := sfn.describe_execution(executionArn=arn)["status"]) != "RUNNING" and s,
        "the stopped execution to end",
        timeout_s=60,
    )
    # AWS says ABORTED; moto 5.2.5 ends a stopped execution FAILED (States.Runtime from its own worker).
    assert status in ("ABORTED", "FAILED")
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    per_config, run_level = transitions(history)
    entered = {name for t in (run_level, *per_config.values()) for name in t.states}
    assert not entered & {"Cleanup", "CleanupFailed", "Finalize", "SweepRun"}, entered

    # Each agent hears at its next heartbeat that nobody waits (TaskTimedOut) and stops, tearing
    # down its loop devices, mounts and cgroups; the instances stay until someone terminates them.
    # (abort-dir holds nothing on the machine: its agent's end is read from the commands).
    def only_instances() -> list[str]:
        if {(run_id, c) for c in CONFIGS} & set(bench.services.agents.running):
            return []  # an agent still runs
        left = bench.session.leaks(run_id)
        return left if left and all(item.startswith("instance ") for item in left) else []

    left = wait_for(only_instances, "the agents to stop once nobody waits for them", timeout_s=30)
    kinds = sorted({item.split()[0] for item in left})
    assert sum(item.startswith("instance ") for item in left) == len(CONFIGS)
    SUMMARY["measured"]["abort: left by the stopped execution"] = (
        f"{len(left)} resources ({', '.join(kinds)})"
    )

    reports = cleanup_run(run_id, list(CONFIGS), bench.services)
    for config_id, report in reports.items():
        assert report.leftovers == [], (config_id, report)
        assert any(item.startswith("i-") for item in report.deleted), (config_id, report)
    assert not {(run_id, c) for c in CONFIGS} & set(bench.services.agents.running)
    after = bench.settled_leaks(run_id)
    SUMMARY["measured"]["abort: left after cleanup_run"] = len(after)
    assert after == []
