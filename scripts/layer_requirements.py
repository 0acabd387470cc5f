"""Write the Lambda layer's requirements from requirements.lock (``make layer-requirements``).

The layer ships three packages (below) and, pinned, everything they pull in, at the versions the
lock resolved for the development environment: what the tests ran against is what Lambda runs.
Which packages they pull in is read from their metadata in the development environment (installed
from the lock by ``make setup``), with the extras asked for and the markers evaluated for the Lambda
runtime (Python 3.13 on Linux arm64): urllib3 is in, its ``socks`` extra, which only selenium asks
for, is not. tests/unit/infrastructure/test_lock.py regenerates the file and fails when it differs.

    python scripts/layer_requirements.py [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
LAYER = REPO / "layers" / "storagebench" / "requirements.txt"

# What the layer needs, each with why (the comment lands in the generated file).
LAYER_PACKAGES: dict[str, str] = {
    "pydantic": "the request, event and result models",
    "aws-lambda-powertools[tracer]": "Logger, Tracer and Metrics in every handler",
    "boto3": "pinned over the runtime's: VolumeInitializationRate and the 2025 gp3 limits need a "
    "recent botocore",
}

# The runtime template.yaml gives the functions (python3.13, arm64), for environment markers.
LAMBDA_ENVIRONMENT = {
    "python_version": "3.13",
    "python_full_version": "3.13.0",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;]+)(?P<marker>\s*;.*)?$")


def canonical(name: str) -> str:
    """PEP 503 normalised name (``Typing_Extensions`` -> ``typing-extensions``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Locked:
    name: str
    version: str
    marker: str  # "sys_platform == 'win32'" or ""


class LockError(ValueError):
    """The lock or the environment does not hold what the layer needs; the message says what to run."""


def read_lock(text: str) -> dict[str, Locked]:
    """Every pinned package of a ``uv pip compile`` output, by canonical name."""
    packages: dict[str, Locked] = {}
    for line in text.splitlines():
        if pin := _PIN.match(line):
            marker = (pin["marker"] or "").strip().removeprefix(";").strip()
            packages[canonical(pin["name"])] = Locked(pin["name"], pin["version"], marker)
    return packages


Requires = dict[str, list[str]]  # canonical name -> its Requires-Dist lines


def installed_requires(names: set[str] | None = None) -> Requires:
    """Requires-Dist of the packages installed in this environment (the development one)."""
    found: Requires = {}
    for dist in metadata.distributions():
        name = canonical(dist.metadata["Name"])
        if names is None or name in names:
            found[name] = list(dist.requires or [])
    return found


def _applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(
        requirement.marker.evaluate({**LAMBDA_ENVIRONMENT, "extra": extra}) for extra in (extras or {""})
    )


def layer_closure(packages: dict[str, Locked], requires: Requires) -> list[Locked]:
    """The layer's packages and every package they require on Lambda (extras followed), name order."""
    pending = [Requirement(spec) for spec in LAYER_PACKAGES]
    wanted: dict[str, set[str]] = {}
    while pending:
        requirement = pending.pop()
        name = canonical(requirement.name)
        if name not in packages:
            raise LockError(f"requirements.lock has no {name} (the layer needs it): run make lock")
        if name in wanted and requirement.extras <= wanted[name]:
            continue
        extras = wanted.setdefault(name, set())
        extras |= set(requirement.extras)
        if name not in requires:
            raise LockError(f"{name} is not installed in this environment: run make setup")
        for line in requires[name]:
            nested = Requirement(line)
            if _applies(nested, extras):
                pending.append(nested)
    return sorted((packages[n] for n in wanted), key=lambda p: canonical(p.name))


def render(lock_text: str, requires: Requires | None = None) -> str:
    """The layer's requirements.txt for this lock (dependencies read from ``requires``, by default
    this environment's installed metadata)."""
    packages = read_lock(lock_text)
    closure = layer_closure(packages, installed_requires() if requires is None else requires)
    if requires is None:  # the metadata read must be the locked version's
        for package in closure:
            installed = metadata.version(package.name)
            if installed != package.version:
                raise LockError(
                    f"{package.name} {installed} is installed, the lock has {package.version}: run make setup"
                )
    roots = {canonical(Requirement(spec).name): spec for spec in LAYER_PACKAGES}
    lines = [
        "# Generated from requirements.lock by scripts/layer_requirements.py (make layer-requirements):",
        "# do not edit. The layer's packages, then what they pull in on Lambda, at the locked versions.",
    ]
    for package in [p for p in closure if canonical(p.name) in roots]:
        spec = roots[canonical(package.name)]
        lines.append(f"# {Requirement(spec).name}: {LAYER_PACKAGES[spec]}")
        extras = "".join(f"[{e}]" for e in sorted(Requirement(spec).extras))
        lines.append(f"{package.name}{extras}=={package.version}")
    lines.append("# required by the above")
    lines += [f"{p.name}=={p.version}" for p in closure if canonical(p.name) not in roots]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the layer's file is not up to date")
    args = parser.parse_args(argv)
    wanted = render(LOCK.read_text(encoding="utf-8"))
    if args.check:
        if LAYER.read_text(encoding="utf-8") != wanted:
            print(f"{LAYER.relative_to(REPO)} is out of date: run make layer-requirements", file=sys.stderr)
            return 1
        return 0
    LAYER.write_text(wanted, encoding="utf-8")
    print(f"wrote {LAYER.relative_to(REPO)} ({sum(1 for line in wanted.splitlines() if '==' in line)} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
