"""The twin's I/O path is calibrated at the least of a few medians: a burst of load beside one round
does not shift every service time of the run (make test-busy: QD1 p50 0.51 ms against 0.60)."""

from __future__ import annotations

import pytest

from storagebench.agent.twin.volume import CALIBRATION_DELAY_S, CALIBRATION_ROUNDS, TwinVolume


def _volume(
    monkeypatch: pytest.MonkeyPatch, fio: list[float | None], direct: list[float]
) -> tuple[TwinVolume, list[str]]:
    told: list[str] = []
    volume = TwinVolume("/nonexistent/backing", "/nonexistent/mnt", 1 << 20, {})
    fio_rounds, direct_rounds = iter(fio), iter(direct)
    monkeypatch.setattr(volume, "command", told.append)
    monkeypatch.setattr(volume, "_fio_median", lambda _path: next(fio_rounds))
    monkeypatch.setattr(volume, "_direct_read_median", lambda _path: next(direct_rounds))
    return volume, told


def test_the_least_median_of_the_rounds_is_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded, quiet = CALIBRATION_DELAY_S + 150e-6, CALIBRATION_DELAY_S + 60e-6
    volume, told = _volume(monkeypatch, [loaded, quiet, loaded + 1e-6], [])
    assert CALIBRATION_ROUNDS == 3
    assert volume.calibrate("/dev/loop9") == pytest.approx(60e-6)
    assert volume.calibrated_by == "fio"
    assert told == [f"delay {CALIBRATION_DELAY_S:.6f}", "delay 0", f"overhead {60e-6:.9f}"]


def test_without_fio_direct_reads_calibrate_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    volume, _ = _volume(
        monkeypatch,
        [None] * 3,
        [CALIBRATION_DELAY_S + 90e-6, CALIBRATION_DELAY_S + 40e-6, CALIBRATION_DELAY_S + 70e-6],
    )
    assert volume.calibrate("/dev/loop9") == pytest.approx(40e-6)
    assert volume.calibrated_by == "direct reads"


def test_a_path_faster_than_the_delay_is_no_overhead(monkeypatch: pytest.MonkeyPatch) -> None:
    volume, _ = _volume(monkeypatch, [CALIBRATION_DELAY_S - 1e-6] * 3, [])
    assert volume.calibrate("/dev/loop9") == 0.0
