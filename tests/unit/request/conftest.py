"""Request documents shared by the request tests: the study 1 example and a minimal valid base."""

from __future__ import annotations

import copy
from typing import Any

import pytest

STUDY1: dict[str, Any] = {
    "name": "gp2-vs-io1",
    "region": "us-east-1",
    "baseline": "io1",
    "configs": [
        {
            "id": "io1",
            "instance_type": "c5.4xlarge",
            "root_volume": {"type": "io1", "size_gib": 80, "iops": 4000},
            "targets": [{"kind": "ebs", "type": "io1", "size_gib": 512, "iops": 1500, "filesystem": "xfs"}],
        },
        {
            "id": "gp2",
            "instance_type": "c5.4xlarge",
            "root_volume": {"type": "gp2", "size_gib": 80},
            "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 512, "filesystem": "xfs"}],
        },
    ],
    "prewarm": {"method": "dd"},
    "workloads": [
        {"profile": "dd-seq-write-1m-dsync"},
        {"profile": "fio-randrw-4k-25read", "scale": 0.01},
    ],
    "repetitions": 3,
}

MINIMAL: dict[str, Any] = {
    "name": "t",
    "configs": [
        {
            "id": "a",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
        }
    ],
    "workloads": [{"profile": "std-randread-4k"}],
}


@pytest.fixture
def study1() -> dict[str, Any]:
    """A fresh copy of the study 1 request (tests may edit it)."""
    return copy.deepcopy(STUDY1)


@pytest.fixture
def minimal() -> dict[str, Any]:
    """A fresh copy of the smallest valid request (one gp3 target, one profile)."""
    return copy.deepcopy(MINIMAL)
