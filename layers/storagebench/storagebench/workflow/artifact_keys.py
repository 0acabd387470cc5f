"""Where a run's documents live among the artifacts (S3 on AWS, a directory locally).

runs/<run>/request.json                 the validated request (Plan)
runs/<run>/work-items.json              the work items, past 40 configs (Plan; the Distributed Map reads them)
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

exports/suite=<suite>/date=<YYYY-MM-DD>/run=<run>/<config>.jsonl   (<config>.attempt<N>.jsonl
                                        after a Spot relaunch) the config's flat rows (Collect), the
                                        Athena table's files (GET /runs/{id}/export links them):
                                        Hive-style partitions by suite and the run's UTC start day,
                                        outside ``runs/`` so the raw output's expiry leaves them
"""

from __future__ import annotations

import re
from datetime import UTC

from storagebench.core.clock import parse_iso
from storagebench.core.state import WorkItem

EXPORTS_PREFIX = "exports/"
EXPORT_LOCATION_TEMPLATE = EXPORTS_PREFIX + "suite=${suite}/date=${date}/"
"""The Athena table's ``storage.location.template``, relative to the bucket (template.yaml)."""


def request_key(run_id: str) -> str:
    return f"runs/{run_id}/request.json"


def work_items_key(run_id: str) -> str:
    """The work items of a run past the inline Map's configs (template.yaml lets the state machine read
    exactly this pattern)."""
    return f"runs/{run_id}/work-items.json"


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


def _partition_value(name: str, value: str) -> str:
    """A Hive partition value that stays one key segment (a slug, a run id, a date)."""
    if not value or any(c in value for c in "/=\\") or value.strip() != value:
        raise ValueError(
            f"export partition {name}={value!r}: a non-empty value without '/', '=' or '\\' expected"
        )
    return value


def export_prefix(suite: str, date: str) -> str:
    """One partition of the Athena table: a suite's exports of one UTC day (``YYYY-MM-DD``)."""
    return f"{EXPORTS_PREFIX}suite={_partition_value('suite', suite)}/date={_partition_value('date', date)}/"


def run_export_prefix(suite: str, started_at: str, run_id: str) -> str:
    """Where a run's exports are: one object per config (and attempt) under this prefix."""
    date = parse_iso(started_at).astimezone(UTC).strftime("%Y-%m-%d")
    return f"{export_prefix(suite, date)}run={_partition_value('run', run_id)}/"


def export_key(item: WorkItem) -> str:
    """The config's JSON Lines rows, in the partition of its run's suite and start day."""
    config = _partition_value("config", item.config_id)
    attempt = "" if item.attempt == 1 else f".attempt{item.attempt}"  # a relaunch keeps the first's rows
    return f"{run_export_prefix(item.suite, item.started_at, item.run_id)}{config}{attempt}.jsonl"


_EXPORT_FILE = re.compile(r"^(?P<config>[^/=\\]+?)(?:\.attempt(?P<attempt>[2-9]|[1-9]\d+))?\.jsonl$")


def export_file_of(name: str) -> tuple[str, int] | None:
    """The config and attempt of an export object's name under its run's prefix (``export_key``'s
    inverse: ``gp3.jsonl`` -> ("gp3", 1), ``gp3.attempt2.jsonl`` -> ("gp3", 2)); None for another name."""
    match = _EXPORT_FILE.fullmatch(name)
    if match is None:
        return None
    return match["config"], int(match["attempt"] or 1)
