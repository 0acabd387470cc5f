"""The profile library, built from its data table and builders, is exactly what it was.

``tests/data/workloads/library.json`` was written from the library before it became data: every
profile's fields and parameters, and the phases each builds at its defaults on three kinds of
target at full and tiny scale. Regenerate it only for an intended change:
``python tests/unit/workloads/test_library_snapshot.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.workloads import library
from storagebench.workloads.profile import Profile, TargetContext, build_phases, variants

SNAPSHOT = Path(__file__).resolve().parents[2] / "data" / "workloads" / "library.json"
CONTEXTS = {
    "filesystem-ssd": TargetContext(mode="filesystem", media="ssd", expected_iops=16000, devices=1),
    "raw-hdd": TargetContext(mode="raw", media="hdd", expected_iops=500, devices=2),
    "filesystem-network": TargetContext(mode="filesystem", media="network"),
}


def _param(param: Any) -> dict[str, Any]:
    fields = {f.name: getattr(param, f.name) for f in dataclasses.fields(param) if f.name != "check"}
    fields["check"] = getattr(param.check, "__name__", None)
    return fields


def _profile(profile: Profile) -> dict[str, Any]:
    fields = {
        f.name: getattr(profile, f.name)
        for f in dataclasses.fields(profile)
        if f.name not in ("params", "build", "auto")
    }
    fields["params"] = [_param(p) for p in profile.params]
    fields["auto"] = sorted(profile.auto)
    built: dict[str, Any] = {}
    if not any(p.required for p in profile.params):
        for label, ctx in CONTEXTS.items():
            if profile.needs not in ("any", ctx.mode):
                continue
            for scale in (1.0, 0.01):
                built[f"{label}@{scale}"] = [
                    build_phases(profile, variant, ctx) for variant in variants(profile, {}, scale, ctx)
                ]
    fields["built"] = built
    return fields


def describe_library() -> list[dict[str, Any]]:
    return json.loads(json.dumps([_profile(p) for p in library.PROFILES.values()], default=list))


def test_the_library_is_what_it_was() -> None:
    assert describe_library() == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_a_misspelled_field_in_the_data_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {
        **library._DATA["fio"],
        "std-randread-4k": {**library._DATA["fio"]["std-randread-4k"], "iodeth": 4},
    }
    monkeypatch.setitem(library._DATA, "fio", rows)
    with pytest.raises(
        ValueError, match=r"\[fio.std-randread-4k\]: unknown field\(s\) iodeth; allowed: .*iodepth"
    ):
        library.fio_profile("std-randread-4k")


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(describe_library(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
