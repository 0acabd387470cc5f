"""GNU dd stderr and `time` output."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.results.dd import DdRecords, parse_dd_stderr, read_dd_stderr
from storagebench.results.errors import ParseError
from storagebench.results.timecmd import CommandTimes, parse_all_times, parse_duration, parse_time_output

DATA = Path(__file__).resolve().parents[2] / "data" / "dd"
MIB = 1 << 20


@pytest.mark.parametrize(
    ("name", "records", "size", "seconds", "rate"),
    [
        ("dsync_write", DdRecords(100, 0), 104857600, 0.200351, 523e6),
        ("read_1m", DdRecords(100, 0), 104857600, 0.0187938, 5.6e9),
        ("read_fdatasync_devnull", DdRecords(204800, 0), 104857600, 0.14005, 749e6),
        ("write_fdatasync", DdRecords(64, 0), 67108864, 0.0841038, 798e6),
        ("urandom_fullblock", DdRecords(16, 0), 16777216, 0.0942323, 178e6),
        ("partial", DdRecords(244, 1), 1000000, 0.00134956, 741e6),
        ("small_kbs", DdRecords(100, 0), 100, 0.000104404, 958e3),
    ],
)
def test_real_dd_captures(name: str, records: DdRecords, size: int, seconds: float, rate: float) -> None:
    result = read_dd_stderr(DATA / f"{name}.stderr")
    assert result.records_in == records and result.records_out == records
    assert result.bytes == size
    assert result.seconds == seconds
    assert result.reported_rate_bytes_per_s == pytest.approx(rate)
    assert result.mibps == pytest.approx(size / seconds / MIB)
    # dd's own rounded rate agrees with ours to its 2-3 significant digits
    assert result.bytes_per_s == pytest.approx(rate, rel=0.01)


def test_fdatasync_to_dev_null_keeps_the_error_line() -> None:
    result = read_dd_stderr(DATA / "read_fdatasync_devnull.stderr")
    assert result.errors == ("dd: fsync failed for '/dev/null': Invalid argument",)
    assert read_dd_stderr(DATA / "dsync_write.stderr").errors == ()


def test_old_coreutils_form_and_one_byte() -> None:
    old = "1000+0 records in\n1000+0 records out\n1048576000 bytes (1.0 GB) copied, 5.12 s, 205 MB/s\n"
    result = parse_dd_stderr(old)
    assert (result.bytes, result.seconds, result.reported_rate_bytes_per_s) == (1048576000, 5.12, 205e6)
    one = "0+1 records in\n0+1 records out\n1 byte copied, 0.000123 s, 8.1 kB/s\n"
    result = parse_dd_stderr(one)
    assert result.bytes == 1 and result.records_in == DdRecords(0, 1)


def test_progress_lines_decimal_comma_and_last_summary() -> None:
    text = (
        "52428800 bytes (52 MB, 50 MiB) copied, 1 s, 52,4 MB/s\r"
        "104857600 bytes (105 MB, 100 MiB) copied, 2 s, 52,4 MB/s\r"
        "100+0 records in\n100+0 records out\n"
        "104857600 bytes (105 MB, 100 MiB) copied, 2,00461 s, 52,3 MB/s\n"
    )
    result = parse_dd_stderr(text)
    assert result.seconds == 2.00461 and result.reported_rate_bytes_per_s == pytest.approx(52.3e6)

    usr1 = (
        "10+0 records in\n10+0 records out\n10485760 bytes (10 MB, 10 MiB) copied, 1.0 s, 10.5 MB/s\n"
        "20+0 records in\n20+0 records out\n20971520 bytes (21 MB, 20 MiB) copied, 2.0 s, 10.5 MB/s\n"
    )
    assert parse_dd_stderr(usr1).bytes == 20971520


def test_truncated_records_and_infinite_rate() -> None:
    text = "1+0 records in\n1+0 records out\n2 truncated records\n512 bytes copied, 0 s, Infinity B/s\n"
    result = parse_dd_stderr(text)
    assert result.truncated_records == 2
    assert result.reported_rate_bytes_per_s is None and result.mibps is None


def test_no_summary_raises_with_dds_complaint() -> None:
    text = "dd: failed to open '/mnt/x/test': No such file or directory\n"
    with pytest.raises(ParseError, match=r"^steps/s/w/dd.0.stderr: no dd summary .*No such file"):
        parse_dd_stderr(text, "steps/s/w/dd.0.stderr")
    with pytest.raises(ParseError, match="no dd summary"):
        parse_dd_stderr("")
    with pytest.raises(ParseError, match="cannot read"):
        read_dd_stderr(DATA / "absent.stderr")


def test_summary_without_records_lines_is_not_a_result() -> None:
    with pytest.raises(ParseError):
        parse_dd_stderr("104857600 bytes (105 MB, 100 MiB) copied, 2 s, 52.4 MB/s\n")


# --------------------------------------------------------------------------- time


def test_time_p_capture() -> None:
    times = parse_time_output((DATA / "time_p.stderr").read_text())
    assert times == CommandTimes(real_s=0.02, user_s=0.0, sys_s=0.02)


def test_bash_time_capture() -> None:
    times = parse_time_output((DATA / "bash_time.stderr").read_text())
    assert times == CommandTimes(real_s=0.022, user_s=0.0, sys_s=0.022)
    assert times.cpu_sys_pct == pytest.approx(100.0)


def test_gnu_time_default_format() -> None:
    text = (
        "0.52user 1.50system 1:02.25elapsed 3%CPU (0avgtext+0avgdata 2048maxresident)k\n"
        "0inputs+204800outputs (0major+100minor)pagefaults 0swaps\n"
    )
    assert parse_time_output(text) == CommandTimes(real_s=62.25, user_s=0.52, sys_s=1.5)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0m1.234s", 1.234),
        ("61m2.000s", 3662.0),
        ("1h0m1s", 3601.0),
        ("1.23", 1.23),
        ("1,23", 1.23),
        ("0m1,5s", 1.5),
        ("1:02.03", 62.03),
        ("1:00:03", 3603.0),
        ("7", 7.0),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["abc", "1m", "-1", "1:2:3:4"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ParseError, match="is not a duration"):
        parse_duration(text, "t.txt")


def test_several_reports_last_one_wins_and_incomplete_is_an_error() -> None:
    text = "real 1.00\nuser 0.10\nsys 0.20\nreal\t0m2.500s\nuser\t0m0.300s\nsys\t0m0.400s\n"
    assert len(parse_all_times(text)) == 2
    assert parse_time_output(text) == CommandTimes(2.5, 0.3, 0.4)
    with pytest.raises(ParseError, match=r"^x: no time report"):
        parse_time_output("real 1.00\nuser 0.10\n", "x")
