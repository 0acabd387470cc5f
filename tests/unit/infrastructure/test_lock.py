"""requirements.lock, pyproject.toml and the Lambda layer's requirements agree (`make lock`,
`make layer-requirements`): a pin changed in one place and not the others fails here."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from tests.support.modules import script

REPO = Path(__file__).resolve().parents[3]
LOCK = REPO / "requirements.lock"
LAYER = REPO / "layers" / "storagebench" / "requirements.txt"


def _script() -> ModuleType:
    return script("layer_requirements")


layer_requirements = _script()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += extra
    return [Requirement(line) for line in lines]


def locked() -> dict[str, str]:
    return {
        name: p.version for name, p in layer_requirements.read_lock(LOCK.read_text(encoding="utf-8")).items()
    }


def locked_for_the_project() -> set[str]:
    """The packages the lock says the project itself asks for (``# via storagebench (pyproject.toml)``)."""
    direct: set[str] = set()
    current = ""
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line):
            current = canonical(match[1])
        elif "storagebench (pyproject.toml)" in line:
            direct.add(current)
    return direct


def test_every_pyproject_requirement_is_locked_at_a_version_it_allows() -> None:
    versions = locked()
    for requirement in pyproject_requirements():
        name = canonical(requirement.name)
        assert name in versions, f"{name} is in pyproject.toml, not in requirements.lock: run make lock"
        assert requirement.specifier.contains(versions[name], prereleases=True), (
            f"pyproject.toml asks for {requirement}, requirements.lock has {versions[name]}: run make lock"
        )


def test_the_lock_asks_for_what_pyproject_asks_for_and_nothing_else() -> None:
    asked = {canonical(r.name) for r in pyproject_requirements()}
    assert locked_for_the_project() == asked, "pyproject.toml and requirements.lock differ: run make lock"


def test_the_cli_needs_no_extra_and_numpy_is_2() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {canonical(Requirement(r).name) for r in project["dependencies"]} >= {"typer", "rich", "pydantic"}
    assert project["optional-dependencies"]["cli"] == []  # kept so `.[cli,...]` still installs
    assert int(locked()["numpy"].split(".")[0]) >= 2  # pyarrow 26 imports numpy 2


def test_the_development_environment_is_the_locked_one() -> None:
    versions = locked()
    for name in ("pydantic", "typer", "rich", "boto3", "numpy", "pyarrow"):
        assert metadata.version(name) == versions[name], (
            f"{name}: installed differs from the lock: make setup"
        )


def test_the_layer_requirements_are_generated_from_the_lock() -> None:
    wanted = layer_requirements.render(LOCK.read_text(encoding="utf-8"))
    assert LAYER.read_text(encoding="utf-8") == wanted, (
        "layers/storagebench/requirements.txt differs from requirements.lock: run make layer-requirements"
    )
    pins = dict(line.split("==") for line in wanted.splitlines() if "==" in line)
    versions = locked()
    assert pins["pydantic"] == versions["pydantic"] == metadata.version("pydantic")
    assert "aws-lambda-powertools[tracer]" in pins and "boto3" in pins
    assert "pysocks" not in pins and "typer" not in pins  # selenium's urllib3[socks]; the CLI's own


def test_the_closure_follows_extras_and_lambda_markers(monkeypatch: pytest.MonkeyPatch) -> None:
    lock = "\n".join(["root==1.0", "dep==2.0", "extra-only==3.0", "windows-only==4.0", ""])
    requires = {
        "root": ["dep>=2", 'extra-only ; extra == "fast"', "windows-only ; sys_platform == 'win32'"],
        "dep": [],
        "extra-only": [],
        "windows-only": [],
    }
    packages = layer_requirements.read_lock(lock)

    def closure(*roots: str) -> list[str]:
        monkeypatch.setattr(layer_requirements, "LAYER_PACKAGES", dict.fromkeys(roots, "why"))
        return [p.name for p in layer_requirements.layer_closure(packages, requires)]

    assert closure("root") == ["dep", "root"]
    assert closure("root[fast]") == ["dep", "extra-only", "root"]
    with pytest.raises(layer_requirements.LockError, match="run make lock"):
        closure("absent")
