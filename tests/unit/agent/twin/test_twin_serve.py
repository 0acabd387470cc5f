"""The twin process's parts (agent.twin.serve): the parent's command protocol and the I/O handler."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from storagebench.agent.twin import serve
from storagebench.agent.twin.model import VolumeModel
from storagebench.agent.twin.serve import Control, Twin

KIB = 1 << 10
MIB = 1 << 20
FIXED_1MS = {"modes": [{"p50_ms": 1.0, "p99_ms": 1.0}]}  # sigma 0: every service time is 1 ms
LIMITS = {"iops": 1000, "mibps": 1000, "io_size_kib": 256}


class Pipe:
    """The parent's end of the twin's stdin, and the object Control reads (it needs fileno())."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()

    def fileno(self) -> int:
        return self.read_fd

    def send(self, text: str) -> None:
        os.write(self.write_fd, text.encode("ascii"))

    def close_writer(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def close(self) -> None:
        self.close_writer()
        os.close(self.read_fd)


@pytest.fixture
def backing(tmp_path: Path) -> Iterator[int]:
    path = tmp_path / "volume.img"
    with path.open("wb") as handle:
        handle.truncate(4 * MIB)
    fd = os.open(str(path), os.O_RDWR)
    yield fd
    os.close(fd)


@pytest.fixture
def twin(backing: int) -> Twin:
    return Twin(backing, VolumeModel(LIMITS, FIXED_1MS, seed=1), clock=lambda: 50.0)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    made = Pipe()
    yield made
    made.close()


# ---------------------------------------------------------------- Control


def sent(twin: Twin, pipe: Pipe, lines: str) -> Control:
    """The twin's control channel after it read ``lines`` (one poll)."""
    control = Control(twin, pipe)
    pipe.send(lines)
    control.poll()
    return control


def test_overhead_sets_the_paths_round_trip(twin: Twin, pipe: Pipe) -> None:
    control = sent(twin, pipe, "overhead 0.000123\n")
    assert twin.overhead_s == pytest.approx(0.000123)
    assert not control.stopped


@pytest.mark.parametrize(("argument", "kept"), [("-0.5", 0.0), ("0.25", 0.01), ("0.01", 0.01), ("0", 0.0)])
def test_overhead_is_clamped_to_0_to_10_ms(twin: Twin, pipe: Pipe, argument: str, kept: float) -> None:
    sent(twin, pipe, f"overhead {argument}\n")
    assert twin.overhead_s == kept


def test_a_malformed_overhead_answers_an_error_and_keeps_the_old_value(
    twin: Twin, pipe: Pipe, capsys: pytest.CaptureFixture[str]
) -> None:
    sent(twin, pipe, "overhead 0.0002\noverhead soon\n")
    assert twin.overhead_s == pytest.approx(0.0002)
    assert capsys.readouterr().out == "error overhead 'soon': seconds expected\n"


def test_delay_answers_unmodelled_io_that_late_until_the_model_starts(twin: Twin, pipe: Pipe) -> None:
    control = sent(twin, pipe, "delay 0.0003\n")
    due, _ = twin.handle(0, 4096, False, None, 10.0)
    assert due == pytest.approx(10.0003)
    pipe.send("delay 0\n")
    control.poll()
    assert twin.handle(0, 4096, False, None, 10.0)[0] == 10.0


def test_model_switches_the_model_on_and_starts_the_clock(twin: Twin, pipe: Pipe) -> None:
    control = Control(twin, pipe)
    assert (twin.modelling, twin.started) == (False, None)
    pipe.send("model\n")
    control.poll()
    assert twin.modelling
    assert twin.started == 50.0
    assert twin.cpu_started is not None


def test_an_unknown_command_answers_an_error_line(
    twin: Twin, pipe: Pipe, capsys: pytest.CaptureFixture[str]
) -> None:
    control = sent(twin, pipe, "faster please\n\n")
    expected = "error unknown command 'faster': overhead, delay, model, track or stop expected\n"
    assert capsys.readouterr().out == expected
    assert not control.stopped  # an empty line is ignored, a bad one does not stop the twin


def test_stop_and_end_of_input_stop(twin: Twin, pipe: Pipe) -> None:
    control = sent(twin, pipe, "stop\n")
    assert control.stopped
    other = Pipe()
    try:
        control = Control(twin, other)
        other.close_writer()  # the parent died
        control.poll()
        assert control.stopped
    finally:
        other.close()


def test_commands_split_across_reads_are_joined(twin: Twin, pipe: Pipe) -> None:
    control = sent(twin, pipe, "over")
    assert twin.overhead_s == 0.0
    pipe.send("head 0.0004\nmod")
    control.poll()
    assert twin.overhead_s == pytest.approx(0.0004)
    assert not twin.modelling
    pipe.send("el\n")
    control.poll()
    assert twin.modelling


def test_polling_an_empty_pipe_does_not_block(twin: Twin, pipe: Pipe) -> None:
    control = Control(twin, pipe)
    control.poll()  # nothing written yet: returns at once (the fd is non-blocking)
    assert not control.stopped


# ---------------------------------------------------------------- Twin.handle


def test_unmodelled_ios_are_answered_at_once_and_reach_the_backing_file(twin: Twin) -> None:
    data = memoryview(b"\x5a" * 4096)
    assert twin.handle(8192, 4096, True, data, 7.0) == (7.0, b"")
    assert twin.handle(8192, 4096, False, None, 7.5) == (7.5, b"\x5a" * 4096)
    assert twin.handle(0, 4096, False, None, 8.0) == (8.0, b"\0" * 4096)  # sparse: zeros
    assert (twin.modelled_ios, twin.model.admission.ios) == (0, 0)  # calibration is not modelled


def test_modelled_ios_are_due_at_admission_plus_service_minus_overhead(twin: Twin) -> None:
    twin.start_model()
    twin.overhead_s = 0.0002
    # Four reads arriving together at 1,000 IOPS: the bucket's two slots of tolerance admit three
    # at 10.000, the fourth at 10.001, then 1 ms of service, of which the path's own 0.2 ms is
    # already spent.
    due = [twin.handle(i * MIB, 4096, False, None, 10.0)[0] for i in range(4)]
    assert due == pytest.approx([10.0008, 10.0008, 10.0008, 10.0018], abs=1e-9)
    assert twin.modelled_ios == 4
    assert twin.clamped == 0


def test_service_shorter_than_the_overhead_is_clamped_and_counted(backing: int) -> None:
    fast = {"modes": [{"p50_ms": 0.1, "p99_ms": 0.1}]}
    twin = Twin(backing, VolumeModel(LIMITS, fast, seed=1))
    twin.start_model()
    twin.overhead_s = 0.0003
    due, _ = twin.handle(0, 4096, True, memoryview(b"\0" * 4096), 20.0)
    assert due == 20.0  # admitted at once, answered at once: never before its arrival
    assert twin.clamped == 1
    assert twin.state()["clamped_ios"] == 1


def test_state_reports_counters_credits_and_burst_events(backing: int) -> None:
    limits = {
        "iops": 100,
        "mibps": 100,
        "burst_iops": 1000,
        "burst_mibps": 100,
        "credit_capacity": 10,
        "credit_refill_per_s": 100,
        "credit_unit": "io",
    }
    now = [30.0]
    twin = Twin(backing, VolumeModel(limits, FIXED_1MS, seed=1), clock=lambda: now[0])
    twin.start_model()
    for i in range(12):  # 12 I/Os at one instant: the 10 credits run out at the 10th
        twin.handle(i * MIB, 4096, False, None, 30.5)
    now[0] = 32.0
    state = twin.state()
    assert (state["ios"], state["operations"], state["bytes"]) == (12, 12, 12 * 4096)
    assert state["modelled_s"] == 2.0
    assert state["credits_left"] == 0.0
    assert state["events"] == [
        {
            "elapsed_s": 0.5,
            "event": "burst-exhausted",
            "credits": 0.0,
            "ceiling_iops": 100.0,
            "ceiling_mibps": 100.0,
        }
    ]
    assert state["cpu_s"] >= 0
    json.dumps(state)  # the state line is JSON


def test_a_volume_without_credits_reports_none_left(twin: Twin) -> None:
    assert twin.state()["credits_left"] is None
    assert twin.state()["modelled_s"] == 0.0


# ---------------------------------------------------------------- the process's entry point


def run_main(argv: List[str], capsys: pytest.CaptureFixture[str]) -> Tuple[int, str]:
    code = serve.main(argv)
    return code, capsys.readouterr().out


def arguments(tmp_path: Path, spec: Any, backing: str = "volume.img") -> List[str]:
    return [
        "--backing",
        str(tmp_path / backing),
        "--mountpoint",
        str(tmp_path / "mnt"),
        "--capacity",
        str(MIB),
        "--spec",
        spec if isinstance(spec, str) else json.dumps(spec),
    ]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("{not json", "error spec: Expecting property name"),
        ({"latency": FIXED_1MS}, "error spec: 'limits'"),
        ({"limits": LIMITS, "latency": {"modes": []}}, "error spec: latency.modes: [], a non-empty list"),
        ({"limits": {"iops": 0, "mibps": 1}, "latency": FIXED_1MS}, "error spec: limits.iops: 0, a positive"),
    ],
)
def test_a_bad_spec_is_answered_with_the_reason_before_anything_is_mounted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: Any, said: str
) -> None:
    code, out = run_main(arguments(tmp_path, spec), capsys)
    assert code == 2
    assert out.startswith(said)
    assert not (tmp_path / "mnt").exists()


def test_a_missing_backing_file_is_answered_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_main(arguments(tmp_path, {"limits": LIMITS, "latency": FIXED_1MS}, "absent.img"), capsys)
    assert code == 3
    assert out.startswith("error ")
    assert "absent.img" in out and "No such file or directory" in out
    assert len(out.splitlines()) == 1  # one line the parent can quote, not a traceback
