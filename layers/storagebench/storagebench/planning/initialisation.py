"""What the pre-warm step does with each target of a config: read it end to end, or check its cold read.

One home for the rule of ``request.prewarm`` so the agent plan (``planning.plan``) and the duration
estimate (``planning.duration``) never disagree: a target the kind pre-warms (EBS) is read end to
end when ``volumes`` is ``all``, or ``restored`` and the volume needs its blocks read
(``StorageKind.initialisation`` ``read``: restored from a snapshot at the default, lazy rate); every
other such target gets the sampled cold-read check, unless the check is off (``sample_gib: 0``).
``method: none`` reads nothing.
"""

from __future__ import annotations

from typing import Literal

from storagebench.kinds import kind_of
from storagebench.request.model import Config
from storagebench.request.prewarm import Prewarm

GIB = 1 << 30

PrewarmRead = Literal["full", "sampled"]


def prewarm_reads(prewarm: Prewarm, config: Config) -> dict[str, PrewarmRead]:
    """Target id -> how the pre-warm step reads it, in the config's order; targets not read are absent."""
    if prewarm.method == "none":
        return {}
    reads: dict[str, PrewarmRead] = {}
    for target in config.targets:
        kind = kind_of(target)
        if not kind.prewarmed or target.id is None:
            continue
        need = kind.initialisation(target)
        if prewarm.volumes == "all" or (prewarm.volumes == "restored" and need == "read"):
            reads[target.id] = "full"
        elif prewarm.checks_cold_reads:
            reads[target.id] = "sampled"
    return reads


def sample_bytes(prewarm: Prewarm) -> int:
    """The check's bytes per volume before the agent's cap (an eighth of the volume)."""
    return int(prewarm.sample_gib * GIB)
