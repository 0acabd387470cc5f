"""What a ``command`` workload needs on the instance: programs on its PATH and absolute paths.

A pipeline such as ``cellranger count`` needs its program and its data there before it starts;
nothing in storagebench installs them. The request names them in the workload's ``requires``
(``"cellranger /data/refdata-gex-GRCh38 /data/fastqs"``) so that validation can refuse a config
that cannot have them (``request.command_needs``) and the agent checks them before it runs the
command (a missing one fails the step naming it, instead of the command's own exit status).
"""

from __future__ import annotations

import re

__all__ = ["REQUIRES_HELP", "check_requires", "parse_requires"]

_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_PATH = re.compile(r"/[A-Za-z0-9._+@%=,:/-]{0,1023}")
MAX_REQUIRED = 32
REQUIRES_HELP = (
    "programs (found on PATH) and absolute paths the command needs, separated by spaces or commas, "
    "e.g. 'cellranger /data/refdata-gex-GRCh38': validation refuses a config whose stock image "
    "cannot have them and whose setup hook does not name them; the agent checks them before the command"
)


def parse_requires(text: str) -> list[str]:
    """The names in ``text`` in order, duplicates dropped (``check_requires`` has accepted it)."""
    return list(dict.fromkeys(item for item in re.split(r"[\s,]+", text) if item))


def check_requires(text: str) -> None:
    """Raise ValueError naming the first entry that is neither a program name nor an absolute path."""
    items = parse_requires(text)
    if not items:
        raise ValueError("name at least one program or absolute path")
    if len(items) > MAX_REQUIRED:
        raise ValueError(f"at most {MAX_REQUIRED} entries, got {len(items)}")
    for item in items:
        pattern = _PATH if item.startswith("/") else _PROGRAM
        if not pattern.fullmatch(item) or "/../" in f"{item}/":
            raise ValueError(
                f"{item!r} is neither a program name (letters, digits, . _ + -) nor an absolute path "
                "without .. (/data/fastqs)"
            )


def is_path(item: str) -> bool:
    return item.startswith("/")
