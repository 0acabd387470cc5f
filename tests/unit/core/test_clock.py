"""One home for how storagebench writes times: ISO for documents, a compact stamp for names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from storagebench.core.clock import iso, parse_iso, stamp
from storagebench.workflow.run_ids import is_run_id, new_run_id


def test_iso_is_utc_to_the_second_and_reads_back() -> None:
    moment = datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))
    assert iso(moment) == "2030-01-02T01:04:05Z"
    assert parse_iso(iso(moment)) == moment.replace(microsecond=0)


def test_stamp_sorts_by_time_and_holds_no_colon() -> None:
    first = stamp(datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert first == "20300102T030405Z"
    assert first < stamp(datetime(2030, 1, 2, 3, 4, 6, tzinfo=UTC))


def test_a_run_id_carries_the_stamp() -> None:
    run_id = new_run_id("nightly")
    assert is_run_id(run_id) and run_id.startswith("nightly-20") and run_id.count("-") == 2


def test_runs_of_one_second_are_kept_apart_by_32_random_bits() -> None:
    """A burst of starts in one second (the hostile-request suite starts ~100) must not collide:
    16 bits did now and then, 32 make it about one in 40 million for 100 starts."""
    suffix = new_run_id("nightly").rsplit("-", 1)[1]
    assert len(suffix) == 8 and int(suffix, 16) >= 0
