"""A run's export files on moto's S3, written by Collect's own writer (``workflow.exports.export_config``)
over the demo request's configs, so the API and the CLI read exactly what Collect writes."""

from __future__ import annotations

import json
from typing import Any

from tests.support.api_stack import BUCKET, EVENTS
from tests.support.records import latency, minute_of_4k
from tests.support.runs import work_item

from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.core.state import StepTiming
from storagebench.request import BenchmarkRequest, parse_request
from storagebench.results.records import ResultRecord
from storagebench.workflow.artifact_keys import config_prefix
from storagebench.workflow.exports import export_config

STARTED = "2030-01-02T03:04:05Z"


def demo_request() -> BenchmarkRequest:
    return parse_request(json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8")))


def record_demo_run(store: Any, run_id: str) -> None:
    """The run item Plan records (suite, start, configs): what the export's prefix is read from."""
    request = demo_request()
    configs = [c.id for c in request.configs]
    store.start_run(run_id, request.name, {"name": request.name}, STARTED, "2030-01-03T03:04:05Z", configs)


def _record(config_id: str, target_id: str, repetition: int, iops: float) -> ResultRecord:
    spread = {"samples": int(iops * 60), "mean_us": 800.0, "stdev_us": 120.0, "min_us": 90.0}
    percentiles = {"p50_us": 760.0, "p90_us": 1100.0, "p99_us": 2000.0, "p999_us": 4100.0}
    lat = latency(1250.5, **spread, max_us=9100.0, **percentiles)
    return minute_of_4k(iops, lat, config_id=config_id, target_id=target_id, repetition=repetition)


def write_config_export(
    s3: Any, run_id: str, config_id: str, iops: list[float], attempt: int = 1, first_repetition: int = 1
) -> str:
    """Collect's export of one config's attempt: one record per repetition (from ``first_repetition``),
    the IOPS given; returns the key written."""
    request = demo_request()
    config = request.config(config_id)
    target = config.targets[0].id
    item = work_item(
        run_id,
        config_id,
        request.name,
        request.region,
        STARTED,
        "2030-01-03T03:04:05Z",
        timing=StepTiming(ready_poll_s=1, ready_timeout_s=60, heartbeat_s=60, command_timeout_s=600),
        artifacts_prefix=config_prefix(run_id, config_id),
        attempt=attempt,
    )
    records = [
        _record(config_id, str(target), repetition, value)
        for repetition, value in enumerate(iops, start=first_repetition)
    ]
    labels = {str(target): {"storage_option": f"{config.instance_type}/{config_id}", "suite": request.name}}
    outcome = export_config(item, config, records, labels, request.region, S3Artifacts(s3, BUCKET))
    assert outcome.error is None and outcome.rows == len(iops), outcome
    return outcome.key
