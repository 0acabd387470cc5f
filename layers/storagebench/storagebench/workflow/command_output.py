"""What the instance's SSM command said when it could not tell Step Functions itself.

Until the agent is verified, the document cannot report on the task token without running
unverified code: it fails the command with ``storagebench: step '<step>' failed: <why>`` on
stderr, which SSM stores under the command's output prefix when the command ends
(``<config prefix>ssm/<command id>/<instance id>/awsrunShellScript/<document step>/stderr``).
The workflow notices when the heartbeats it expects do not come, and reads that line so the
config's error names the step instead of a bare heartbeat timeout.
"""

from __future__ import annotations

import re
from pathlib import Path

STEP_LINE = re.compile(r"step '([^']{1,64})' failed: (.{0,500})")
MAX_READ = 64 * 1024


def failed_document_step(directory: Path) -> str | None:
    """The last ``step '...' failed: ...`` line of the newest command's stderr, if any."""
    found = sorted(directory.rglob("stderr"), key=lambda p: p.stat().st_mtime)
    for path in reversed(found):
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - MAX_READ))
            text = handle.read().decode("utf-8", "replace")
        for line in reversed(text.splitlines()):
            match = STEP_LINE.search(line)
            if match:
                return f"step '{match.group(1)}' failed: {match.group(2).strip()}"
    return None
