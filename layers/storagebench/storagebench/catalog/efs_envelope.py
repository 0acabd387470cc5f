"""What an EFS file system delivers, per the catalog: throughput from its mode and its stored size.

Bursting is the mode whose figures follow the data: a baseline of 50 MiB/s per TiB stored (at
least 1 MiB/s) and a burst of 100 MiB/s per TiB (at least 100 MiB/s) while burst credits last.
Every file system storagebench measures is created for the run, so it starts with the new file
system's credit balance (2.1 TiB), not with what a file system kept for months would hold.

The size is the one the request declares (``storage_gib_hint``). AWS sets the baseline from the
size it meters (about hourly) and a new file system is empty: storagebench does not fill it to the
declared size first, because writing 1 TiB at the 100 MiB/s burst takes about 3 hours and spends
half of the credits the measurement is about. So the envelope gives both: the declared size's
figures (what the study's 1 TiB file system had) and the empty file system's (what AWS grants
until the workloads' own data is metered).
"""

from __future__ import annotations

from typing import Literal

from storagebench.catalog.envelope_models import FrozenModel
from storagebench.catalog.envelope_models import fmt_number as _fmt
from storagebench.catalog.loader import load_catalog

__all__ = ["EfsEnvelope", "EfsRates", "efs_envelope"]

_GIB_PER_TIB = 1024
_MIB_PER_TIB = 1024 * 1024

ThroughputMode = Literal["elastic", "bursting", "provisioned"]


class EfsRates(FrozenModel):
    """Bursting figures at one stored size: MiB/s each way (EFS meters reads and writes together)."""

    stored_gib: float
    baseline_mibps: float
    burst_mibps: float
    burst_seconds: float | None  # a new file system's credits at full burst; None: no burst above baseline


class EfsEnvelope(FrozenModel):
    """One file system's throughput ceilings and, in bursting mode, its baseline and burst.

    ``declared`` is computed from the request's ``storage_gib_hint`` (None without one); ``empty``
    is the same file system as AWS meters it when it is created. ``client_max_mibps`` is one
    client's ceiling whatever the file system allows.
    """

    throughput_mode: ThroughputMode
    declared: EfsRates | None
    empty: EfsRates | None
    read_mibps: float
    write_mibps: float
    client_max_mibps: float | None
    metered_every_s: float
    notes: list[str]

    def describe(self) -> str:
        """One line, e.g. ``EFS bursting, 1,024 GiB stored (declared): 50 MiB/s baseline, ...``."""
        client = f"; one client at most {_fmt(self.client_max_mibps)} MiB/s" if self.client_max_mibps else ""
        if self.throughput_mode != "bursting":
            if self.read_mibps == self.write_mibps:
                rate = f"{_fmt(self.read_mibps)} MiB/s"
            else:
                rate = f"{_fmt(self.read_mibps)} MiB/s read, {_fmt(self.write_mibps)} MiB/s write"
            return f"EFS {self.throughput_mode}: {rate} per file system{client}"
        assert self.empty is not None  # bursting always has the empty file system's figures
        hours = self.metered_every_s / 3600
        empty = (
            f"created empty, AWS meters what is written (about every {_fmt(hours)} h): "
            f"{_rates(self.empty)} until then"
        )
        if self.declared is None:
            return f"EFS bursting, no storage_gib_hint: {empty}{client}"
        return (
            f"EFS bursting, {_fmt(self.declared.stored_gib)} GiB stored (declared, not pre-filled): "
            f"{_rates(self.declared)}; {empty}{client}"
        )


def _rates(rates: EfsRates) -> str:
    text = f"{_fmt(rates.baseline_mibps)} MiB/s baseline"
    if rates.burst_seconds is not None:
        text += (
            f", {_fmt(rates.burst_mibps)} MiB/s burst for ~{_fmt(rates.burst_seconds / 3600)} h "
            "on a new file system's credits"
        )
    return text


def _bursting(stored_gib: float) -> EfsRates:
    rules = load_catalog().efs
    tib = stored_gib / _GIB_PER_TIB
    baseline = max(rules.baseline_floor_mibps, rules.baseline_mibps_per_tib * tib)
    burst = max(rules.burst_floor_mibps, rules.burst_mibps_per_tib * tib)
    credits_mib = rules.new_file_system_credit_tib * _MIB_PER_TIB
    seconds = credits_mib / (burst - baseline) if burst > baseline else None
    return EfsRates(stored_gib=stored_gib, baseline_mibps=baseline, burst_mibps=burst, burst_seconds=seconds)


def efs_envelope(
    throughput_mode: ThroughputMode, stored_gib: float | None, provisioned_mibps: float | None = None
) -> EfsEnvelope:
    """The envelope of one file system (see the module notes).

    Raises ValueError for a stored size below 0 and for provisioned mode without its MiB/s.
    """
    if stored_gib is not None and stored_gib < 0:
        raise ValueError(f"stored size must be >= 0 GiB, got {stored_gib:g}")
    rules = load_catalog().efs
    notes: list[str] = []
    declared = _bursting(stored_gib) if stored_gib is not None else None
    empty: EfsRates | None = None
    if throughput_mode == "elastic":
        read, write = rules.elastic_max_read_mibps, rules.elastic_max_write_mibps
        client = rules.elastic_per_client_max_mibps
    elif throughput_mode == "provisioned":
        if provisioned_mibps is None:
            raise ValueError("provisioned throughput mode needs its MiB/s")
        # AWS grants the bursting baseline of the metered size when that is higher than provisioned.
        granted = max(provisioned_mibps, declared.baseline_mibps if declared is not None else 0.0)
        read = write = granted
        client = rules.per_client_max_mibps
    else:
        empty = _bursting(0.0)
        figures = declared if declared is not None else empty
        read = write = figures.burst_mibps
        client = rules.per_client_max_mibps
        if declared is None:
            notes.append(
                "no storage_gib_hint: the envelope is an empty file system's; declare the data the "
                "workloads keep on it to get the study's baseline and a price"
            )
        else:
            notes.append(
                f"computed from the declared {_fmt(declared.stored_gib)} GiB (storage_gib_hint), not the "
                "metered size: the file system is created empty and is not pre-filled"
            )
    return EfsEnvelope(
        throughput_mode=throughput_mode,
        declared=declared,
        empty=empty,
        read_mibps=read,
        write_mibps=write,
        client_max_mibps=client,
        metered_every_s=rules.metered_every_s,
        notes=notes,
    )
