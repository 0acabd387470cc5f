"""The SSM document in template.yaml is what a local instance runs: edit one line, the run changes.

A run through ``LocalSession`` sends the template's AgentDocument with ``SsmAgents``; the local
SSM agent runs its shell on a local instance, which fetches and verifies the agent from the local
S3 endpoint; the agent uploads the output and calls back with credentials from the instance's
metadata service. The edit writes a line to the command's stderr, which SSM stores in S3.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.session import REPO, TOOLS, LocalSession

MARKER_LINE = "exec python3 agent.pyz task "
EDIT = 'echo "edited document" >&2\n                  ' + MARKER_LINE


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "local instances run as root (mount namespaces)"
    for tool in (TOOLS / "bin" / "ec2-metadata-mock",):
        if not tool.exists():
            return f"{tool} missing (make setup)"
    if shutil.which("fio") is None or shutil.which("unshare") is None:
        return "fio and unshare are needed"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def request(directory: Path) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    return {
        "name": "document-runs",
        "configs": [
            {
                "id": "dir",
                "instance_type": "c5.large",
                "targets": [{"kind": "local", "id": "main", "path": str(directory)}],
            }
        ],
        "prewarm": {"method": "none"},
        "workloads": [{"profile": "std-randread-4k", "scale": 0.01}],
        "repetitions": 1,
        "timing": {"ready_poll_s": 1, "command_poll_s": 3},
    }


@pytest.fixture
def edited_template() -> Iterator[Path]:
    """A copy of template.yaml beside it (its CodeUri paths are relative) with one line added."""
    text = (REPO / "template.yaml").read_text(encoding="utf-8")
    assert text.count(MARKER_LINE) == 1, "the document's output line moved: update this test"
    copy = REPO / f".template-edited-{uuid.uuid4().hex[:8]}.yaml"
    copy.write_text(text.replace(MARKER_LINE, EDIT), encoding="utf-8")
    try:
        yield copy
    finally:
        copy.unlink()


def run(root: Path, template: Path, directory: Path) -> tuple[str, Path, str]:
    """The run's status, its artifacts directory and the SSM command's stderr (from the bucket)."""
    with LocalSession(root, use_dynamodb_local=False, template=template) as session:
        execution = session.run(request(directory))
        assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
        assert session.leaks(execution.run_id) == []
        assert session.services is not None
        prefix = session.instance_prefix(execution.run_id, "dir")
        assert prefix is not None
        ssm = session.services.artifacts.fetch(f"{prefix}ssm/")
        stderr = "".join(p.read_text() for p in sorted(ssm.rglob("stderr")))
    status = execution.output["status"] if execution.output else ""
    return status, root / "artifacts" / "runs" / execution.run_id, stderr


def test_the_document_is_what_runs(tmp_path: Path, edited_template: Path) -> None:
    status, artifacts, stderr = run(tmp_path / "as-shipped", REPO / "template.yaml", tmp_path / "d1")
    assert status == "SUCCEEDED"
    # uploaded by the agent the document ran, into its instance's own prefix
    assert len(list(artifacts.glob("dir/instances/*:i-*/agent/manifest.json"))) == 1
    assert "edited document" not in stderr

    status, artifacts, stderr = run(tmp_path / "edited", edited_template, tmp_path / "d2")
    assert status == "SUCCEEDED"
    assert "edited document" in stderr
