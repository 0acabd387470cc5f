"""Request documents are read strictly, the same way from a CLI file and an API body."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagebench.request import RequestError, load_request
from storagebench.request.json_document import MAX_DEPTH, JsonDocumentError, decode_json

DEMO = Path(__file__).resolve().parents[3] / "events" / "local-demo.json"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"name": "a", "name": "b"}', "the key 'name' appears twice in one object"),
        (b'{"repetitions": NaN}', "NaN is not a JSON number"),
        (b'{"repetitions": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"name": "caf\xe9"}', "not UTF-8 at byte 13"),
        (b"[" * 100_000, "nested too deeply"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested too deeply"),
        (b'{"name": }', "not valid JSON at line 1 column 10"),
    ],
    ids=["duplicate-key", "nan", "infinity", "latin-1", "deep-100k", "deep-65", "syntax"],
)
def test_what_python_json_lets_through_is_refused_by_name(data: bytes, message: str) -> None:
    with pytest.raises(JsonDocumentError, match=message.replace("(", r"\(")):
        decode_json(data)


def test_a_real_request_reads_the_same_as_with_json() -> None:
    data = DEMO.read_bytes()
    assert decode_json(data) == json.loads(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"name": "x", "name": "y"}', "appears twice"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 50_000, "too deeply"),
    ],
)
def test_the_cli_file_reader_gives_a_field_error_not_a_traceback(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "request.json"
    path.write_bytes(data)
    with pytest.raises(RequestError) as raised:
        load_request(path)
    (error,) = raised.value.errors
    assert error.path == str(path) and message in error.message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"timing": {"max_run_hours": 1e400}}', "timing.max_run_hours: 1e400 is too large for a number"),
        (
            b'{"repetitions": -1E999}',
            "repetitions: -1E999 is too large for a number: it would read as Infinity",
        ),
        (b'{"repetitions": 1' + b"0" * 5000 + b"}", "repetitions: a number of 5,001 characters is too long"),
        (b'{"configs": [{"id": "a"}, {"id": NaN}]}', "configs[1].id: NaN is not a JSON number"),
        (b'{"configs": [{"id": "a", "id": "b"}]}', "configs[0]: the key 'id' appears twice"),
        (
            b'{"description": "\\ud800 x"}',
            "description: the text holds a lone UTF-16 surrogate ('\\ud800')",
        ),
        (b'{"tags": {"\\udfff": "v"}}', "tags: a key holds a lone UTF-16 surrogate"),
    ],
    ids=[
        "1e400",
        "-1e999",
        "5001-digits",
        "nan-in-a-list",
        "duplicate-nested",
        "lone-surrogate",
        "surrogate-key",
    ],
)
def test_numbers_python_reads_as_infinity_or_cannot_read_and_lone_surrogates_are_refused_at_their_path(
    data: bytes, message: str
) -> None:
    with pytest.raises(JsonDocumentError) as raised:
        decode_json(data)
    assert str(raised.value).startswith(message), str(raised.value)
    assert raised.value.path == message.split(":", maxsplit=1)[0]


def test_a_surrogate_pair_written_as_escapes_is_one_character_and_fine() -> None:
    assert decode_json(b'{"description": "\\ud840\\udc00"}') == {"description": chr(0x20000)}
