"""The cold-read check's layout (protocol.sample_layout) and its reading of dd (agent.cold_read)."""

from __future__ import annotations

import pytest

from storagebench.agent.cold_read import dd_seconds
from storagebench.agent.prewarm import prewarm_summary
from storagebench.agent.proc import CommandError
from storagebench.protocol.sample_layout import MIB, block_bytes, sample_layout

GIB = 1 << 30


def test_a_large_volume_is_sampled_in_evenly_spaced_extents() -> None:
    layout = sample_layout(200 * GIB, 4 * GIB, 32, MIB)
    assert len(layout) == 32
    assert {count for _, count in layout} == {128}  # 4 GiB / 32 = 128 MiB each
    starts = [skip for skip, _ in layout]
    stride = 200 * 1024 / 32
    # each extent centred in its 1/32 of the volume: first at 6,400/2 - 64, last near the end
    assert starts[0] == int((stride - 128) / 2)
    assert all(b - a == pytest.approx(stride, abs=1) for a, b in zip(starts, starts[1:]))  # noqa: B905, RUF007 - runs under Python 3.9
    assert starts[-1] + 128 <= 200 * 1024
    assert sum(count for _, count in layout) * MIB == 4 * GIB


def test_a_small_volume_is_sampled_at_most_an_eighth_in_extents_of_8_mib_or_more() -> None:
    layout = sample_layout(GIB, 4 * GIB, 32, MIB)  # a 1 GiB emulated volume: 128 MiB, 16 x 8 MiB
    assert [count for _, count in layout] == [8] * 16
    assert [skip for skip, _ in layout][:3] == [28, 92, 156]  # centred in each 64 MiB sixteenth
    tiny = sample_layout(20 * MIB, 4 * GIB, 32, MIB)  # 2.5 MiB allowed: one extent of 2 MiB
    assert tiny == [(9, 2)]
    assert sample_layout(MIB // 2, 4 * GIB, 32, MIB) == []  # smaller than one block
    # 4 KiB reads: the same 8 MiB floor, in blocks
    assert {count for _, count in sample_layout(GIB, 4 * GIB, 32, 4096)} == {2048}


def test_extents_never_overlap_or_leave_the_device() -> None:
    for size in (9 * MIB, 100 * MIB + 4096, 3 * GIB + 7, 16 * GIB):
        for extents in (1, 3, 32, 1024):
            layout = sample_layout(size, GIB, extents, 64 * 1024)
            ends = [skip + count for skip, count in layout]
            assert all(end <= size // (64 * 1024) for end in ends)
            assert all(a_end <= b for a_end, (b, _) in zip(ends, layout[1:]))  # noqa: B905 - runs under Python 3.9


def test_a_bad_sample_is_refused() -> None:
    with pytest.raises(ValueError, match="extents 0"):
        sample_layout(GIB, GIB, 0, MIB)


@pytest.mark.parametrize(
    ("text", "expected"), [("1M", MIB), ("128k", 128 * 1024), ("4096", 4096), ("2m", 2 * MIB)]
)
def test_block_sizes(text: str, expected: int) -> None:
    assert block_bytes(text) == expected


@pytest.mark.parametrize("text", ["0", "1G", "", "1.5M"])
def test_bad_block_sizes_are_named(text: str) -> None:
    with pytest.raises(ValueError, match="is not a positive number of bytes"):
        block_bytes(text)


@pytest.mark.parametrize(
    ("stderr", "seconds"),
    [
        (
            "4+0 records in\n4+0 records out\n4194304 bytes (4.2 MB, 4.0 MiB) copied, 0.0321 s, 131 MB/s\n",
            0.0321,
        ),
        ("4194304 bytes (4.2 MB) copied, 1.5e-03 s, 2.8 GB/s\n", 0.0015),
        ("4194304 bytes (4.0MB) copied, 0.004021 seconds, 1.0GB/s\n", 0.004021),  # busybox
        ("4194304 bytes (4,2 MB, 4,0 MiB) copied, 0,5 s, 8,4 MB/s\n", 0.5),
    ],
)
def test_dd_seconds_are_dds_own(stderr: str, seconds: float) -> None:
    assert dd_seconds(stderr) == pytest.approx([seconds])


def test_a_pass_log_holds_one_summary_per_extent_in_order() -> None:
    log = "".join(
        f"8+0 records in\n8+0 records out\n8388608 bytes (8.4 MB, 8.0 MiB) copied, {s} s, 131 MB/s\n"
        for s in ("0.064", "0.07", "0.5")
    )
    assert dd_seconds(log) == pytest.approx([0.064, 0.07, 0.5])


def test_dd_without_a_summary_is_an_error() -> None:
    with pytest.raises(CommandError, match="no 'bytes copied' summary: dd: failed to open"):
        dd_seconds("dd: failed to open '/dev/nvme1n1': No such file or directory\n")


def test_the_progress_line_compares_cold_and_warm() -> None:
    line = prewarm_summary(
        {"target": "data", "mode": "sampled", "devices": [{"mibps": 98.04, "warm_mibps": 124.96}]}
    )
    assert line == "cold-read check of data: cold 98.0 MiB/s, warm 125.0 MiB/s"
    assert (
        prewarm_summary({"target": "data", "devices": [{"mibps": 125.0}]}) == "pre-warmed data: 125.0 MiB/s"
    )
