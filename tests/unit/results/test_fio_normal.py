"""fio's normal output: Run status group lines and per-job headlines."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.results.errors import ParseError
from storagebench.results.fio import split_fio_output
from storagebench.results.fio_normal import parse_job_summaries, parse_quantity, parse_run_status

DATA = Path(__file__).resolve().parents[2] / "data" / "fio"
MIB = 1 << 20


def normal(name: str) -> str:
    return split_fio_output((DATA / f"{name}.out").read_text())[1]


@pytest.mark.parametrize(
    ("text", "value", "resolution"),
    [
        ("76.7MiB/s", 76.7 * MIB, 0.1 * MIB),
        ("161MiB/s", 161 * MIB, MIB),
        ("8080KiB", 8080 * 1024, 1024),
        ("8274kB", 8274e3, 1e3),
        ("54.4MB/s", 54.4e6, 0.1e6),
        ("1.50GiB", 1.5 * 2**30, 0.01 * 2**30),
        ("2.1GB/s", 2.1e9, 0.1e9),
        ("4096B", 4096, 1),
        ("999B/s", 999, 1),
        ("1.2TiB", 1.2 * 2**40, 0.1 * 2**40),
    ],
)
def test_quantities(text: str, value: float, resolution: float) -> None:
    quantity = parse_quantity(text)
    assert quantity.value == pytest.approx(value)
    assert quantity.resolution == pytest.approx(resolution)


def test_quantity_agreement_is_within_printed_resolution() -> None:
    quantity = parse_quantity("76.7MiB/s")
    assert quantity.agrees(76.74 * MIB) and quantity.agrees(76.65 * MIB)
    assert not quantity.agrees(76.9 * MIB)


@pytest.mark.parametrize("text", ["76.7 MiB/s", "fast", "12XB", ""])
def test_bad_quantity_raises(text: str) -> None:
    with pytest.raises(ParseError, match=r"fio\.txt: .* is not a fio amount"):
        parse_quantity(text, "fio.txt")


def test_study1_run_status() -> None:
    read, write = parse_run_status(normal("study1_randrw"))
    assert (read.group, read.direction, write.direction) == (0, "read", "write")
    assert read.bw.renderings[0].text == "51.9MiB/s" and read.bw.renderings[1].text == "54.4MB/s"
    assert read.bw.value == pytest.approx(54.4e6)  # the SI rendering has the finer resolution
    assert read.bw_min.renderings[0].value == pytest.approx(12.8 * MIB)
    assert read.bw_max.renderings[0].value == pytest.approx(13.3 * MIB)
    assert read.io.renderings[0].value == 8080 * 1024
    assert (read.run_min_ms, read.run_max_ms) == (151, 152)
    assert write.io.renderings[1].value == pytest.approx(25.3e6)


def test_two_groups() -> None:
    statuses = parse_run_status(normal("stonewall"))
    assert [(s.group, s.direction) for s in statuses] == [(0, "read"), (1, "write")]
    statuses = parse_run_status(normal("new_group"))
    assert [(s.group, s.direction) for s in statuses] == [
        (0, "read"),
        (0, "write"),
        (1, "read"),
        (1, "write"),
    ]


def test_kb_base_1000_order_and_trim_and_mixed_lines() -> None:
    text = (
        "Run status group 3 (all jobs):\n"
        "   TRIM: bw=80.5MB/s (76.7MiB/s), 80.5MB/s-80.5MB/s (76.7MiB/s-76.7MiB/s), io=80.5MB (76.8MiB), "
        "run=1001-1001msec\n"
        "  MIXED: bw=1000B/s (1000B/s), 1000B/s-1000B/s (1000B/s-1000B/s), io=4000B (4000B), "
        "run=4000-4000msec\n"
        "\n"
        "Disk stats (read/write):\n"
        "   READ: this is not a status line any more\n"
    )
    trim, mixed = parse_run_status(text)
    assert (trim.group, trim.direction, mixed.direction) == (3, "trim", "mixed")
    assert trim.bw.agrees(80.5e6) and trim.bw.agrees(76.7 * MIB)
    assert mixed.io.value == 4000


def test_malformed_line_in_a_block_raises_naming_the_line() -> None:
    text = "Run status group 0 (all jobs):\n   READ: bw=garbage\n"
    with pytest.raises(ParseError, match=r"^x/fio.txt: line 2: unrecognised run status line"):
        parse_run_status(text, "x/fio.txt")


def test_no_summary_is_an_empty_list() -> None:
    assert parse_run_status("fio: pid=1, got signal=9\n") == []


def test_job_summaries() -> None:
    (summary,) = parse_job_summaries(normal("numjobs4_group_reporting"))
    assert (summary.name, summary.group, summary.jobs, summary.error) == ("numjobs4gr", 0, 4, 0)
    read = summary.directions["read"]
    assert read.runtime_ms == 168
    assert read.iops.text.endswith("k") and read.iops.resolution == 100

    summaries = parse_job_summaries(normal("job_error"))
    assert [(s.name, s.error) for s in summaries] == [("ok", 0), ("full", 28)]
    assert summaries[1].directions == {}

    summaries = parse_job_summaries(normal("study1_randrw"))
    assert len(summaries) == 4 and all(set(s.directions) == {"read", "write"} for s in summaries)
