"""Build the stdlib-only agent as a single zipapp (what the SSM document runs on instances).

The build itself lives in ``storagebench.adapters.agent_bundle`` (the AWS adapter uploads the
same bytes to ``agent/<version>/<sha256>.pyz``); it is reproducible, so the SHA-256 printed
here is the one a deployed stack uses for the same source.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "layers" / "storagebench"))

from storagebench.adapters.agent_bundle import build


def main(argv: list[str]) -> int:
    target = build(Path(argv[1] if len(argv) > 1 else "dist/storagebench-agent.pyz"))
    print(target)
    print(f"sha256 {hashlib.sha256(target.read_bytes()).hexdigest()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
