"""The cold-read check: a short sampled dd read of a volume that is not read end to end.

AWS documents that empty EBS volumes deliver their full performance at once and that only
volumes created from a snapshot (or copies) need initialisation ("Initialize Amazon EBS
volumes"). Instead of assuming it, the agent measures it: evenly spaced extents
(``protocol.sample_layout``: ``sample_bytes`` per device, at most an eighth of it) are read once cold
and then once more (warm), each extent by its own ``dd iflag=direct skip=...`` (queue depth 1, the
page cache neither polluted nor measured), a device's extents in order from one shell per pass.
The manifest keeps dd's own seconds per extent (the read times) and each pass's time on the
agent's clock (its MiB/s). Member devices of a stripe read at once, as the full read reads them.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Dict, List, Optional, Tuple

from storagebench.agent.engines import PhaseContext, _start_all
from storagebench.agent.log import utc_now
from storagebench.agent.proc import CommandError
from storagebench.agent.targets import Prepared
from storagebench.protocol.manifest import (
    STATUS_FAILED,
    STATUS_OK,
    PrewarmDevice,
    PrewarmResult,
    SampledExtent,
)
from storagebench.protocol.plan import Prewarm
from storagebench.protocol.sample_layout import (
    DEFAULT_EXTENTS,
    DEFAULT_SAMPLE_BYTES,
    MIB,
    PASSES,
    SAMPLE_BLOCK,
    block_bytes,
    sample_layout,
)

PASS_TIMEOUT_S = 48 * 3600.0  # as the full read's: a pass reads at most an eighth of the volume
_COPIED = re.compile(r"(\d+) bytes? (?:\([^)]*\) )?copied,\s*(\d+(?:[.,]\d+)?(?:e[+-]?\d+)?)\s*s")
# One shell per device and pass reads its extents in order, one dd each: no Python between two
# extents, so the pass's clock holds the reads and little else. Arguments: device, block size,
# blocks per extent, then each extent's skip.
_PASS_SCRIPT = (
    'dev=$1; bs=$2; count=$3; shift 3; for skip in "$@"; do '
    'dd if="$dev" of=/dev/null bs="$bs" skip="$skip" count="$count" iflag=direct || exit $?; done'
)


def dd_seconds(stderr: str) -> List[float]:
    """dd's own time of each copy, in order (one summary per dd); the clock adds start-up."""
    found = _COPIED.findall(stderr)
    if not found:
        tail = stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise CommandError(f"dd printed no 'bytes copied' summary: {tail[0]}")
    return [float(seconds.replace(",", ".")) for _, seconds in found]


def _read_pass(
    target: Prepared,
    layouts: List[List[Tuple[int, int]]],
    name: str,
    block_text: str,
    ctx: PhaseContext,
    env: Dict[str, str],
) -> Tuple[List[List[float]], float]:
    """One pass: every member device reads its extents in order, the members at once. Returns dd's
    seconds per device and extent, and the pass's time on the agent's clock (dd start-up and the
    gaps between extents included: a throttle that lets an idle device catch up cannot inflate it)."""
    members = [m for m, layout in enumerate(layouts) if layout]
    argvs = [
        ["/bin/sh", "-c", _PASS_SCRIPT, "cold-read", target.devices[m].path, block_text]
        + [str(layouts[m][0][1])]
        + [str(skip) for skip, _ in layouts[m]]
        for m in members
    ]
    names = [f"dd.{target.devices[m].name}.{name}.stderr" for m in members]
    with open(os.path.join(ctx.phase_dir, f"commands.{name}.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(" ".join(shlex.quote(a) for a in argv) for argv in argvs) + "\n")
    finished, wall = _start_all(argvs, ctx, names, PASS_TIMEOUT_S, envs=[env] * len(argvs))
    seconds: List[List[float]] = [[] for _ in target.devices]
    for member, done, stderr_name in zip(members, finished, names):
        device = target.devices[member].path
        with open(os.path.join(ctx.phase_dir, stderr_name), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        if done.timed_out or done.rc != 0:
            last = text.strip().splitlines()[-1] if text.strip() else "no output"
            how = "timed out" if done.timed_out else f"exited with status {done.rc}"
            raise CommandError(f"{name} read of {device} {how}: {last}")
        seconds[member] = dd_seconds(text)
        if len(seconds[member]) != len(layouts[member]):
            raise CommandError(
                f"{name} read of {device}: {len(seconds[member])} dd summaries for "
                f"{len(layouts[member])} extents (see {stderr_name})"
            )
    return seconds, wall


def sampled_read(
    target: Prepared, config: Prewarm, output_dir: str, procs_file: Optional[str], is_root: bool
) -> PrewarmResult:
    """Read the sampled extents of every member device cold, then warm; per-extent dd times."""
    directory = os.path.join(output_dir, "prewarm", target.id)
    os.makedirs(directory, exist_ok=True)
    result: PrewarmResult = {
        "target": target.id,
        "method": "dd",
        "mode": "sampled",
        "status": STATUS_OK,
        "error": None,
        "dir": os.path.relpath(directory, output_dir),
        "devices": [],
    }
    if not target.devices:
        result["status"] = "skipped"
        result["error"] = "not a block target: nothing to sample"
        return result
    block_text = (
        str(config.get("block_size") or SAMPLE_BLOCK) if config.get("method") == "dd" else SAMPLE_BLOCK
    )
    try:
        block = block_bytes(block_text)
    except ValueError as exc:
        result["status"] = STATUS_FAILED
        result["error"] = f"prewarm.block_size: {exc}"
        return result
    sample = int(config.get("sample_bytes", DEFAULT_SAMPLE_BYTES))
    extents = int(config.get("sample_extents", DEFAULT_EXTENTS))
    layouts = [sample_layout(d.size_bytes, sample, extents, block) for d in target.devices]
    if not any(layouts):
        result["status"] = "skipped"
        result["error"] = f"every device is smaller than one {block_text} block: nothing to sample"
        return result
    ctx = PhaseContext(target.path, "raw", None, directory, procs_file, is_root)
    env = dict(os.environ, LC_ALL="C")  # dd's summary with a decimal point
    result["started_at"] = utc_now()
    try:
        timings = {name: _read_pass(target, layouts, name, block_text, ctx, env) for name in PASSES}
    except (CommandError, OSError) as exc:
        result["status"] = STATUS_FAILED
        result["error"] = str(exc)
        return result
    result["pass_seconds"] = {name: round(wall, 6) for name, (_, wall) in timings.items()}
    for member, device in enumerate(target.devices):
        layout = layouts[member]
        cold, warm = timings["cold"][0][member], timings["warm"][0][member]
        read = sum(count for _, count in layout) * block
        extents_done: List[SampledExtent] = [
            {"offset": skip * block, "bytes": count * block, "cold_s": c, "warm_s": w}
            for (skip, count), c, w in zip(layout, cold, warm)
        ]
        entry: PrewarmDevice = {
            "path": device.path,
            "bytes": device.size_bytes,
            "sampled_bytes": read,
            "block_bytes": block,
            "seconds": round(sum(cold), 6),
            "mibps": round(read / MIB / sum(cold), 3) if sum(cold) > 0 else 0.0,
            "warm_mibps": round(read / MIB / sum(warm), 3) if sum(warm) > 0 else 0.0,
            "extents": extents_done,
            "files": [f"dd.{device.name}.{name}.stderr" for name in PASSES],
        }
        result["devices"].append(entry)
    result["ended_at"] = utc_now()
    return result
