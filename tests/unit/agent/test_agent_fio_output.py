"""split_fio_output on real fio 3.33 combined output (tests/data/fio) and on garbage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagebench.protocol.fio_output import split_fio_output

DATA = Path(__file__).resolve().parents[2] / "data" / "fio"
OUTPUTS = sorted(p.name for p in DATA.glob("*.out"))


def test_there_are_fixtures() -> None:
    assert len(OUTPUTS) >= 8


@pytest.mark.parametrize("name", OUTPUTS)
def test_split_real_output(name: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    parts = split_fio_output(text)
    assert parts is not None
    json_text, normal_text = parts
    document = json.loads(json_text)
    assert json_text.endswith("}\n")
    assert document["fio version"] == "fio-3.33"
    assert isinstance(document["jobs"], list)
    assert document["jobs"]
    assert "Run status group" in normal_text
    assert '"jobs"' not in normal_text
    assert document["jobs"][0]["jobname"] in normal_text
    # Nothing is lost: preamble + JSON + report is the whole output, bar the newlines after the JSON.
    body = json_text.rstrip("\n")
    start = text.index(body)
    assert normal_text == text[:start] + text[start + len(body) :].lstrip("\r\n")


def test_preamble_and_report_are_kept_in_order() -> None:
    text = (DATA / "single_randread.out").read_text(encoding="utf-8")
    parts = split_fio_output(text)
    assert parts is not None
    _, normal = parts
    assert normal.index("randread: (g=0)") < normal.index("Run status group 0")


def test_failed_job_output_still_splits() -> None:
    parts = split_fio_output((DATA / "job_error.out").read_text(encoding="utf-8"))
    assert parts is not None
    errors = {job["jobname"]: job["error"] for job in json.loads(parts[0])["jobs"]}
    assert errors == {"ok": 0, "full": 28}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fio: failed parsing rw=bogus\n",
        "{not json at all\n",
        '{"fio version": "fio-3.33", "no jobs": []}\n',
        'x{"jobs": []}\n',  # not at the start of a line
        '{"jobs": {"a": 1}}\n',  # jobs not a list
        "[1, 2, 3]\n",
        '{"jobs": [\n',  # truncated (fio killed mid-write)
    ],
    ids=["empty", "error-line", "broken", "no-jobs", "mid-line", "jobs-not-list", "array", "truncated"],
)
def test_garbage_gives_none(text: str) -> None:
    assert split_fio_output(text) is None


def test_skips_a_line_initial_brace_that_is_not_the_document() -> None:
    document = {"fio version": "fio-3.33", "jobs": [{"jobname": "a"}]}
    text = "{ broken preamble line\n" + '{"x": 1}\n' + json.dumps(document, indent=2) + "\nreport\n"
    parts = split_fio_output(text)
    assert parts is not None
    assert json.loads(parts[0]) == document
    assert parts[1] == '{ broken preamble line\n{"x": 1}\nreport\n'
