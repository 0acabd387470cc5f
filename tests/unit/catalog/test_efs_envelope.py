"""EFS envelopes against AWS's figures: bursting baseline 50 MiB/s per TiB stored (at least 1 MiB/s),
burst 100 MiB/s per TiB (at least 100 MiB/s), 2.1 TiB of credits on a new file system, 500 MiB/s per
client; the size is the request's declared one, the file system is created empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.catalog.efs_envelope import efs_envelope
from storagebench.cli.request_summary import summarize_request
from storagebench.kinds import kind_of
from storagebench.request import load_request, parse_request
from storagebench.request.model import EfsTarget

EVENTS = Path(__file__).resolve().parents[3] / "events"
TIB_MIB = 1024 * 1024


def test_the_studys_1_tib_bursting_file_system() -> None:
    env = efs_envelope("bursting", 1024)
    assert env.declared is not None and env.empty is not None
    assert (env.declared.baseline_mibps, env.declared.burst_mibps) == (50, 100)
    # a new file system's 2.1 TiB of credits, drained at burst minus baseline
    assert env.declared.burst_seconds == pytest.approx(2.1 * TIB_MIB / 50)
    assert (env.read_mibps, env.client_max_mibps) == (100, 500)
    # what AWS meters at creation: empty, 1 MiB/s baseline, still 100 MiB/s of burst
    assert (env.empty.stored_gib, env.empty.baseline_mibps, env.empty.burst_mibps) == (0, 1, 100)
    assert env.empty.burst_seconds == pytest.approx(2.1 * TIB_MIB / 99)
    assert any("declared 1,024 GiB" in note and "not pre-filled" in note for note in env.notes)


def test_size_scales_baseline_and_burst_above_a_tib_and_the_floors_hold_below() -> None:
    large = efs_envelope("bursting", 4096).declared
    assert large is not None and (large.baseline_mibps, large.burst_mibps) == (200, 400)
    small = efs_envelope("bursting", 10).declared
    assert small is not None
    assert small.baseline_mibps == 1  # 50 KiB/s per GiB would be 0.49 MiB/s: the 1 MiB/s minimum
    assert small.burst_mibps == 100


def test_without_a_declared_size_the_envelope_is_the_empty_file_systems_and_says_so() -> None:
    env = efs_envelope("bursting", None)
    assert env.declared is None and env.empty is not None
    assert env.read_mibps == 100
    assert "no storage_gib_hint" in env.describe()
    assert any("storage_gib_hint" in note for note in env.notes)


def test_provisioned_gets_the_stored_sizes_baseline_when_higher_and_elastic_its_ceilings() -> None:
    assert efs_envelope("provisioned", 1024, 10).read_mibps == 50
    assert efs_envelope("provisioned", 1024, 300).read_mibps == 300
    elastic = efs_envelope("elastic", None)
    assert (elastic.read_mibps, elastic.write_mibps, elastic.client_max_mibps) == (20480, 5120, 1500)
    with pytest.raises(ValueError, match="stored size must be >= 0 GiB, got -1"):
        efs_envelope("bursting", -1)


def test_the_kind_rates_and_describes_from_the_declared_size() -> None:
    target = EfsTarget(id="shared", kind="efs", throughput_mode="bursting", storage_gib_hint=8192)
    kind = kind_of(target)
    rates = kind.rates(target, "c5.2xlarge")
    assert rates is not None and rates.read_mibps == 500  # 800 MiB/s of burst, one client's 500
    short, detail = kind.report_text(target)
    assert short == "EFS bursting · 8,192 GiB stored"
    assert "400 MiB/s baseline" in detail and "created empty" in detail
    notes = kind.duration_notes(target)
    assert any("800 MiB/s" in n and "400 MiB/s" in n for n in notes)


def test_validate_shows_the_genomics_efs_envelope() -> None:
    summary = summarize_request(load_request(EVENTS / "genomics-file-systems.json"))
    efs = next(c for c in summary["configs"] if c["id"] == "efs-standard")["targets"][0]
    assert efs["envelope"].startswith(
        "EFS bursting, 1,024 GiB stored (declared, not pre-filled): 50 MiB/s baseline, 100 MiB/s burst for "
        "~12.2 h"
    )
    assert "created empty" in efs["envelope"] and "1 MiB/s baseline" in efs["envelope"]


def test_a_bad_declared_size_is_refused_naming_field_value_and_what_is_allowed() -> None:
    document = {
        "name": "efs-size",
        "configs": [
            {
                "id": "efs",
                "instance_type": "c5.2xlarge",
                "targets": [
                    {"id": "shared", "kind": "efs", "throughput_mode": "bursting", "storage_gib_hint": 0}
                ],
            }
        ],
        "workloads": [{"profile": "std-seqread-1m"}],
    }
    with pytest.raises(ValueError) as raised:
        parse_request(document)
    assert "configs[0].targets[0].storage_gib_hint: must be >= 1 (got 0)" in str(raised.value)


def test_the_dry_run_holds_the_estimated_workloads_against_a_new_file_systems_credits() -> None:
    from storagebench.planning.duration import config_duration

    request = load_request(EVENTS / "genomics-file-systems.json")
    notes = config_duration(request, request.config("efs-standard")).notes
    (credits,) = [n for n in notes if "keep this EFS busy" in n]
    # the synthetic tests move ~3 TB at 100 MiB/s: ~8.6 h, within the 12.2 h the declared 1 TiB's
    # credits last, beyond the 6.2 h of an empty file system's
    assert credits.startswith("shared: the workloads keep this EFS busy for ~8.6 h at its burst rate")
    assert "at the declared 1,024 GiB, the credits last (~12.2 h)" in credits
    assert "they run out after ~6.2 h and it falls to 1 MiB/s" in credits

    target = EfsTarget(id="e", kind="efs", throughput_mode="bursting", storage_gib_hint=1024)
    assert kind_of(target).credit_note(target, 0.0) is None  # nothing estimated, nothing said
    elastic = EfsTarget(id="e", kind="efs", throughput_mode="elastic")
    assert kind_of(elastic).credit_note(elastic, 3600.0) is None
