"""Plan pieces and output readers shared by the agent's integration tests (stdlib only)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

MIB = 1 << 20
GIB = 1 << 30


def emulated(volume_type: str, capacity_bytes: int, **limits: Any) -> dict[str, Any]:
    return {
        "volume_type": volume_type,
        "size_gib": float(limits.pop("size_gib", 100)),
        "capacity_bytes": capacity_bytes,
        "limits": {"io_size_kib": 256, **limits},
    }


def ebs_target(
    target_id: str, emulations: list[dict[str, Any]], filesystem: str = "raw", **extra: Any
) -> Any:
    return {
        "id": target_id,
        "kind": "ebs",
        "filesystem": filesystem,
        "count": len(emulations),
        "emulate": emulations,
        **extra,
    }


def fio_step(
    step_id: str, target: str, jobs: dict[str, dict[str, Any]], timeseries: bool = True, **global_options: Any
) -> dict[str, Any]:
    return {
        "id": step_id,
        "target": target,
        "repetition": 1,
        "phases": [
            {
                "name": "p",
                "engine": "fio",
                "timeout_s": 120,
                "fio": {
                    "timeseries": timeseries,
                    "global_options": {"ioengine": "libaio", "direct": 1, **global_options},
                    "jobs": [{"name": name, "options": options} for name, options in jobs.items()],
                },
            }
        ],
    }


def iops_log(path: Path) -> list[tuple[int, float]]:
    """(end of the 1 s window in ms, IOPS) from a fio ``*_iops.N.log``, reads and writes summed."""
    windows: dict[int, float] = {}
    for line in path.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) >= 2 and fields[0]:
            at = round(int(fields[0]) / 1000) * 1000  # 1001 and 1000 are the same window
            windows[at] = windows.get(at, 0.0) + float(fields[1])
    return sorted(windows.items())


@functools.cache
def python39() -> str | None:
    """Python 3.9 (Amazon Linux 2023's python3): pyenv's first, then PATH."""
    root = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv")))
    candidates = sorted(root.glob("versions/3.9.*/bin/python"), reverse=True)
    found = shutil.which("python3.9")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        probe = subprocess.run(
            [str(candidate), "-c", "import sys; print(sys.version_info[:2] == (3, 9))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.stdout.strip() == "True":
            return str(candidate)
    return None
