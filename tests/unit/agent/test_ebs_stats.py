"""The EBS statistics log page: parsed from binary pages built from the documented layout, read
before and after a phase, and refused by name when it is not what it claims to be."""

from __future__ import annotations

import ctypes
import struct
from pathlib import Path
from typing import Any, Dict, List

import pytest
from ebs_pages import BINS, MAGIC, page

from storagebench.agent import ebs_stats
from storagebench.agent.ebs_stats import EbsStatsError, VolumeProbe, delta, parse, summary

DATA = Path(__file__).resolve().parents[2] / "data" / "ebs-stats"
BEFORE = {
    "total_read_ops": 1_000,
    "total_write_ops": 50,
    "total_read_bytes": 1_000 * 16_384,
    "total_write_bytes": 50 * 4096,
    "total_read_time": 600_000,
    "total_write_time": 40_000,
    "ebs_volume_performance_exceeded_iops": 0,
    "volume_queue_length": 0,
}
AFTER = {
    "total_read_ops": 181_000,  # 180,000 reads of 16 KiB in the phase
    "total_write_ops": 50,
    "total_read_bytes": 181_000 * 16_384,
    "total_write_bytes": 50 * 4096,
    "total_read_time": 600_000 + 180_000 * 2_700,  # 2.7 ms each: QD8 at 3,000 IOPS
    "total_write_time": 40_000,
    "ebs_volume_performance_exceeded_iops": 57_500_000,  # 57.5 s bound by provisioned IOPS
    "ec2_instance_ebs_performance_exceeded_tp": 250_000,
    "volume_queue_length": 8,
}


def _hist(**bins: int) -> List[int]:
    counts = [0] * len(BINS)
    for name, count in bins.items():
        counts[int(name[1:])] = count
    return counts


def test_the_checked_in_pages_are_the_documented_layout() -> None:
    assert (DATA / "gp3-before.bin").read_bytes() == page(BEFORE, read=_hist(b10=1_000))
    assert (DATA / "gp3-after.bin").read_bytes() == page(AFTER, read=_hist(b10=1_000, b12=179_000, b13=1_000))


def test_counters_and_histograms_are_read_at_their_offsets() -> None:
    stats = parse((DATA / "gp3-after.bin").read_bytes())
    assert stats["total_read_ops"] == 181_000 and stats["total_write_bytes"] == 50 * 4096
    assert stats["ebs_volume_performance_exceeded_iops"] == 57_500_000
    assert stats["ec2_instance_ebs_performance_exceeded_tp"] == 250_000
    assert stats["volume_queue_length"] == 8 and stats["version"] == 1
    assert len(stats["read_histogram"]) == len(BINS)
    assert stats["read_histogram"][12] == (2048, 4096, 179_000)  # [2.048, 4.096) ms
    assert all(count == 0 for _, _, count in stats["write_histogram"])


def test_a_phase_is_the_difference_of_two_pages_and_reads_in_seconds_and_microseconds() -> None:
    change = delta(
        parse((DATA / "gp3-before.bin").read_bytes()), parse((DATA / "gp3-after.bin").read_bytes())
    )
    assert change["total_read_ops"] == 180_000 and change["total_write_ops"] == 0
    assert change["volume_queue_length"] == 8  # a point in time, not subtracted
    assert change["read_histogram"][10] == (512, 1024, 0)
    assert change["read_histogram"][12] == (2048, 4096, 179_000)
    view = summary(change, "/dev/nvme1n1", "vol-0abc", "nvme-log-page")
    assert view["directions"]["read"]["mean_latency_us"] == pytest.approx(2_700)
    assert view["directions"]["write"]["mean_latency_us"] is None  # no writes: no mean
    assert view["throttled_s"] == {
        "volume_iops": 57.5,
        "volume_throughput": 0.0,
        "instance_iops": 0.0,
        "instance_throughput": 0.25,
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (page(BEFORE)[:4000], "an EBS statistics page is 4096 bytes; got 4000"),
        (page(BEFORE, magic=0xEC2C0D7E), "magic 0xEC2C0D7E is not an EBS volume's statistics page"),
        (page(BEFORE, bins=65), "read histogram claims 65 bins; the page holds at most 64"),
    ],
    ids=["short", "instance-store-magic", "too-many-bins"],
)
def test_a_page_that_is_not_an_ebs_page_is_refused_by_name(raw: bytes, message: str) -> None:
    with pytest.raises(EbsStatsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(raw)


def test_a_counter_going_backwards_is_named() -> None:
    with pytest.raises(EbsStatsError, match=r"total_read_ops went backwards \(181000 -> 1000\)"):
        delta(parse(page(AFTER)), parse(page(BEFORE)))


def test_the_admin_command_asks_for_log_page_0xd0_in_4096_bytes() -> None:
    command = ebs_stats.get_log_page_command(0x1000)
    assert ctypes.sizeof(command) == 72  # struct nvme_admin_cmd
    assert (command.opcode, command.nsid, command.data_len, command.addr) == (0x02, 1, 4096, 0x1000)
    assert command.cdw10 == 0xD0 | (1023 << 16)
    # _IOWR('N', 0x41, struct nvme_admin_cmd): dir 3 << 30 | size << 16 | 'N' << 8 | 0x41
    assert (3 << 30) | (72 << 16) | (ord("N") << 8) | 0x41 == ebs_stats.NVME_IOCTL_ADMIN_CMD


class Device:
    def __init__(self, name: str, volume_id: Any = None) -> None:
        self.name = name
        self.volume_id = volume_id

    @property
    def path(self) -> str:
        return f"/dev/{self.name}"


def test_the_probe_reads_ebs_and_emulated_devices_and_skips_the_rest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pages = [parse(page(BEFORE)), parse(page(AFTER))]
    monkeypatch.setattr(ebs_stats, "read_ebs", lambda path: pages.pop(0))
    stat = tmp_path / "loop7" / "stat"
    stat.parent.mkdir()
    real_kernel = ebs_stats.read_kernel
    monkeypatch.setattr(ebs_stats, "read_kernel", lambda name: real_kernel(name, str(tmp_path)))
    stat.write_text("100 0 800 50 10 0 80 5 0 60 55 0 0 0 0\n")
    probe = VolumeProbe([Device("nvme1n1", "vol-0abc"), Device("loop7"), Device("nvme2n1")])
    before = probe.read()
    stat.write_text("3100 0 48800 9050 10 0 80 5 2 60 55 0 0 0 0\n")
    views: List[Dict[str, Any]] = probe.since(before)
    assert [v["device"] for v in views] == ["/dev/nvme1n1", "/dev/loop7"]  # instance store: skipped
    ebs, loop = views
    assert ebs["source"] == "nvme-log-page" and ebs["directions"]["read"]["ops"] == 180_000
    assert loop["source"] == "kernel-counters"
    assert loop["directions"]["read"] == {
        "ops": 3_000,
        "bytes": 48_000 * 512,
        "mean_latency_us": pytest.approx(3_000.0),  # 9,000 ms over 3,000 reads
        "histogram": None,
    }
    assert loop["throttled_s"] == dict.fromkeys(
        ("volume_iops", "volume_throughput", "instance_iops", "instance_throughput")
    )


def test_an_unreadable_volume_is_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: str) -> Any:
        raise EbsStatsError("the NVMe ioctl was refused and nvme-cli is not installed")

    monkeypatch.setattr(ebs_stats, "read_ebs", refuse)
    probe = VolumeProbe([Device("nvme1n1", "vol-0abc")])
    assert probe.since(probe.read()) == [
        {
            "device": "/dev/nvme1n1",
            "volume_id": "vol-0abc",
            "error": "the NVMe ioctl was refused and nvme-cli is not installed",
        }
    ]


def test_struct_sizes_match_the_layout() -> None:
    assert struct.calcsize("<II11Q") + 416 == 512
    assert 512 + 2 * (8 + 64 * 24) + 496 == 4096
    assert MAGIC == ebs_stats.EBS_MAGIC
