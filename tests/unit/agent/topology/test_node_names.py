"""A node's machine-wide names carry its role and index, and the sweep of its config finds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.agent import sweep
from storagebench.protocol.topology import node_label


def topology(role: str, index: int) -> dict:  # type: ignore[type-arg]
    return {
        "self": {"role": role, "index": index},
        "machines": [
            {"role": "client", "index": 0, "ip": "10.0.0.5"},
            {"role": "client", "index": 1, "ip": "10.0.0.6"},
            {"role": "server", "index": 0, "ip": "10.0.0.7"},
        ],
    }


def test_only_nodes_get_a_label() -> None:
    assert node_label(None) is None
    assert node_label(topology("client", 0)) is None  # type: ignore[arg-type]
    assert node_label(topology("client", 1)) == "client-1"  # type: ignore[arg-type]
    assert node_label(topology("server", 0)) == "server-0"  # type: ignore[arg-type]


def test_the_sweep_of_a_config_finds_its_nodes_cgroups_and_no_other_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "blkio"
    for name in ("storagebench:r1:c1", "storagebench:r1:c1:server-0", "storagebench:r1:c10", "other"):
        (root / name).mkdir(parents=True)
    monkeypatch.setattr(sweep, "V1_ROOT", str(root))
    monkeypatch.setattr(sweep, "V2_ROOTS", ())
    found = sweep.resources_of("r1", str(tmp_path / "mnt"), str(tmp_path / "vol"), "c1")["cgroups"]
    assert sorted(Path(c).name for c in found) == ["storagebench:r1:c1", "storagebench:r1:c1:server-0"]
