"""Records measured on an emulated volume keep a history of their own, per emulator."""

from __future__ import annotations

import pytest

from storagebench.kinds import emulator_key


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        ([], ""),  # a real volume: the storage option as it always was
        (["burst", "fio:3.33"], ""),
        (["emulated:gp3:100GiB", "emulator:twin"], "+emulated=twin"),
        (["emulated:gp3:100GiB", "emulator:throttle"], "+emulated=throttle"),
        # written before the twin existed: the throttle was the only emulator
        (["emulated:gp3:100GiB"], "+emulated=throttle"),
        (["directory:unthrottled"], ""),
    ],
)
def test_the_emulator_is_part_of_the_history_key(labels: list[str], key: str) -> None:
    assert emulator_key(labels) == key


def test_a_target_served_by_both_emulators_names_both_in_a_stable_order() -> None:
    labels = ["emulator:twin", "emulated:gp3:100GiB", "emulator:throttle"]
    assert emulator_key(labels) == emulator_key(reversed(labels)) == "+emulated=throttle+emulated=twin"
