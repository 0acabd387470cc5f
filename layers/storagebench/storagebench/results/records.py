"""Normalized measurement records: one per config, workload, repetition, phase and direction.

Every engine (fio, dd, a timed command, the pre-warm read or its cold-read check) produces the
same record shape so results across EBS, instance store, EFS, FSx and NFS compare on one scale.
Units are fixed and spelled in the field names: MiB/s (2^20 bytes), microseconds (milliseconds
in the cold-read check, as a volume's first-access penalty is usually told), seconds, bytes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.results.node_loss import NodeLoss
from storagebench.results.volume import VolumeSide

Direction = Literal["read", "write", "trim", "mixed"]
Engine = Literal["fio", "dd", "command", "prewarm"]
VariantValue = int | float | str


class LatencyStats(BaseModel):
    """Latency of completed I/O in microseconds.

    ``basis`` says what fio measured: ``lat`` (submission + completion, our default because
    jobs set ``lat_percentiles=1``) or ``clat`` (completion only, fio's default percentiles).
    Percentiles merged across jobs come from their histograms, never from averaging.
    """

    model_config = ConfigDict(extra="forbid")

    basis: Literal["lat", "clat"]
    samples: int
    mean_us: float
    stdev_us: float
    min_us: float
    max_us: float
    p50_us: float | None = None
    p90_us: float | None = None
    p95_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None


class HistogramBucket(BaseModel):
    """I/O count whose latency is below ``le_us`` and at or above the previous bucket's bound."""

    model_config = ConfigDict(extra="forbid")

    le_us: float
    count: int


class SlaProbe(BaseModel):
    """One fio run of a latency-SLA search at a fixed rate (``protocol.sla``)."""

    model_config = ConfigDict(extra="forbid")

    probe: int = Field(ge=1, description="1-based, in the order run")
    rate_iops: int = Field(ge=1, description="the rate asked of fio, all jobs together")
    iops: float = Field(ge=0, description="the rate fio achieved")
    latency_us: float = Field(ge=0, description="the searched percentile, worst direction")
    delivered: float = Field(ge=0, description="iops / rate_iops")
    met: bool
    why: str | None = Field(default=None, description="what a probe that missed the SLA missed")
    ios: int | None = Field(default=None, ge=0)
    runtime_s: float | None = Field(default=None, ge=0)
    dir: str | None = Field(default=None, description="the probe's output, relative to the phase's")


class SlaSearch(BaseModel):
    """A latency-SLA search: the target, every probe, and the answer (the record's own figures are
    the answer probe's, or the lowest rate's when even that missed, with ``iops`` left empty)."""

    model_config = ConfigDict(extra="forbid")

    percentile: float = Field(gt=0, lt=100)
    target_us: float = Field(gt=0)
    low_iops: int = Field(ge=1)
    high_iops: int = Field(ge=1)
    tolerance: float = Field(gt=0, lt=1)
    max_probes: int = Field(ge=2)
    min_delivered: float = Field(gt=0, le=1)
    met: bool = Field(description="some probed rate met the SLA")
    sustained_iops: float | None = Field(
        default=None, ge=0, description="IOPS achieved at the highest rate that met the SLA"
    )
    answer_probe: int | None = Field(default=None, ge=1)
    bracket: list[int] = Field(description="[highest rate met, lowest rate missed]; one value at a bound")
    stopped: str = Field(description="why the search ended (protocol.sla STOP_*)")
    probes: list[SlaProbe] = Field(min_length=1)


class SampledPass(BaseModel):
    """One pass of the cold-read check over its extents (``agent.cold_read``: dd, queue depth 1)."""

    model_config = ConfigDict(extra="forbid")

    mibps: float = Field(ge=0, description="bytes read over the pass's time (a stripe's members at once)")
    seconds: float = Field(
        ge=0, description="the pass on the agent's clock: every extent's dd, start-up and gaps included"
    )
    read_ms_mean: float = Field(ge=0, description="mean time of one read of block_bytes")
    read_ms_p50: float = Field(ge=0, description="median over the extents of their mean read time")
    read_ms_max: float = Field(ge=0, description="the slowest extent's mean read time")


class ColdReadCheck(BaseModel):
    """The first-access penalty of a volume, measured: the sampled extents read cold, then warm."""

    model_config = ConfigDict(extra="forbid")

    volumes: int = Field(ge=1, description="member devices read")
    extents: int = Field(ge=1, description="extents per device, evenly spaced")
    block_bytes: int = Field(ge=1, description="the size of one read")
    bytes: int = Field(ge=0, description="read per pass, every member together")
    volume_pct: float = Field(ge=0, le=100, description="share of the volumes the sample covers")
    cold: SampledPass
    warm: SampledPass
    penalty_pct: float = Field(
        description="how much longer a cold read takes than a warm one: (cold / warm mean read time - 1) "
        "x 100; about 0 for a volume that needs no initialisation"
    )


class ClientSpread(BaseModel):
    """How evenly the clients of a multi-client step delivered (``results.clients``): carried on the
    aggregate record of a (group, direction), from the per-client records' IOPS."""

    model_config = ConfigDict(extra="forbid")

    clients: int = Field(ge=1, description="clients whose records were aggregated")
    iops_min: float = Field(ge=0, description="the slowest client's IOPS")
    iops_max: float = Field(ge=0, description="the fastest client's IOPS")
    iops_median: float = Field(ge=0, description="median of the clients' IOPS")
    iops_cv_pct: float = Field(
        ge=0, description="coefficient of variation of the clients' IOPS: population stdev / mean x 100"
    )
    straggler: str | None = Field(
        default=None, description="the client furthest below the median (host:port); None when none is below"
    )
    straggler_index: int | None = Field(
        default=None, ge=1, description="its 1-based position in the step's clients"
    )
    straggler_shortfall_pct: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="how far below the median it is: (median - its IOPS) / median x 100",
    )


class ResultRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    config_id: str
    target_id: str
    workload: str = Field(description="workload id as named in the request (profile name or alias)")
    profile: str
    variant: dict[str, VariantValue] = Field(default_factory=dict, description="sweep point, e.g. numjobs=16")
    repetition: int = Field(ge=1)
    phase: str = Field(description="phase of the workload: run, create, read, prewarm, ...")
    direction: Direction
    engine: Engine
    group: int | None = Field(default=None, description="fio job group (groupid)")
    jobs: int = Field(default=1, ge=1, description="jobs, threads or processes that did the I/O")

    iops: float | None = None
    bw_mibps: float | None = None
    bytes: int = Field(ge=0)
    ios: int | None = Field(default=None, ge=0)
    runtime_s: float = Field(ge=0, description="wall time of the measured I/O")
    latency: LatencyStats | None = None
    histogram: list[HistogramBucket] | None = Field(
        default=None, description="latency histogram on log buckets (4 per octave), empty buckets omitted"
    )

    # fio's group statistics, as its normal output prints them (minb/maxb/mint/maxt).
    job_bw_min_mibps: float | None = None
    job_bw_max_mibps: float | None = None
    job_runtime_min_s: float | None = None
    job_runtime_max_s: float | None = None

    cpu_usr_pct: float | None = Field(default=None, description="fio: mean per job; command: user/real*100")
    cpu_sys_pct: float | None = None
    real_s: float | None = None
    user_s: float | None = None
    sys_s: float | None = None
    files: int | None = Field(default=None, description="files created or read (metadata workloads)")

    started_at: str | None = None
    raw: list[str] = Field(default_factory=list, description="raw artifacts, relative to the agent output")
    labels: list[str] = Field(default_factory=list, description="e.g. emulated:gp2, unthrottled-directory")
    sla: SlaSearch | None = Field(
        default=None, description="a latency-SLA search: its target, every probe and the answer"
    )
    cold_read: ColdReadCheck | None = Field(
        default=None,
        description="a pre-warm record of the sampled cold-read check: the cold and warm passes compared",
    )
    node_loss: NodeLoss | None = Field(
        default=None,
        description="a node of the topology removed mid-phase (a controller lost): the I/O pause and the "
        "recovery this direction saw (results.node_loss)",
    )
    volume: VolumeSide | None = Field(
        default=None,
        description="the same phase and direction as the volume saw it (EBS statistics log page, or the "
        "kernel's counters for emulated volumes); None where no device could be read",
    )

    client: str | None = Field(
        default=None,
        description="a multi-client step's per-client record: the client (host:port as fio's --client "
        "named it); None on single-client and aggregate records",
    )
    client_index: int | None = Field(
        default=None, ge=1, description="that client's 1-based position in the step's clients"
    )
    clients: int | None = Field(
        default=None,
        ge=1,
        description="an aggregate record of a multi-client step: how many clients' records it sums "
        "(IOPS and bandwidth summed, latency from the merged histograms); None otherwise",
    )
    client_spread: ClientSpread | None = Field(
        default=None, description="an aggregate record's spread over its clients and its straggler"
    )

    def key(self) -> tuple[str, str, str, str, str, str, int | None]:
        """What repetitions of the same measurement share.

        A per-client record is its own measurement, apart from the aggregate of its step: its
        client joins the variant text (``client=<host:port>`` last), so repetitions, reports and
        comparisons never average a client's figures with the clients' sum.
        """
        variant = ",".join(f"{k}={v}" for k, v in sorted(self.variant.items()))
        if self.client is not None:
            variant = ",".join(part for part in (variant, f"client={self.client}") if part)
        return (
            self.config_id,
            self.target_id,
            self.workload,
            variant,
            self.phase,
            self.direction,
            self.group,
        )
