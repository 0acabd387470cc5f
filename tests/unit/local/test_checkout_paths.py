"""Local mode finds the checkout from its own files, whatever directory a test or ``make demo`` runs from."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench_local import dynamodb_local, lambda_endpoint, session, template

CHECKOUT = Path(__file__).resolve().parents[3]


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_session_repo_is_the_checkout(elsewhere: Path) -> None:
    assert session.REPO == CHECKOUT
    assert (session.REPO / "template.yaml").is_file()


def test_template_path_ignores_the_working_directory(elsewhere: Path) -> None:
    assert template.repo_template_path() == CHECKOUT / "template.yaml"


def test_dynamodb_local_root_is_in_the_checkout(elsewhere: Path) -> None:
    assert dynamodb_local.default_root() == CHECKOUT / ".storagebench"


def test_lambda_layer_root_holds_the_domain_package() -> None:
    assert lambda_endpoint._LAYER_ROOT == CHECKOUT / "layers" / "storagebench"
    assert (lambda_endpoint._LAYER_ROOT / "storagebench" / "__init__.py").is_file()
