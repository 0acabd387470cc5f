"""``agent.pyz task`` driven against the fake AWS endpoint: its plan and its command line.

Stdlib only, like the agent's tests (they run on Python 3.9 too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from tests.support.fake_aws import FakeAws


def directory_plan(tmp_path: Path, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan of ``steps`` for run ``r-task``, config ``c1``, on one directory target ``main``
    (``tmp_path/target``), without pre-warming."""
    work = tmp_path / "target"
    work.mkdir(exist_ok=True)
    return {
        "plan_version": 1,
        "run_id": "r-task",
        "config_id": "c1",
        "targets": [{"id": "main", "kind": "directory", "path": str(work)}],
        "prewarm": {"method": "none"},
        "steps": steps,
    }


def task_arguments(
    fake: FakeAws,
    tmp_path: Path,
    plan: dict[str, Any],
    *,
    plan_path: str,
    output_uri: str,
    token_uri: str = "",
    token_sha256: str = "",
    **changes: Any,
) -> argparse.Namespace:
    """``task``'s arguments with ``plan`` served by the fake at ``plan_path`` (a presigned URL and the
    plan's digest), its output sent to ``output_uri``, its working folders under ``tmp_path``."""
    data = json.dumps(plan).encode()
    fake.files[plan_path] = data
    values = {
        "plan_url": f"{fake.url}{plan_path}?X-Amz-Signature=abc",
        "plan_sha256": hashlib.sha256(data).hexdigest(),
        "output_uri": output_uri,
        "task_token_uri": token_uri,
        "task_token_sha256": token_sha256,
        "heartbeat_s": 1,
        "region": "us-east-1",
        "out": str(tmp_path / "out"),
        "mount_root": str(tmp_path / "mnt"),
        "volumes_dir": str(tmp_path / "volumes"),
    }
    values.update(changes)
    return argparse.Namespace(**values)
