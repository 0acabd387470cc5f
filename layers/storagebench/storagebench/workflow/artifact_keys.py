"""Where a run's documents live among the artifacts (S3 on AWS, a directory locally).

runs/<run>/request.json                 the validated request (Plan)
runs/<run>/<config>/plan.json           the agent's plan (StartAgent)
runs/<run>/<config>/series.json         IOPS and bandwidth series for the report (Collect)
runs/<run>/<config>/instances/<principal>/
    agent/                              the agent's raw output
    ssm/                                SSM's copy of the command output
    task-token                          the Step Functions task token the agent reports on

<principal> is the instance's identity to IAM (``aws:userid``: "<role id>:<instance id>"). The
instance role may write and read that prefix alone, so an instance can neither touch another
instance's output nor any document the workflow trusts; the workflow reads an instance's output
only from the prefix of the instance that ran the config.
runs/<run>/economics.json               costs, the comparison with the baseline, the run's cost
runs/<run>/report.html|.md|.csv         the run's report (Finalize)
"""

from __future__ import annotations

from storagebench.core.state import WorkItem


def request_key(run_id: str) -> str:
    return f"runs/{run_id}/request.json"


def config_prefix(run_id: str, config_id: str) -> str:
    return f"runs/{run_id}/{config_id}/"


def instance_prefix(item: WorkItem, principal: str) -> str:
    return instance_prefix_of(item.run_id, item.config_id, principal)


def instance_prefix_of(run_id: str, config_id: str, principal: str) -> str:
    if not principal or "/" in principal:
        raise ValueError(f"instance principal {principal!r}: '<role id>:<instance id>' expected")
    return f"{config_prefix(run_id, config_id)}instances/{principal}/"


def agent_output_prefix(item: WorkItem, principal: str) -> str:
    return f"{instance_prefix(item, principal)}agent/"


def command_output_prefix(item: WorkItem, principal: str) -> str:
    return f"{instance_prefix(item, principal)}ssm/"


def task_token_key(item: WorkItem, principal: str) -> str:
    return f"{instance_prefix(item, principal)}task-token"


def series_key(item: WorkItem) -> str:
    return f"{item.artifacts_prefix}series.json"


def economics_key(run_id: str) -> str:
    return f"runs/{run_id}/economics.json"


def report_key(run_id: str, extension: str) -> str:
    return f"runs/{run_id}/report.{extension}"
