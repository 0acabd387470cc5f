"""Local mode has no Storage Gateway emulator: its Plan step refuses file_gateway configs, saying why."""

from __future__ import annotations

import json
from pathlib import Path

from storagebench.core.guardrails import Guardrails
from storagebench.planning.preview import preview_request
from storagebench.request import parse_request
from storagebench_local.session import LOCAL_NO_GATEWAY, LocalSession

EVENT = Path(__file__).resolve().parents[3] / "events" / "file-gateway-io1-vs-gp2.json"


def test_local_mode_refuses_file_gateway_whatever_guardrails_it_is_given(tmp_path: Path) -> None:
    given = Guardrails(max_run_cost_usd=10_000, max_run_hours=168)
    session = LocalSession(root=tmp_path, guardrails=given)
    assert session.guardrails.max_run_cost_usd == 10_000
    preview = preview_request(parse_request(json.loads(EVENT.read_text())), session.guardrails)
    kinds = [p for p in preview.problems if p.limit == "ProvisionableKinds"]
    assert [p.field for p in kinds] == ["configs[0].targets[0].kind", "configs[1].targets[0].kind"]
    assert LOCAL_NO_GATEWAY in kinds[0].message and "no Storage Gateway emulator" in kinds[0].message
