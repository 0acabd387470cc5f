"""Where a run's documents live among the artifacts (S3 on AWS, a directory locally).

runs/<run>/request.json                 the validated request (Plan)
runs/<run>/<config>/plan.json           the agent's plan (StartAgent); agent/ holds its output
runs/<run>/<config>/series.json         IOPS and bandwidth series for the report (Collect)
runs/<run>/economics.json               costs, the comparison with the baseline, the run's cost
runs/<run>/report.html|.md|.csv         the run's report (Finalize)
"""

from __future__ import annotations

from storagebench.core.state import WorkItem


def request_key(run_id: str) -> str:
    return f"runs/{run_id}/request.json"


def series_key(item: WorkItem) -> str:
    return f"{item.artifacts_prefix}series.json"


def economics_key(run_id: str) -> str:
    return f"runs/{run_id}/economics.json"


def report_key(run_id: str, extension: str) -> str:
    return f"runs/{run_id}/report.{extension}"
