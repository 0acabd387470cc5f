"""Where local mode finds the EBS twin's compiled data path (``make setup`` builds it from native/twin)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from storagebench.planning.local import LocalOptions

NATIVE_TWIN = Path(__file__).resolve().parents[2] / ".tools" / "bin" / "storagebench-twin"


def with_native_twin(options: LocalOptions) -> LocalOptions:
    """The options with the compiled EBS twin where it is built and none is named yet; without it
    twins run on the Python data path, and every manifest says why (python_twin_reason)."""
    if options.twin_program is None and NATIVE_TWIN.is_file():
        return replace(options, twin_program=str(NATIVE_TWIN))
    return options
