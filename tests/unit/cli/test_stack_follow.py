"""A run on a stack followed from the terminal: ``run --stack --wait``, ``cancel --stack`` and
``report --stack`` downloading through the presigned link.

The stack's API is scripted (``ScriptedApi`` stands in for the signed ``StackApi``, so the real
``stack_client.stack_api`` turns its error answers into exit codes); the recommendation it gives is
the real one (``recommend_stored_run``) over a realistic stored run; the report link points at an
HTTP server on 127.0.0.1, so the download is the real one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_terminal_width import IOPS, RUNS, request, run_item, stored
from typer.testing import CliRunner

from storagebench.adapters.aws import api_client
from storagebench.adapters.aws.api_client import ApiResponseError
from storagebench.cli import stack_runs
from storagebench.cli.main import app
from storagebench.costs.recommend_run import recommend_stored_run

RUN = RUNS[0]
POLL_S = 7.0
FINISHED = {"SUCCEEDED": "COLLECTED", "FAILED": "FAILED", "ABORTED": "FAILED"}


def not_found(run_id: str) -> ApiResponseError:
    return ApiResponseError(404, {"code": "run_not_found", "message": f"no run {run_id!r}", "details": []})


@dataclass
class ScriptedApi:
    """The stack's API answering GET /runs/{id} with one status after another (the last repeats)."""

    statuses: list[str] = field(default_factory=lambda: ["SUCCEEDED"])
    report_base: str = "http://127.0.0.1:9"
    calls: list[tuple[str, str, dict[str, Any] | None]] = field(default_factory=list)
    polls: int = 0

    def call(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        self.calls.append((method, path, query))
        parts = path.strip("/").split("/")
        if (method, path) == ("POST", "/runs"):
            return 201, {"run_id": RUN, "execution_arn": f"arn:aws:states:::execution:sb:{RUN}"}
        run_id = parts[1]
        if run_id not in RUNS:
            raise not_found(run_id)
        if method == "DELETE":
            return self._stop(run_id)
        if parts[2:] == ["recommendation"]:
            requires = [r for r in str((query or {}).get("require") or "").split(",") if r]
            return 200, recommend_stored_run(stored(run_id), requires).model_dump(mode="json")
        if parts[2:] == ["report"]:
            form = (query or {})["format"]
            return 200, {
                "run_id": run_id,
                "format": form,
                "url": f"{self.report_base}/runs/{run_id}/report.{form}?X-Amz-Signature=ab12",
                "expires_in_s": 3600,
            }
        return 200, self._detail(run_id)

    def _detail(self, run_id: str) -> dict[str, Any]:
        status = self.statuses[min(self.polls, len(self.statuses) - 1)]
        self.polls += 1
        config_status = FINISHED.get(status, "RUNNING")
        configs = [{"config_id": c, "status": config_status} for c in IOPS]
        return {"run_id": run_id, "status": status, "run": run_item(run_id, status), "configs": configs}

    def _stop(self, run_id: str) -> tuple[int, Any]:
        status = self.statuses[min(self.polls, len(self.statuses) - 1)]
        if status != "RUNNING":
            raise ApiResponseError(
                409,
                {
                    "code": "run_finished",
                    "message": f"run {run_id} is {status}: only a running run can be stopped",
                    "details": [],
                },
            )
        return 202, {"run_id": run_id, "execution_arn": "arn:x", "status": "STOPPING", "cleanup": "started"}

    def asked(self, method: str) -> list[str]:
        return [path for m, path, _ in self.calls if m == method]


@dataclass
class Pauses:
    """``stack_runs.time``: sleeps are recorded, not slept; the clock moves by each sleep."""

    slept: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def monotonic(self) -> float:
        return sum(self.slept)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> ScriptedApi:
    scripted = ScriptedApi()
    monkeypatch.setattr(api_client, "api_url_of_stack", lambda stack, session: f"https://{stack}.example")
    monkeypatch.setattr(api_client, "StackApi", lambda url, session, region: scripted)
    monkeypatch.setenv("COLUMNS", "80")
    return scripted


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> Pauses:
    recorded = Pauses()
    monkeypatch.setattr(stack_runs, "time", recorded)
    return recorded


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request()), encoding="utf-8")
    return path


def wait(suite: Path, *args: str) -> Any:
    command = ["run", "--stack", "sb", "--suite", str(suite), "--wait", "--poll-seconds", str(POLL_S)]
    return CliRunner().invoke(app, [*command, *args])


# ------------------------------------------------------------------------------ run --stack --wait


def test_waiting_polls_until_the_run_ends_and_exits_0_when_it_succeeded(
    api: ScriptedApi, pauses: Pauses, suite: Path
) -> None:
    api.statuses = ["RUNNING", "RUNNING", "SUCCEEDED"]
    result = wait(suite)
    assert result.exit_code == 0, result.output
    assert api.asked("POST") == ["/runs"]
    assert api.asked("GET") == [f"/runs/{RUN}"] * 3
    assert pauses.slept == [POLL_S, POLL_S]  # no sleep after the run ended
    progress = [line.split(maxsplit=2)[2] for line in result.stderr.splitlines() if " s  " in line]
    assert progress == [  # one line per change, not per poll
        "RUNNING: gp2 RUNNING, gp3 RUNNING, io1 RUNNING",
        "SUCCEEDED: gp2 COLLECTED, gp3 COLLECTED, io1 COLLECTED",
    ]
    assert f"run {RUN} started" in result.stderr
    assert f"run {RUN}: SUCCEEDED" in result.stdout.splitlines()
    assert f"run {RUN}: costs against gp3" in result.stdout  # its costs, as a local run ends
    assert "$12,345.67" in result.stdout
    assert "…" not in result.stdout + result.stderr


@pytest.mark.parametrize("ending", ["FAILED", "ABORTED", "PARTIAL"])
def test_a_run_that_did_not_succeed_exits_1(
    api: ScriptedApi, pauses: Pauses, suite: Path, ending: str
) -> None:
    api.statuses = ["RUNNING", ending]
    result = wait(suite)
    assert result.exit_code == 1, result.output
    assert api.asked("GET") == [f"/runs/{RUN}"] * 2 and pauses.slept == [POLL_S]
    assert f"run {RUN}: {ending}" in result.stdout.splitlines()


def test_require_is_judged_by_the_stacks_recommendation(
    api: ScriptedApi, pauses: Pauses, suite: Path
) -> None:
    api.statuses = ["RUNNING", "SUCCEEDED"]
    result = wait(suite, "--require", "std-randread-4k:iops>=50000")
    assert result.exit_code == 0, result.output
    (asked,) = [query for method, path, query in api.calls if path.endswith("/recommendation")]
    assert asked == {"require": "std-randread-4k:iops>=50000"}
    assert "gp3 at $12,345.67/month is the cheapest config meeting" in " ".join(result.stdout.split())


def test_require_met_by_no_config_exits_1(api: ScriptedApi, pauses: Pauses, suite: Path) -> None:
    result = wait(suite, "-r", "std-randread-4k:iops>=500000", "-r", "std-randread-4k:read:p95_ms<5")
    assert result.exit_code == 1, result.output
    (asked,) = [query for method, path, query in api.calls if path.endswith("/recommendation")]
    assert asked == {"require": "std-randread-4k:iops>=500000,std-randread-4k:read:p95_ms<5"}
    assert "no config meets every --require: exit 1" in result.stderr
    assert result.stdout.count("FAILS std-randread-4k:iops>=500000") == 3


def test_require_on_a_failed_run_asks_no_recommendation(
    api: ScriptedApi, pauses: Pauses, suite: Path
) -> None:
    api.statuses = ["FAILED"]
    result = wait(suite, "--require", "std-randread-4k:iops>=1")
    assert result.exit_code == 1
    assert not any(path.endswith("/recommendation") for _, path, _ in api.calls)


def test_waiting_with_json_prints_the_detail_and_the_recommendation(
    api: ScriptedApi, pauses: Pauses, suite: Path
) -> None:
    result = wait(suite, "--require", "std-randread-4k:iops>=50000", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stdout is the JSON alone: progress went to stderr
    assert document["status"] == "SUCCEEDED" and document["run_id"] == RUN
    assert document["recommendation"]["recommended"]["config_id"] == "gp3"
    assert "SUCCEEDED" in result.stderr


def test_a_requirement_that_cannot_be_read_starts_nothing(api: ScriptedApi, suite: Path) -> None:
    result = wait(suite, "--require", "std-randread-4k:iops=>1")
    assert result.exit_code == 2 and "did you mean >=" in result.stderr
    assert api.calls == []


# ------------------------------------------------------------------------------ cancel


def test_cancel_stops_the_run_with_delete(api: ScriptedApi) -> None:
    api.statuses = ["RUNNING"]
    result = CliRunner().invoke(app, ["cancel", RUN, "--stack", "sb"])
    assert result.exit_code == 0, result.output
    assert api.calls == [("DELETE", f"/runs/{RUN}", None)]
    assert result.stdout.strip() == f"run {RUN}: STOPPING, cleanup started"
    as_json = CliRunner().invoke(app, ["cancel", RUN, "--stack", "sb", "--json"])
    assert json.loads(as_json.stdout)["cleanup"] == "started"


@pytest.mark.parametrize(
    ("run_id", "statuses", "message"),
    [
        (RUN, ["SUCCEEDED"], f"409 run_finished: run {RUN} is SUCCEEDED"),
        ("local-demo-20261125T000000Z-000000", ["RUNNING"], "404 run_not_found"),
    ],
)
def test_cancel_refused_by_the_api_exits_2_saying_why(
    api: ScriptedApi, run_id: str, statuses: list[str], message: str
) -> None:
    api.statuses = statuses
    result = CliRunner().invoke(app, ["cancel", run_id, "--stack", "sb"])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split()) and result.stdout == ""


def test_cancel_needs_a_stack(api: ScriptedApi) -> None:
    result = CliRunner().invoke(app, ["cancel", RUN])
    assert result.exit_code == 2 and "--stack NAME" in result.stderr
    assert api.calls == []


# ------------------------------------------------------------------------------ report --stack


@pytest.fixture
def served_reports(api: ScriptedApi) -> Iterator[dict[str, bytes]]:
    """An HTTP server on 127.0.0.1 playing S3 behind the presigned links: path -> body, else 404."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            body = files.get(path)
            if body is None or "X-Amz-Signature=" not in query:
                self.send_error(404, "NoSuchKey")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api.report_base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield files
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_report_downloads_each_form_through_its_link(
    api: ScriptedApi, served_reports: dict[str, bytes], tmp_path: Path
) -> None:
    served_reports[f"/runs/{RUN}/report.html"] = b"<html>gp3 123,457 IOPS</html>"
    served_reports[f"/runs/{RUN}/report.md"] = b"# gp3\n"
    out_dir = tmp_path / "got"
    args = ["report", "--stack", "sb", RUN, "-f", "html", "-f", "markdown", "--out", str(out_dir), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [query for _, path, query in api.calls] == [{"format": "html"}, {"format": "md"}]
    assert (out_dir / "report.html").read_bytes() == b"<html>gp3 123,457 IOPS</html>"
    assert (out_dir / "report.md").read_bytes() == b"# gp3\n"
    files = json.loads(result.stdout)["files"]
    assert files == {"html": str(out_dir / "report.html"), "markdown": str(out_dir / "report.md")}


def test_report_defaults_to_every_form_under_reports_run(
    api: ScriptedApi, served_reports: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for extension in ("html", "md", "csv"):
        served_reports[f"/runs/{RUN}/report.{extension}"] = extension.encode()
    result = CliRunner().invoke(app, ["report", "--stack", "sb", RUN])
    assert result.exit_code == 0, result.output
    for extension in ("html", "md", "csv"):
        assert (tmp_path / "reports" / RUN / f"report.{extension}").read_bytes() == extension.encode()
    assert f"html: reports/{RUN}/report.html" in result.stdout.splitlines()


def test_a_link_answering_404_exits_1_naming_the_run(
    api: ScriptedApi, served_reports: dict[str, bytes], tmp_path: Path
) -> None:
    served_reports[f"/runs/{RUN}/report.html"] = b"<html></html>"  # the csv was never written
    args = ["report", "--stack", "sb", RUN, "-f", "html", "-f", "csv", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert f"downloading the csv report of run {RUN} failed: HTTP 404" in message
    assert not (tmp_path / "report.csv").exists()


def test_a_link_nobody_answers_exits_1_naming_the_run(api: ScriptedApi, tmp_path: Path) -> None:
    api.report_base = "http://127.0.0.1:9"  # the discard port: connection refused
    result = CliRunner().invoke(app, ["report", "--stack", "sb", RUN, "-f", "html", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert f"downloading the html report of run {RUN} failed" in " ".join(result.stderr.split())


def test_the_report_of_an_unknown_run_exits_2(api: ScriptedApi, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", "--stack", "sb", "nope", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "404 run_not_found: no run 'nope'" in result.stderr
    assert list(tmp_path.iterdir()) == []
