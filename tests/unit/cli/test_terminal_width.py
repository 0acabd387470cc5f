"""Every CLI listing at 80 and 140 columns: no number or run id cut into ``…``, every run id whole,
no line wider than the terminal. Fake stores and a fake stack API hold realistic data (long run
ids, six-digit IOPS, thousands of dollars)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_backends import serve_local_store, serve_stack_api
from tests.support.records import emulated, latency, result_record, stored_result
from typer.testing import CliRunner

from storagebench.api.run_view import run_view
from storagebench.cli import recommend_cmd, report_cmd, results_cmd
from storagebench.cli.listing import FORMATS
from storagebench.cli.main import app
from storagebench.costs.recommend_run import recommend_stored_run

EVENTS = Path(__file__).resolve().parents[3] / "events"
SUITE = "local-demo"
RUNS = ["local-demo-20261125T165801Z-3f9c2a", "local-demo-20261124T020000Z-7d01be"]
ACTIVE_RUN = "local-demo-20261125T171500Z-0c4e11"
IOPS = {"gp2": 3012.4, "gp3": 123456.7, "io1": 98765.4}
OPTIONS = {c: f"c5.4xlarge/ebs:{c}:100GiB:xfs" for c in IOPS}
WIDTHS = (80, 140)


def request() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    return document


SPREAD = {"samples": 3_703_701, "mean_us": 1234.5, "stdev_us": 87.6, "min_us": 12.0}


def records(run_id: str) -> list[dict[str, Any]]:
    found = []
    for config_id, iops in IOPS.items():
        for repetition, factor in ((1, 1.0), (2, 1.013)):
            lat = latency(2121.4 * factor, **SPREAD, max_us=98765.0, p99_us=12345.6)
            rates = {"iops": iops * factor, "bw_mibps": iops * factor * 4 / 1024}
            record = result_record(
                config_id=config_id, repetition=repetition, **rates, bytes=1 << 34, latency=lat
            )
            labels = {"storage_option": OPTIONS[config_id], "suite": SUITE}
            stored = stored_result(emulated(record), labels)
            found.append({"run_id": run_id, **stored, "started_at": "2026-11-25T16:58:01Z"})
    return found


def run_item(run_id: str, status: str = "SUCCEEDED") -> dict[str, Any]:
    economics = {
        "baseline": "gp3",
        "price_source": "snapshot",
        "price_date": "2026-11-21",
        "run_cost_usd": 1234.5678,
        "configs": [
            {
                "id": c,
                "monthly_usd": 12345.67,
                "delta_monthly_pct": 152.4,
                "run_usd": 1234.56,
                "cost_partial": c == "io1",
                "verdict": "52 % more expensive; 4.0x faster on 1 MiB sequential read, throughput-bound",
            }
            for c in IOPS
        ],
    }
    stamp = run_id.split("-")[2]
    started = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
    return {
        "run_id": run_id,
        "suite": SUITE,
        "status": status,
        "started_at": started,
        "ended_at": None if status == "RUNNING" else "2026-11-25T17:01:02Z",
        "configs": list(IOPS),
        "records": 123456,
        "request": request(),
        "economics": economics,
        "regression_counts": {"regression": 12, "improvement": 3},
    }


def stored(run_id: str) -> dict[str, Any]:
    configs = [
        {"run_id": run_id, "config_id": c, "status": "SUCCEEDED", "updated_at": "2026-11-25T17:01:02Z"}
        for c in IOPS
    ]
    return {"run": run_item(run_id), "configs": configs, "results": records(run_id)}


class FakeStore:
    """The local results (DynamoDB Local in real use)."""

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
        if run_id not in RUNS:
            raise KeyError(run_id)
        return stored(run_id)

    def get_regressions(self, run_id: str) -> list[dict[str, Any]]:
        return []

    def list_runs(self, suite: str, limit: int = 10) -> list[dict[str, Any]]:
        return [run_item(r) for r in RUNS][:limit] if suite == SUITE else []

    def runs_in_progress(self, limit: int = 100) -> list[dict[str, Any]]:
        return [run_item(ACTIVE_RUN, "RUNNING")]

    def metric_history(self, storage: str, workload: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        config = next((c for c, o in OPTIONS.items() if o == storage), None)
        if config is None or workload != "std-randread-4k" or args[2] != "read":
            return []
        return [
            {**point, "repetition": point["record"]["repetition"]}
            for run_id in RUNS
            for point in records(run_id)
            if point["config_id"] == config
        ]


class FakeApi:
    """The stack's API, answering as api/routes.py does."""

    def call(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        headers: Any = None,
    ) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if (method, path) == ("POST", "/runs"):
            return 201, {"run_id": RUNS[0], "execution_arn": f"arn:aws:states:::execution:sb:{RUNS[0]}"}
        if method == "DELETE":
            return 202, {
                "run_id": parts[1],
                "execution_arn": "arn:x",
                "status": "STOPPING",
                "cleanup": "started",
            }
        if path == "/runs":
            runs = (
                [run_item(r) for r in RUNS]
                if (query or {}).get("suite")
                else [run_item(ACTIVE_RUN, "RUNNING")]
            )
            return 200, {"suite": (query or {}).get("suite"), "runs": runs, "next_cursor": None}
        if path == "/results":
            points = FakeStore().metric_history(query["storage"], query["workload"], "-", "run", "read")  # type: ignore[index]
            return 200, {
                "storage": query["storage"],
                "workload": query["workload"],
                "points": points,
                "next_cursor": None,
            }  # type: ignore[index]
        if len(parts) == 3 and parts[2] == "recommendation":
            requires = [r for r in str((query or {}).get("require") or "").split(",") if r]
            return 200, recommend_stored_run(stored(parts[1]), requires).model_dump(mode="json")
        if len(parts) == 3 and parts[2] == "report":
            return 200, {
                "run_id": parts[1],
                "format": "html",
                "url": "https://bucket.s3.amazonaws.com/r?X-Amz-Signature=ab",
                "expires_in_s": 3600,
            }
        run_id = parts[1]  # GET /runs/{id}: the run view of the stored run, as the API answers it
        return 200, run_view(run_id, stored(run_id)).model_dump(mode="json")


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    serve_local_store(monkeypatch, FakeStore, results_cmd, recommend_cmd, report_cmd)
    serve_stack_api(monkeypatch, FakeApi)
    for run_id in [*RUNS, ACTIVE_RUN]:
        (tmp_path / ".storagebench" / "artifacts" / "runs" / run_id).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "request.json").write_text(json.dumps(request()), encoding="utf-8")


LISTINGS: dict[str, list[str]] = {
    "latest runs": ["results"],
    "a suite": ["results", "--suite", SUITE],
    "in progress": ["results", "--active"],
    "a run": ["results", "--run", RUNS[0]],
    "history by name": ["results", "--config", "gp3", "--workload", "std-randread-4k", "--suite", SUITE],
    "history by key": ["results", "--storage", OPTIONS["io1"], "--workload", "std-randread-4k"],
    "stack runs": ["results", "--stack", "sb", "--suite", SUITE],
    "stack run": ["results", "--stack", "sb", "--run", RUNS[0]],
    "stack history": [
        "results",
        "--stack",
        "sb",
        "--config",
        "gp2",
        "--workload",
        "std-randread-4k",
        "--run",
        RUNS[1],
    ],
    "workloads": ["workloads"],
    "validate": ["validate", "--suite", "request.json"],
    "cost": ["cost", "--suite", "request.json", "--expected", "--hours", "720"],
    "prices": ["prices", "show", "--region", "us-east-1"],
    "recommend": ["recommend", "--run", RUNS[0], "--require", "std-randread-4k:iops>=50000"],
    "recommend, none meets": [
        "recommend",
        "--run",
        RUNS[1],
        "-r",
        "std-randread-4k:iops>=500000",
        "-r",
        "std-randread-4k:read:p95_ms<1.5",
    ],
    "recommend from history": ["recommend", "--suite", "request.json", "-r", "std-randread-4k:iops>=50000"],
    "stack recommend": ["recommend", "--stack", "sb", "--run", RUNS[0], "-r", "std-randread-4k:iops>=50000"],
    "stack wait": [
        "run",
        "--stack",
        "sb",
        "--suite",
        "request.json",
        "--wait",
        "--require",
        "std-randread-4k:iops>=50000",
    ],
    "local dry run": ["run", "--local", "--dry-run", "--suite", "request.json"],
    "cancel": ["cancel", RUNS[0], "--stack", "sb"],
    "report link": ["report", "--stack", "sb", RUNS[0], "--link", "--format", "html"],
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(LISTINGS))
def test_listing_fits_the_terminal_without_cutting_anything(name: str, width: int) -> None:
    result = CliRunner().invoke(app, LISTINGS[name], env={"COLUMNS": str(width)})
    assert result.exit_code in (0, 1), result.output
    text = result.stdout + result.stderr
    assert "…" not in text
    table_lines = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│├└"]
    assert max(map(len, table_lines), default=0) <= width
    for run_id in [*RUNS, ACTIVE_RUN]:  # any part of an id shown (its random suffix) means all of it
        if run_id[-6:] in text:
            assert run_id in text, f"{run_id} cut: {text}"


def test_the_numbers_are_whole() -> None:
    result = CliRunner().invoke(app, ["results", "--run", RUNS[0]], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "124,259" in result.stdout  # the mean of gp3's IOPS (123,456.7 and 1.3 % more)
    assert "$1,234.57" in result.stdout  # the run's cost


def test_latest_runs_list_every_suite_newest_first() -> None:
    result = CliRunner().invoke(app, ["results", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["run"] for r in rows] == [ACTIVE_RUN, *RUNS]


@pytest.mark.parametrize("flag", [[], ["--history"]])
def test_a_history_by_name_resolves_the_storage_option(flag: list[str]) -> None:
    args = ["results", *flag, "--config", "gp3", "--workload", "std-randread-4k", "--format", "csv"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert OPTIONS["gp3"] in result.stderr
    header, *lines = result.stdout.splitlines()
    assert header == "started,run,config,rep,dir,IOPS,MiB/s,p95 ms"
    assert len(lines) == 4 and all(",gp3," in line for line in lines)


@pytest.mark.parametrize(
    ("args", "choices"),
    [
        (["--config", "gp9", "--workload", "std-randread-4k"], "gp2, gp3, io1"),
        (["--config", "gp3", "--workload", "randread"], "std-randread-4k"),
    ],
)
def test_a_name_matching_nothing_lists_the_choices_and_exits_2(args: list[str], choices: str) -> None:
    result = CliRunner().invoke(app, ["results", *args])
    assert result.exit_code == 2
    assert choices in " ".join(result.stderr.split())
    assert result.stdout == ""


def test_history_alone_says_what_it_needs() -> None:
    result = CliRunner().invoke(app, ["results", "--history", "--workload", "std-randread-4k"])
    assert result.exit_code == 2
    assert "--history needs --config ID" in " ".join(result.stderr.split())


def test_a_storage_option_without_points_says_so_and_exits_1() -> None:
    result = CliRunner().invoke(app, ["results", "--storage", "c5.4xlarge/ebs:gp3:1GiB", "--workload", "x"])
    assert result.exit_code == 1
    assert "no measurement of x on c5.4xlarge/ebs:gp3:1GiB" in " ".join(result.stderr.split())


def test_columns_chooses_and_an_unknown_one_is_named() -> None:
    result = CliRunner().invoke(app, ["results", "--suite", SUITE, "--columns", "run,run cost"])
    assert result.exit_code == 0, result.output
    assert "status" not in result.stdout.split("\n")[2] and "$1,234.57" in result.stdout
    wrong = CliRunner().invoke(app, ["results", "--suite", SUITE, "--columns", "run,cost"])
    assert wrong.exit_code == 2 and "'cost' is not one of run, suite, status" in " ".join(
        wrong.stderr.split()
    )


def test_json_is_an_alias_of_format_json() -> None:
    by_flag = CliRunner().invoke(app, ["results", "--suite", SUITE, "--json"])
    by_format = CliRunner().invoke(app, ["results", "--suite", SUITE, "--format", "json"])
    assert by_flag.exit_code == by_format.exit_code == 0
    assert json.loads(by_flag.stdout) == json.loads(by_format.stdout)
    both = CliRunner().invoke(app, ["results", "--suite", SUITE, "--json", "--format", "csv"])
    assert both.exit_code == 2


def test_cost_prints_a_total_row() -> None:
    result = CliRunner().invoke(
        app, ["cost", "--suite", "request.json", "--hours", "10"], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    (total,) = [line for line in result.stdout.splitlines() if "│ total" in line]
    document = json.loads(
        CliRunner().invoke(app, ["cost", "--suite", "request.json", "--hours", "10", "--json"]).stdout
    )
    monthly = sum(c["monthly_usd"] for c in document["configs"])
    assert document["total"]["monthly_usd"] == pytest.approx(monthly)
    assert f"${monthly:,.2f}" in total


def test_version() -> None:
    from storagebench import __version__

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"storagebench {__version__}"


def test_completion_is_offered() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_a_local_dry_run_gives_the_expected_time_and_cost() -> None:
    result = CliRunner().invoke(app, ["run", "--local", "--dry-run", "--suite", "request.json", "--json"])
    assert result.exit_code == 0, result.output
    preview = json.loads(result.stdout)["preview"]
    assert preview["estimate"]["wall_hours"] > 0 and preview["estimate"]["total_usd"] > 0
    assert [c["id"] for c in preview["configs"]] == list(IOPS)
    text = CliRunner().invoke(app, ["run", "--local", "--dry-run", "--suite", "request.json"]).stdout
    assert "expected " in text and "h expected" in text


def test_recommend_table_keeps_every_figure_whole_at_80_columns() -> None:
    args = ["recommend", "--run", RUNS[0], "--require", "std-randread-4k:iops>=50000"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert f"run {RUNS[0]}" in result.stdout.splitlines()
    rows = [line for line in result.stdout.splitlines() if line.startswith("│ ") and "$" in line]
    assert [row.split("│")[1].strip() for row in rows] == ["gp3", "io1", "gp2"]
    assert [row.split("│")[2].strip() for row in rows] == ["$12,345.67", "$12,345.67*", "$12,345.67"]
    assert "lower bound 114,063 >= 50,000" in " ".join(result.stdout.replace("│", " ").split())


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_recommend_rows_are_one_per_config_unformatted(fmt: str) -> None:
    args = ["recommend", "--run", RUNS[0], "--require", "std-randread-4k:iops>=50000", "--format", fmt]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    if fmt == "jsonl":
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        checks = rows[0]["checks"]
    else:
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        checks = json.loads(rows[0]["checks"])
    assert [(r["config_id"], r["role"]) for r in rows] == [
        ("gp3", "cheapest"),
        ("io1", "also"),
        ("gp2", "fails"),
    ]
    assert float(rows[0]["monthly_usd"]) == 12345.67
    assert checks[0]["requirement"] == "std-randread-4k:iops>=50000" and checks[0]["met"] is True


def test_recommend_exits_alike_in_every_format() -> None:
    args = ["recommend", "--run", RUNS[0], "--require", "std-randread-4k:iops>=500000"]
    codes = {fmt: CliRunner().invoke(app, [*args, "--format", fmt]).exit_code for fmt in FORMATS}
    assert codes == dict.fromkeys(FORMATS, 1)
    by_flag = CliRunner().invoke(app, [*args, "--json"])
    assert json.loads(by_flag.stdout) == json.loads(
        CliRunner().invoke(app, [*args, "--format", "json"]).stdout
    )
    wrong = CliRunner().invoke(app, [*args, "--format", "xml"])
    assert wrong.exit_code == 2 and "--format 'xml' is not one of table, json, jsonl, csv" in wrong.stderr


def test_prices_as_csv_and_jsonl_hold_every_price_of_the_region() -> None:
    from storagebench.prices.snapshot import iter_rates, load_snapshot

    prices = load_snapshot().regions["us-east-1"]
    expected = len(iter_rates(prices)) + len(prices.missing)
    as_csv = CliRunner().invoke(app, ["prices", "show", "--region", "us-east-1", "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert len(rows) == expected and {r["region"] for r in rows} == {"us-east-1"}
    gp3 = next(r for r in rows if r["price"] == "ebs_storage.gp3")
    assert (
        float(gp3["usd"]) == prices.ebs_storage["gp3"].usd and gp3["unit"] == prices.ebs_storage["gp3"].unit
    )
    as_jsonl = CliRunner().invoke(app, ["prices", "show", "--region", "us-east-1", "--format", "jsonl"])
    lines = [json.loads(line) for line in as_jsonl.stdout.splitlines()]
    assert [line["price"] for line in lines] == [r["price"] for r in rows]
    assert (
        next(line for line in lines if line["price"] == "ebs_storage.gp3")["usd"]
        == prices.ebs_storage["gp3"].usd
    )


def test_prices_json_is_an_alias_of_format_json() -> None:
    by_flag = CliRunner().invoke(app, ["prices", "show", "--region", "us-east-1", "--json"])
    by_format = CliRunner().invoke(app, ["prices", "show", "--region", "us-east-1", "--format", "json"])
    assert by_flag.exit_code == by_format.exit_code == 0
    assert json.loads(by_flag.stdout) == json.loads(by_format.stdout)
    both = CliRunner().invoke(app, ["prices", "show", "--json", "--format", "csv"])
    assert both.exit_code == 2 and "--json is --format json" in both.stderr


def test_a_run_on_emulated_volumes_says_so_first_and_marks_its_grades() -> None:
    result = CliRunner().invoke(app, ["results", "--run", RUNS[0]], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    # Stored records from before the EBS twin carry no emulator label: the throttle measured them.
    assert result.stdout.startswith("caveat: throttled emulated volumes (")
    assert "not EBS latency" in " ".join(result.stdout.split())
    grades = [line for line in result.stdout.splitlines() if "std-randread-4k" in line]
    assert grades and all("(emulated)" in line for line in grades)


def test_columns_of_a_run_choose_its_measurements_table() -> None:
    args = ["results", "--run", RUNS[0], "--columns", "config,workload,p95 ms,grade"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "workload" in line and "┃" in line)
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "config",
        "workload",
        "p95 ms",
        "grade",
    ]
    bad = CliRunner().invoke(app, ["results", "--run", RUNS[0], "--columns", "config,nope"])
    assert bad.exit_code == 2 and "'nope' is not one of config, workload" in " ".join(bad.stderr.split())
