"""Pre-warm (initialise) block targets by reading every block of each member device.

Volumes restored from a snapshot fetch blocks lazily on first access; they are read end to
end before measuring, and the cold read is itself a result (duration, MiB/s). ``dd`` reads each
device at queue depth 1 (the classic command, with O_DIRECT so the page cache is neither
polluted nor measured); ``fio`` reads with 128 KiB requests at a queue depth of 32, which AWS
documents as the faster way. All member devices are read at once.

Targets the plan lists in ``prewarm.sampled`` (new, empty volumes, which AWS says need no
initialisation) get the cold-read check of ``agent.cold_read`` instead: a short sampled read.
"""

from __future__ import annotations

import os
from typing import List, Optional

from storagebench.agent.cold_read import sampled_read
from storagebench.agent.engines import PhaseContext, _start_all
from storagebench.agent.log import utc_now
from storagebench.agent.proc import CommandError
from storagebench.agent.targets import Prepared
from storagebench.protocol.manifest import STATUS_FAILED, STATUS_OK, PrewarmDevice, PrewarmResult
from storagebench.protocol.plan import Prewarm

MIB = 1 << 20
DEFAULT_BLOCK = {"dd": "1M", "fio": "128k"}  # the classic command; AWS's documented fio command


def prewarm_target(
    target: Prepared, config: Prewarm, output_dir: str, procs_file: Optional[str], is_root: bool
) -> PrewarmResult:
    if target.id in (config.get("sampled") or []):
        return sampled_read(target, config, output_dir, procs_file, is_root)
    method = config.get("method", "dd")
    directory = os.path.join(output_dir, "prewarm", target.id)
    os.makedirs(directory, exist_ok=True)
    result: PrewarmResult = {
        "target": target.id,
        "method": method,
        "mode": "full",
        "status": STATUS_OK,
        "error": None,
        "dir": os.path.relpath(directory, output_dir),
        "devices": [],
    }
    if not target.devices:
        result["status"] = "skipped"
        result["error"] = "not a block target: nothing to initialise"
        return result
    block_size = str(config.get("block_size") or DEFAULT_BLOCK[method])
    ctx = PhaseContext(target.path, "raw", None, directory, procs_file, is_root)
    argvs: List[List[str]] = []
    names: List[str] = []
    for device in target.devices:
        if method == "dd":
            argvs.append(["dd", f"if={device.path}", "of=/dev/null", f"bs={block_size}", "iflag=direct"])
            names.append(f"dd.{device.name}.stderr")
        else:
            argvs.append(
                [
                    "fio",
                    "--output-format=json",
                    f"--output={os.path.join(directory, f'fio.{device.name}.json')}",
                    "--name=volume-initialize",
                    f"--filename={device.path}",
                    "--rw=read",
                    f"--bs={block_size}",
                    f"--iodepth={int(config.get('iodepth', 32))}",
                    "--ioengine=libaio",
                    "--direct=1",
                ]
            )
            names.append(f"fio.{device.name}.stderr")
    with open(os.path.join(directory, "commands.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(" ".join(a) for a in argvs) + "\n")
    result["started_at"] = utc_now()
    try:
        finished, _ = _start_all(argvs, ctx, names, timeout_s=48 * 3600)
    except (CommandError, OSError) as exc:
        result["status"] = STATUS_FAILED
        result["error"] = str(exc)
        return result
    for device, done, name in zip(target.devices, finished, names):
        entry: PrewarmDevice = {
            "path": device.path,
            "bytes": device.size_bytes,
            "seconds": round(done.real_s, 6),
            "mibps": round(device.size_bytes / MIB / done.real_s, 3) if done.real_s > 0 else 0.0,
            "files": [name] + ([f"fio.{device.name}.json"] if method == "fio" else []),
        }
        result["devices"].append(entry)
        if done.rc != 0:
            result["status"] = STATUS_FAILED
            result["error"] = f"{method} read of {device.path} exited with status {done.rc}"
    result["ended_at"] = utc_now()
    return result


def prewarm_announcement(target: Prepared, config: Prewarm) -> str:
    """The progress line before a target's pre-warm read."""
    if target.id in (config.get("sampled") or []):
        return f"checking the cold read of {target.id}: sampled extents read cold, then warm, with dd"
    gib = sum(d.size_bytes for d in target.devices) / (1 << 30)
    return f"pre-warming {target.id} with {config.get('method', 'dd')}: reading {gib:.2f} GiB"


def prewarm_summary(result: PrewarmResult) -> str:
    """The progress line after it: MiB/s per device (cold against warm for the check)."""
    devices = result.get("devices") or []
    if result.get("mode") == "sampled":
        rates = ", ".join(
            f"cold {d.get('mibps', 0.0):.1f} MiB/s, warm {d.get('warm_mibps', 0.0):.1f} MiB/s"
            for d in devices
        )
        return f"cold-read check of {result['target']}: {rates or result.get('error') or 'nothing read'}"
    rates = ", ".join(f"{d.get('mibps', 0.0):.1f} MiB/s" for d in devices)
    return f"pre-warmed {result['target']}: {rates or result.get('error') or 'nothing read'}"
