"""Pre-warming: which EBS volumes are read end to end before the workloads, and the cold-read check.

AWS documents ("Initialize Amazon EBS volumes") that empty volumes deliver their maximum
performance at once and need no initialisation; only volumes created from a snapshot (or volume
copies) fetch their blocks lazily and must be read first. ``volumes`` applies the read by what
each volume needs:

- ``restored`` (default): volumes restored from a snapshot are read end to end, unless AWS
  initialises them at a Provisioned Rate for Volume Initialization (``initialization_rate_mibps``:
  the workflow waits for 100 % and nothing is read); every other volume gets the cold-read check;
- ``all``: every volume is read end to end (storagebench's behaviour before the check existed);
- ``none``: no volume is read end to end; every volume gets the cold-read check (a restored
  volume's check then measures its lazy-loading penalty).

The cold-read check (``agent.cold_read``) reads ``sample_gib`` spread over ``sample_extents``
evenly spaced extents of each volume with ``dd iflag=direct`` (at most an eighth of the volume),
then the same extents again: the record holds both (MiB/s, ms per read), so the first-access
penalty is measured, not assumed. ``method: none`` reads nothing at all: no initialisation and
no check.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from storagebench.request.problems import Problems
from storagebench.request.rules import RequestModel, rule

PrewarmVolumes = Literal["restored", "all", "none"]
INITIALIZE_DOCS = "https://docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html"
"""AWS's "Initialize Amazon EBS volumes" (the page's address is spelt so)."""
DEFAULT_SAMPLE_GIB = 4.0
DEFAULT_SAMPLE_EXTENTS = 32
MAX_SAMPLE_GIB = 64.0
MAX_SAMPLE_EXTENTS = 1024


class Prewarm(RequestModel):
    """Read the EBS volumes that need it end to end before measuring; check the others' cold read."""

    method: Literal["none", "dd", "fio"] = Field(
        default="dd",
        description="how volumes are read end to end: dd (`dd if=<dev> of=/dev/null bs=1M` per volume) or "
        "fio (parallel 128k reads, AWS's documented command); none: nothing is read (no initialisation, "
        "no cold-read check)",
    )
    volumes: PrewarmVolumes = Field(
        default="restored",
        description="which volumes are read end to end: restored (from a snapshot, unless initialised at "
        "a provisioned rate), all, or none; the others get the cold-read check",
    )
    block_size: Annotated[str, StringConstraints(pattern=r"^\d+[kKmM]$")] | None = Field(
        default=None,
        description="read size; default 1M for dd, 128k for fio (AWS's documented command); the cold-read "
        "check reads with it under dd, 1M under fio",
    )
    iodepth: int = Field(default=32, ge=1, le=256, description="fio method only")
    sample_gib: float = Field(
        default=DEFAULT_SAMPLE_GIB,
        ge=0,
        le=MAX_SAMPLE_GIB,
        description="the cold-read check: GiB read from each volume not read end to end (at most an eighth "
        "of it), cold then warm; 0: no check",
    )
    sample_extents: int = Field(
        default=DEFAULT_SAMPLE_EXTENTS,
        ge=1,
        le=MAX_SAMPLE_EXTENTS,
        description="the cold-read check: evenly spaced extents the sample is split into",
    )

    def _read_with_method_none(self, name: str, problems: Problems) -> None:
        """``method: none`` with a read asked for (a value other than the default) is a
        contradiction, not a silent no-op."""
        default = type(self).model_fields[name].default
        if self.method == "none" and getattr(self, name) != default:
            problems.add(
                (name,),
                getattr(self, name),
                "method none reads nothing (no initialisation, no cold-read check): set method dd "
                f"or fio, or leave {name} out",
            )

    @rule("method", "volumes")
    def _volumes_need_a_method(self, problems: Problems) -> None:
        self._read_with_method_none("volumes", problems)

    @rule("method", "sample_gib")
    def _sample_needs_a_method(self, problems: Problems) -> None:
        self._read_with_method_none("sample_gib", problems)

    @rule("method", "sample_extents")
    def _extents_need_a_method(self, problems: Problems) -> None:
        self._read_with_method_none("sample_extents", problems)

    @property
    def checks_cold_reads(self) -> bool:
        """Whether volumes that are not read end to end get the sampled cold-read check."""
        return self.method != "none" and self.sample_gib > 0
