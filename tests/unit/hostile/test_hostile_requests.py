"""Hostile requests through the API handler and through ``storagebench run --api-url`` (issue 11).

Each case of ``hostile_cases`` goes to POST /runs as an unprivileged caller (the Lambda handler on
moto) and, as a request file, to the CLI against the same stack served over signed HTTP. For every
one: no traceback, no 5xx, the outcome the case expects (a refusal is a 4xx or exit 2 whose message
names the field), nothing started unless the case expects it, and no started run carrying shell.
The figures are asserted here and printed in pytest's summary (conftest).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pytest
import typer.testing
from hostile_cases import BASE, INJECTIONS, WHOLE, Case, all_cases, fields, instances, path_text, where
from tests.support.api_cli import Signed
from tests.support.api_events import Context, http_event
from tests.support.api_stack import REGION, Stack
from typer.testing import CliRunner

from storagebench.cli.main import app
from storagebench.core.guardrails import Guardrails
from storagebench.request import parse_request
from storagebench.request.privilege import privileged_content

CASES = all_cases()
# Every kind may be provisioned, and no cost or duration limit stands between a case and its start
GUARDRAILS = Guardrails(max_run_cost_usd=1_000_000, max_run_hours=168, unprovisionable_kinds={})


def names(message: str, field: str) -> bool:
    """The message names the field as a path of its own (``configs`` is not named by ``configs[0].id``)."""
    return re.search(rf"(^|[\s\[(,]){re.escape(field)}([:\s\],)]|$)", message) is not None


def _value_at(document: Any, field: str) -> Any:
    for _, path, node in instances(document):
        for key, value in node.items():
            if path_text((*path, key)) == field:
                return value
    raise KeyError(field)


class Tally:
    """What one channel saw; ``problems`` lists every case that did not get what it expects."""

    def __init__(self) -> None:
        self.figures: Counter[str] = Counter()
        self.problems: list[str] = []

    def check(
        self,
        case: Case,
        channel: Literal["api", "cli"],
        seen: str,
        message: str,
        named: str,
        started: list[dict[str, Any]],
    ) -> None:
        outcome, field = case.expected(channel)
        self.figures["tried"] += 1
        if "Traceback" in message:
            self.figures["tracebacks"] += 1
            self.problems.append(f"{case.name}: a traceback: {message[-300:]}")
        shell = [doc for doc in started if privileged_content(parse_request(doc))]
        self.figures["unprivileged_shell_launches"] += len(shell)
        if seen in ("refused", "privileged"):
            self.figures["refused"] += 1
            self.figures["refused_named"] += names(message, named)
        self.figures["started"] += seen == "started"
        self.figures["stored"] += seen == "started" and outcome == "stored"
        wanted = {"bound": {"started", "refused"}}.get(outcome, {"stored": "started"}.get(outcome, outcome))
        if seen not in wanted:
            self.problems.append(f"{case.name}: expected {outcome} at {field}, got {seen}: {message[:400]}")
        elif seen != "started" and not names(message, named):
            self.problems.append(f"{case.name}: the refusal does not name {named!r}: {message[:400]}")
        elif len(started) != (seen == "started"):
            self.problems.append(f"{case.name}: {len(started)} run(s) started, {seen}")
        elif outcome == "stored" and _value_at(started[0], field) != case.value:
            self.problems.append(f"{case.name}: {field} was not stored as given")

    def assert_clean(self, channel: str, figures: dict[str, dict[str, int]]) -> None:
        keys = ("tried", "refused", "refused_named", "started", "stored", "tracebacks", "5xx")
        figures[channel] = {**{k: self.figures[k] for k in keys}, **self.figures}
        shown = "\n".join(self.problems[:25])
        assert not self.problems, f"{len(self.problems)} of {self.figures['tried']} cases:\n{shown}"
        assert self.figures["tracebacks"] == self.figures["5xx"] == 0
        assert self.figures["unprivileged_shell_launches"] == 0
        assert self.figures["refused_named"] == self.figures["refused"] > 0


def _started(stack: Stack, before: int) -> list[dict[str, Any]]:
    documents = []
    for run_id in stack.launcher.started[before:]:
        execution = stack.launcher.describe(run_id)
        assert execution is not None
        documents.append(execution.input)
    return documents


def test_hostile_requests_through_the_api_handler(stack: Stack, hostile_figures: dict[str, Any]) -> None:
    stack.service.guardrails = GUARDRAILS
    tally = Tally()
    for case in CASES:
        try:
            case.body.decode("utf-8")
            event = http_event("POST", "/runs", body=case.body)
        except UnicodeDecodeError:  # API Gateway hands bytes that are not text on as base64
            event = http_event("POST", "/runs", body=case.body, base64_body=True)
        before = len(stack.launcher.started)
        try:
            response = stack.handler(event, Context())
        except Exception as exc:  # Lambda would answer 502 with the traceback in its log
            response = {"statusCode": 502, "body": f"Traceback: {type(exc).__name__}: {exc}"}
        status = int(response["statusCode"])
        raw = response.get("body") or ""
        text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
        if status >= 500:
            tally.figures["5xx"] += 1
        error = json.loads(text).get("error") if 400 <= status < 500 else None
        seen = "started" if status == 202 else f"status {status}"
        message = text
        if error is not None:
            seen = "privileged" if error["code"] == "privileged_request" else "refused"
            seen = seen if 400 <= status < 500 else f"status {status}"
            fields_named = " ".join(str(d["field"]) for d in error["details"])
            message = f"{error['code']}: {error['message']} [{fields_named}]"
        _, field = case.expected("api")
        tally.check(
            case, "api", seen, message, "(body)" if field == WHOLE else field, _started(stack, before)
        )
    tally.assert_clean("api", hostile_figures)


def test_hostile_request_files_through_the_cli_against_the_stack(
    stack: Stack,
    served: tuple[str, Signed],
    tmp_path: Path,
    hostile_figures: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # typer builds the click command from the app on every invoke (~40 ms): once serves all the cases
    monkeypatch.setattr(typer.testing, "_get_command", functools.cache(typer.testing._get_command))
    stack.service.guardrails = GUARDRAILS
    url, signed = served
    runner, tally = CliRunner(), Tally()
    for number, case in enumerate(CASES):
        suite = tmp_path / f"case-{number}.json"
        suite.write_bytes(case.body)
        before = len(stack.launcher.started)
        result = runner.invoke(
            app, ["run", "--suite", str(suite), "--api-url", url, "--region", REGION, "--json"]
        )
        output = result.stdout + result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            output += f"\nTraceback: {type(result.exception).__name__}: {result.exception}"
        seen = {0: "started", 2: "refused"}.get(result.exit_code, f"exit {result.exit_code}")
        if seen == "refused" and "403 privileged_runs_disabled" in result.stderr:
            seen = "privileged"
        _, field = case.expected("cli")
        named = str(suite) if field == WHOLE else field
        message = " ".join(output.split())
        tally.check(case, "cli", seen, message, " ".join(named.split()), _started(stack, before))
    assert signed.problems == []
    tally.assert_clean("cli", hostile_figures)


def test_every_field_of_the_request_schema_is_attacked() -> None:
    """New fields are enumerated from the schema: each string field gets every injection, and
    every model of the schema has an instance in BASE to carry them."""
    names = {case.name for case in CASES}
    for model, prop, _ in fields():
        path, _ = where(model, prop)  # fails naming the model when BASE holds none
        at = path_text((*path, prop))
        attacked = [n for n in names if n.endswith(f":{at}") or f":{at}[" in n or f":{at}." in n]
        assert attacked, f"nothing attacks {model}.{prop} ({at})"
    assert len(CASES) >= 200
    assert sum(c.outcome == "stored" for c in CASES) == 2 * len(INJECTIONS)  # the two descriptions
    assert parse_request(BASE) and not privileged_content(parse_request(BASE))


@pytest.mark.parametrize("case", [c for c in CASES if c.outcome == "privileged"], ids=lambda c: c.name)
def test_privileged_cases_are_shell_by_the_policy(case: Case) -> None:
    """The oracle agrees with the policy: what a case calls privileged is, by privileged_content."""
    paths = [p.path for p in privileged_content(parse_request(json.loads(case.body)))]
    assert case.field in paths
