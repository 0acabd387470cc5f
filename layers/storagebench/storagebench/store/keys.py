"""Single-table key design for runs, configs and results, one Query per access pattern.

What is read often is kept small: a run's partition holds its results packed (a few items per
config, without histograms), each result's history point lives in a partition of its own (on
GSI2, without histogram), histograms are fetched only when asked for, and every config's series
values go to one compact digest item per suite for the regression check.

===================  =========================================  =====================================
item                 PK / SK                                    indexes
===================  =========================================  =====================================
run                  RUN#<run> / RUN                            GSI1 SUITE#<suite> / <started>#<run>
                                                                GSI3 ACTIVE / <started>#<run> (running)
config               RUN#<run> / CONFIG#<c>
packed results       RUN#<run> / RESULTS#<c>#<batch>#<part>     (records of one write, no histogram)
history point        POINTS#<run> / <c>#<record key>            GSI2 SERIES#<option>#<workload>#
                                                                <variant>#<phase>#<dir> /
                                                                <started>#<run>#r<rep>
histogram            HISTOGRAMS#<run> / <c>#<record key>        (read only on request)
suite digest         DIGEST#<suite> / <started>#<run>#<c>#<batch>  (series values, regression check)
occurrence claim     OCCURRENCE#<arn>@<time> / CLAIM            (read by key only; expires, EXPIRES)
daily spend          SPEND#<yyyy-mm-dd> / SPEND                 (read by key only; expires, EXPIRES)
result (previous)    RUN#<run> / RESULT#<c>#<key>               GSI2 as a history point
===================  =========================================  =====================================

1. one run with its configs and results: Query PK = RUN#<run> (a few items per config);
2. the latest N runs of a suite: Query GSI1 PK = SUITE#<suite>, newest first, Limit N;
3. one metric of one storage option and workload over a date range: Query GSI2 with SK between
   two ISO dates (history points; results of the previous layout are on GSI2 too);
4. runs in progress: Query GSI3 PK = ACTIVE (a sparse index: the attributes are removed when the
   run ends);
5. a run's latency histograms, on request: Query PK = HISTOGRAMS#<run>;
6. the regression check's history, every series of the last N runs of a suite: Query
   PK = DIGEST#<suite> with SK between the oldest of those runs and this one.

Runs written before this layout (``layout`` absent on the run item) keep their ``RESULT#`` items,
with the record and its histogram nested: they read through the same patterns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from storagebench.results.records import ResultRecord

RUN = "RUN"
ACTIVE = "ACTIVE"
CLAIM = "CLAIM"
EXPIRES = "expires_epoch"
"""The table's time-to-live attribute (template.yaml, ResultsTable): epoch seconds after which
DynamoDB deletes the item. Only occurrence claims carry it: runs and results are the history."""
CLAIM_TTL_S = 35 * 86400
"""How long a claim is kept: it only has to outlive the retries of its occurrence (EventBridge
Scheduler retries for at most 24 h), and a month of claims is what an operator may want to read."""
LAYOUT = 2
"""The item layout runs are written in (``layout`` on the run item; absent: the previous one)."""
CONFIG_PREFIX = "CONFIG#"
RESULT_PREFIX = "RESULT#"  # the previous layout: one item per record, histogram nested
RESULTS_PREFIX = "RESULTS#"


def run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


SPEND = "SPEND"


def spend_pk(day: str) -> str:
    """The item holding the upper bounds of the runs started on ``day`` (UTC, yyyy-mm-dd)."""
    return f"SPEND#{day}"


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


def record_variant(record: ResultRecord) -> str:
    """The record's variant as stored: a per-client record's client joins it (``client=<host:port>``
    last, as ``ResultRecord.key`` reads it), so the clients of a step and their aggregate keep a key
    and a series each instead of overwriting one another."""
    text = variant_text(record.variant)
    if record.client is None:
        return text
    return ",".join(part for part in (text, f"client={record.client}") if part)


def record_key(record: ResultRecord) -> str:
    """Readable and unique within a config: workload, variant, phase, direction, group, repetition."""
    variant = record_variant(record)
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
    return series_partition(
        storage_option, record.workload, record_variant(record), record.phase, record.direction
    )


def series_sk(started_at: str, run_id: str, repetition: int) -> str:
    return f"{started_at}#{run_id}#r{repetition}"


def results_sk(config_id: str, batch: str, part: int) -> str:
    """One packed part of one ``put_results`` call (``batch``: a digest of its record keys)."""
    return f"{RESULTS_PREFIX}{config_id}#{batch}#{part:03d}"


def points_pk(run_id: str) -> str:
    return f"POINTS#{run_id}"


def histograms_pk(run_id: str) -> str:
    return f"HISTOGRAMS#{run_id}"


def detail_sk(config_id: str, key: str) -> str:
    """A history point's or a histogram's sort key: the config and the record key."""
    return f"{config_id}#{key}"


def digest_pk(suite: str) -> str:
    return f"DIGEST#{suite}"


def digest_sk(started_at: str, run_id: str, config_id: str, batch: str) -> str:
    return f"{started_at}#{run_id}#{config_id}#{batch}"


def batch_id(record_keys: list[str]) -> str:
    """The same records give the same id (a retried write rewrites its items); others another."""
    return hashlib.sha256("\n".join(sorted(record_keys)).encode()).hexdigest()[:12]
