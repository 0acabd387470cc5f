"""Local mode stands in for a File Gateway when this machine can run its NFS server and client;
otherwise its Plan step refuses file_gateway configs, saying what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails
from storagebench.planning.preview import preview_request
from storagebench.request import parse_request
from storagebench_local import session as local_session
from storagebench_local.session import LocalSession

EVENT = Path(__file__).resolve().parents[3] / "events" / "file-gateway-io1-vs-gp2.json"


def _kind_problems(session: LocalSession) -> list[Any]:
    preview = preview_request(parse_request(json.loads(EVENT.read_text())), session.guardrails)
    return [p for p in preview.problems if p.limit == "ProvisionableKinds"]


def test_file_gateway_configs_are_planned_when_the_stand_in_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_session, "gateway_unavailable", lambda: None)
    given = Guardrails(max_run_cost_usd=10_000, max_run_hours=168)  # refuses file_gateway: no stack settings
    assert "file_gateway" in given.unprovisionable_kinds
    session = LocalSession(root=tmp_path, guardrails=given)
    assert session.guardrails.max_run_cost_usd == 10_000
    assert "file_gateway" not in session.guardrails.unprovisionable_kinds
    assert _kind_problems(session) == []


def test_file_gateway_configs_are_refused_naming_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = "ganesha.nfsd is missing (make setup installs nfs-ganesha and nfs-ganesha-vfs)"
    monkeypatch.setattr(local_session, "gateway_unavailable", lambda: missing)
    session = LocalSession(root=tmp_path, guardrails=Guardrails(max_run_cost_usd=10_000, max_run_hours=168))
    kinds = _kind_problems(session)
    assert [p.field for p in kinds] == ["configs[0].targets[0].kind", "configs[1].targets[0].kind"]
    assert missing in kinds[0].message and "cannot stand in for a File Gateway" in kinds[0].message
