"""The API's response bodies (their JSON Schemas are the OpenAPI document's responses)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.analysis.stats import Aggregate
from storagebench.api.ports import Execution
from storagebench.core.series import SeriesOutcome, SteadyStateOutcome
from storagebench.planning.preview import RunPreview
from storagebench.report.model import SlaLimit
from storagebench.results.records import Direction, HistogramBucket, ResultRecord


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunCreated(_Body):
    run_id: str
    execution_arn: str
    status: Literal["STARTED"] = "STARTED"
    location: str = Field(description="where to follow the run: GET this path")
    replayed: bool = Field(
        default=False,
        description="true: the Idempotency-Key had started this run already (nothing new started)",
    )
    max_concurrency: int
    estimated_cost_usd: float = Field(description="the preview's estimate (see dry_run for how)")


class DryRun(_Body):
    dry_run: Literal[True] = True
    preview: RunPreview


class RunList(_Body):
    suite: str | None = Field(description="null: the runs in progress")
    runs: list[dict[str, Any]] = Field(description="run items, newest first (the request left out)")
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null at the end")


class ConfigProgress(_Body):
    config_id: str
    status: str
    updated_at: str | None = None
    errors: list[dict[str, Any]] = Field(default_factory=list)
    stamps: dict[str, str] = Field(default_factory=dict, description="when each status was first recorded")
    series: list[SeriesOutcome] = Field(
        default_factory=list,
        description="adaptive repetitions (`repetitions: {min, max, ci_pct}`): each series' repetitions "
        "spent, the precision reached and why it stopped; empty until Collect read them",
    )
    steady_state: list[SteadyStateOutcome] = Field(
        default_factory=list,
        description="fio's steady-state verdict of each job that asked for one (a workload's `steady_state`)",
    )
    storage_options: dict[str, str] = Field(
        default_factory=dict,
        description="target id -> the storage option its results are kept under (what "
        "`GET /results?storage=` and `results --storage` take); empty until the config has a result",
    )


class RecordHistogram(_Body):
    """One record's latency histogram (``?histograms=true``), named as ``results`` names its
    measurement, plus the repetition: config_id through group match a ``results`` entry."""

    config_id: str
    target_id: str
    workload: str
    variant: str = Field(description="the sweep point, e.g. iodepth=32,numjobs=4; empty for none")
    phase: str
    direction: Direction
    group: int | None = Field(description="fio job group (groupid); null for one group")
    repetition: int = Field(ge=1)
    buckets: list[HistogramBucket] = Field(
        description="I/O count per latency bucket as the agent measured it (log buckets, 4 per octave, "
        "empty buckets omitted; ``le_us``: the bucket's upper bound in microseconds)"
    )

    @classmethod
    def of(cls, record: ResultRecord) -> RecordHistogram | None:
        """The record's histogram, None for a record without one (a dd or command measurement)."""
        if record.histogram is None:
            return None
        _, _, _, variant, _, _, _ = record.key()  # the sweep point as ``results`` spells it
        return cls(
            config_id=record.config_id,
            target_id=record.target_id,
            workload=record.workload,
            variant=variant,
            phase=record.phase,
            direction=record.direction,
            group=record.group,
            repetition=record.repetition,
            buckets=list(record.histogram),
        )


class RunDetail(_Body):
    run_id: str
    status: str = Field(description="the run's status in the store, else its execution's")
    execution: Execution | None = Field(description="the Step Functions execution, null when none exists")
    run: dict[str, Any] | None = Field(description="the stored run item; null before Plan recorded it")
    configs: list[ConfigProgress]
    results: list[Aggregate] = Field(description="each measurement's repetitions aggregated")
    economics: dict[str, Any] | None = Field(description="monthly and run cost, deltas and verdicts")
    regressions: list[dict[str, Any]]
    notes: list[str] = Field(default_factory=list)
    histograms: list[RecordHistogram] | None = Field(
        default=None,
        description="with ?histograms=true, each record's latency histogram (records without one, such "
        "as dd or command measurements, have no entry); null without it: the run reads faster",
    )
    caveats: list[str] = Field(
        default_factory=list,
        description="what the results cannot mean, from their labels (emulated volumes, directory targets), "
        "in the report's words",
    )
    emulated: list[str] = Field(
        default_factory=list,
        description="the configs measured on emulated volumes: their grades are no EBS grades",
    )
    sla_searches: list[SlaLimit] = Field(
        default_factory=list,
        description="each latency-SLA search read as an answer (the highest IOPS sustained under the "
        "target), with every repetition's bracket, stop and probes",
    )


class ReportLink(_Body):
    run_id: str
    format: Literal["html", "md", "csv"]
    url: str = Field(description="a presigned GET link to the report")
    expires_in_s: int


class ExportFile(_Body):
    """One config's export as Collect wrote it: JSON Lines, one row per record, the export schema's
    columns (``storagebench.export.schema``)."""

    config_id: str
    attempt: int = Field(ge=1, description="the config's launch: 2 and more after Spot interruptions")
    key: str = Field(description="the S3 key, under the run's prefix")
    url: str = Field(description="a presigned GET link to the file")


class RunExport(_Body):
    run_id: str
    suite: str
    status: str = Field(description="the run's status: a config not collected yet has no file")
    prefix: str = Field(description="the S3 prefix listed: exports/suite=<suite>/date=<day>/run=<run>/")
    files: list[ExportFile] = Field(
        description="every config's file (and each attempt's), by config and attempt"
    )
    configs_without_rows: list[str] = Field(
        description="configs of the run with no file: not collected yet, nothing measured, or a failed write "
        "(the rows are still in the store)"
    )
    notes: list[str] = Field(default_factory=list, description="objects under the prefix that are no export")
    expires_in_s: int


class ResultsPage(_Body):
    storage: str
    workload: str
    points: list[dict[str, Any]] = Field(description="each repetition: started_at, run_id, config_id, record")
    next_cursor: str | None


class RunStopped(_Body):
    run_id: str
    execution_arn: str | None
    status: Literal["STOPPING"] = "STOPPING"
    cleanup: Literal["started", "not_needed"] = Field(
        description="not_needed: the run was never recorded, so nothing was launched"
    )
