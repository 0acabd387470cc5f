"""Single-table key design for runs, configs and results, one Query per access pattern.

===================  ======================  ===========================================
item                 PK / SK                 indexes
===================  ======================  ===========================================
run                  RUN#<run> / RUN         GSI1 SUITE#<suite> / <started>#<run>  (history)
                                             GSI3 ACTIVE / <started>#<run>        (while RUNNING or STOPPING)
config               RUN#<run> / CONFIG#<c>
result (a record)    RUN#<run> / RESULT#<c>#<key>
                                             GSI2 SERIES#<option>#<workload>#<variant>#<phase>#<dir>
                                                  / <started>#<run>#<rep>          (one metric's history)
occurrence claim     OCCURRENCE#<arn>@<time> / CLAIM   (none: read by key only)
===================  ======================  ===========================================

1. one run with its configs and results: Query PK = RUN#<run>;
2. the latest N runs of a suite: Query GSI1 PK = SUITE#<suite>, newest first, Limit N;
3. one metric of one storage option and workload over a date range: Query GSI2 with SK between
   two ISO dates;
4. runs in progress: Query GSI3 PK = ACTIVE (a sparse index: the attributes are removed when the
   run ends).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from storagebench.results.records import ResultRecord

RUN = "RUN"
ACTIVE = "ACTIVE"
CLAIM = "CLAIM"


def run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def occurrence_pk(occurrence: str) -> str:
    """A scheduled occurrence's claim (``workflow.run_ids.occurrence_key``)."""
    return f"OCCURRENCE#{occurrence}"


def config_sk(config_id: str) -> str:
    return f"CONFIG#{config_id}"


def suite_pk(suite: str) -> str:
    return f"SUITE#{suite}"


def started_sk(started_at: str, run_id: str) -> str:
    return f"{started_at}#{run_id}"


def variant_text(variant: Mapping[str, Any] | str) -> str:
    """A variant spelled ``k=v,k=v`` in key order (``-`` when empty); already spelled text is kept."""
    if isinstance(variant, str):
        return variant or "-"
    return ",".join(f"{k}={v}" for k, v in sorted(variant.items())) or "-"


def record_key(record: ResultRecord) -> str:
    """Readable and unique within a config: workload, variant, phase, direction, group, repetition."""
    variant = variant_text(record.variant)
    group = "-" if record.group is None else str(record.group)
    parts = [
        record.target_id,
        record.workload,
        variant,
        record.phase,
        record.direction,
        group,
        f"r{record.repetition}",
    ]
    key = "#".join(parts)
    if len(key) > 900:  # DynamoDB sort keys hold 1,024 bytes: keep room, stay unique
        key = key[:880] + "#" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return key


def spelled_variant(
    key: str,
    target_id: object,
    workload: object,
    phase: object,
    direction: object,
    group: object,
    repetition: object,
) -> str | None:
    """The variant as :func:`record_key` spelled it in ``key``, when ``key`` is that record's key.

    A stored number loses its type (DynamoDB keeps ``1.0`` as ``1``); the key keeps the spelling
    the series key was built from. None when ``key`` is not this record's (or was shortened).
    """
    prefix = f"{target_id}#{workload}#"
    suffix = f"#{phase}#{direction}#{'-' if group is None else group}#r{repetition}"
    if key.startswith(prefix) and key.endswith(suffix):
        return key[len(prefix) : len(key) - len(suffix)] or None
    return None


def result_sk(config_id: str, record: ResultRecord) -> str:
    return f"RESULT#{config_id}#{record_key(record)}"


def series_partition(
    storage_option: str, workload: str, variant: Mapping[str, Any] | str, phase: str, direction: str
) -> str:
    """One measurement of one storage option across runs (pattern 3), from its parts."""
    return f"SERIES#{storage_option}#{workload}#{variant_text(variant)}#{phase}#{direction}"


def series_pk(storage_option: str, record: ResultRecord) -> str:
    return series_partition(storage_option, record.workload, record.variant, record.phase, record.direction)


def series_sk(started_at: str, run_id: str, repetition: int) -> str:
    return f"{started_at}#{run_id}#r{repetition}"
