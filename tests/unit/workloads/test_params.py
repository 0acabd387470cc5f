"""Workload parameters: sizes, durations, coercion per kind, the allowed text and scaling."""

from __future__ import annotations

import math
from typing import Any

import pytest

from storagebench.workloads.params import (
    Param,
    ParamError,
    format_size,
    parse_duration,
    parse_size,
)

KIB, MIB, GIB, TIB, PIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50

# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4k", 4 * KIB),
        ("4K", 4 * KIB),
        ("1M", MIB),
        ("1m", MIB),
        ("8G", 8 * GIB),
        ("8g", 8 * GIB),
        ("2t", 2 * TIB),
        ("1p", PIB),
        ("1MiB", MIB),
        ("1mib", MIB),
        ("1MB", MIB),  # binary, as fio reads it by default (kb_base=1024)
        ("4kb", 4 * KIB),
        ("512", 512),
        ("0", 0),
        (" 4 k ", 4 * KIB),
        ("1.5k", 1536),
        ("0.5m", 512 * KIB),
        ("100M", 100 * MIB),
        (4096, 4096),
        (0, 0),
    ],
)
def test_parse_size(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["4x", "", "k", "-1", "1e3", "4 kk", "4kib extra", "one", "1.k", "4 MiBs"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="is not a size like 4k, 1M, 8G"):
        parse_size(text)


@pytest.mark.parametrize("value", [True, False, -1])
def test_parse_size_rejects_bools_and_negatives(value: int) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        parse_size(value)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0"),
        (1, "1"),
        (512, "512"),
        (1023, "1023"),
        (KIB, "1k"),
        (1536, "1536"),
        (2 * KIB, "2k"),
        (4 * KIB, "4k"),
        (MIB, "1m"),
        (MIB + KIB, "1025k"),
        (81 * MIB, "81m"),
        (1536 * MIB, "1536m"),
        (3 * GIB, "3g"),
        (8 * GIB, "8g"),
        (TIB, "1t"),
        (64 * TIB, "64t"),
        (PIB, "1p"),
        (3 * PIB, "3p"),
        (2048 * PIB, "2048p"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


@pytest.mark.parametrize(
    "size",
    [
        0,
        1,
        511,
        512,
        1000,
        1024,
        1536,
        4096,
        500_000,
        MIB - 1,
        MIB,
        81 * MIB,
        100 * MIB,
        GIB + 1,
        8 * GIB,
        PIB,
    ],
)
def test_size_round_trip_from_bytes(size: int) -> None:
    assert parse_size(format_size(size)) == size


@pytest.mark.parametrize(
    "text", ["512", "1k", "4k", "2k", "1m", "100m", "1g", "8g", "1t", "64t", "1p", "1025k"]
)
def test_size_round_trip_from_canonical_text(text: str) -> None:
    assert format_size(parse_size(text)) == text


@pytest.mark.parametrize(
    ("text", "canonical"), [("1024k", "1m"), ("4096", "4k"), ("1MiB", "1m"), ("0.5g", "512m")]
)
def test_format_size_is_the_shortest_exact_form(text: str, canonical: str) -> None:
    assert format_size(parse_size(text)) == canonical


# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 30.0),
        ("30s", 30.0),
        ("5m", 300.0),
        ("2h", 7200.0),
        ("500ms", 0.5),
        ("1.5m", 90.0),
        (" 10 s ", 10.0),
        ("2H", 7200.0),
        (45, 45.0),
        (1.5, 1.5),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds
    assert isinstance(parse_duration(text), float)


@pytest.mark.parametrize("text", ["soon", "5d", "", "m", "-5s", "1h30m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration like 30s, 5m, 2h"):
        parse_duration(text)


def test_parse_duration_rejects_bool() -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        parse_duration(True)


# --------------------------------------------------------------------------- coercion per kind

INT = Param("iodepth", "int", 1, "qd", minimum=1, maximum=1024, sweepable=True, auto=True)
PLAIN_INT = Param("nrfiles", "int", 2, "files", minimum=1, maximum=10_000)
UNBOUNDED = Param("bytes", "int", None, "bytes")
FLOAT = Param("ratio", "float", 0.5, "ratio", minimum=0, maximum=1)
SIZE = Param("bs", "size", "4k", "block", minimum=512, maximum=GIB, sweepable=True)
DURATION = Param("runtime", "duration", 30, "secs", minimum=1, maximum=86_400, scales=True, scale_floor=3)
CHOICE = Param("oflag", "choice", "dsync", "flags", choices=("dsync", "sync", "direct"))
BOOL = Param("timeseries", "bool", True, "logs")
TEXT = Param("command", "text", None, "shell")


def _only_ascii(text: str) -> None:
    if not text.isascii():
        raise ValueError("only ASCII, please")


CHECKED = Param("job_file", "text", None, "ini", check=_only_ascii)


@pytest.mark.parametrize(
    ("param", "value", "expected"),
    [
        (INT, 4, 4),
        (INT, 4.0, 4),
        (INT, 1, 1),
        (INT, 1024, 1024),
        (INT, "auto", "auto"),
        (UNBOUNDED, -5, -5),
        (UNBOUNDED, 10**15, 10**15),
        (FLOAT, 1, 1.0),
        (FLOAT, 0.25, 0.25),
        (SIZE, "4k", 4096),
        (SIZE, 4096, 4096),
        (SIZE, "1g", GIB),
        (SIZE, "512", 512),
        (DURATION, "5m", 300.0),
        (DURATION, 30, 30.0),
        (DURATION, 2.5, 2.5),
        (CHOICE, "sync", "sync"),
        (BOOL, True, True),
        (BOOL, False, False),
        (TEXT, "echo hi", "echo hi"),
        (CHECKED, "[job]", "[job]"),
    ],
)
def test_coerce_accepts(param: Param, value: object, expected: Any) -> None:
    result = param.coerce(value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("param", "value"),
    [
        (INT, 0),
        (INT, 1025),
        (INT, 4.5),
        (INT, "4"),
        (INT, True),  # bool is not an int here
        (INT, False),
        (INT, None),
        (INT, [4]),
        (INT, "AUTO"),
        (PLAIN_INT, "auto"),  # only auto params take "auto"
        (PLAIN_INT, 0),
        (FLOAT, math.nan),
        (FLOAT, 1.5),
        (FLOAT, -0.1),
        (FLOAT, True),
        (FLOAT, "0.5"),
        (SIZE, "4x"),
        (SIZE, "256"),
        (SIZE, "2g"),
        (SIZE, 4.0),
        (SIZE, True),
        (SIZE, None),
        (DURATION, "soon"),
        (DURATION, 0),
        (DURATION, True),
        (DURATION, [30]),
        (CHOICE, "none"),
        (CHOICE, True),
        (CHOICE, "DSYNC"),
        (BOOL, 1),
        (BOOL, "true"),
        (BOOL, None),
        (TEXT, ""),
        (TEXT, "   "),
        (TEXT, 5),
        (TEXT, True),
    ],
)
def test_coerce_rejects_with_what_is_allowed(param: Param, value: object) -> None:
    with pytest.raises(ParamError) as caught:
        param.coerce(value)
    assert caught.value.param == param.name
    assert caught.value.value is value or caught.value.value == value
    assert caught.value.allowed == param.allowed()
    assert param.allowed() in str(caught.value)


def test_custom_check_message_is_kept() -> None:
    with pytest.raises(ParamError) as caught:
        CHECKED.coerce("caf\u00e9")
    assert caught.value.allowed == "only ASCII, please"


@pytest.mark.parametrize(
    ("param", "allowed"),
    [
        (INT, 'int 1..1024, or "auto"; a list of such values sweeps'),
        (PLAIN_INT, "int 1..10000"),
        (UNBOUNDED, "int"),
        (Param("x", "int", 1, "x", minimum=0), "int 0.."),
        (FLOAT, "float 0..1"),
        (SIZE, "size 512..1g (a size like 4k, 1M); a list of such values sweeps"),
        (DURATION, "duration 1..86400 (seconds, or 30s/5m/2h)"),
        (CHOICE, "one of dsync, sync, direct"),
        (BOOL, "true or false"),
        (TEXT, "a non-empty string of at most 65,536 characters"),
    ],
)
def test_allowed_text(param: Param, allowed: str) -> None:
    assert param.allowed() == allowed


def test_param_error_message() -> None:
    error = ParamError("bs", "4x", "size 512..1g")
    assert str(error) == "'4x' is not allowed: size 512..1g"
    assert (error.param, error.value, error.allowed) == ("bs", "4x", "size 512..1g")


# --------------------------------------------------------------------------- scaling

SCALED_SIZE = Param(
    "size", "size", "1g", "bytes", minimum=MIB, maximum=64 * TIB, scales=True, scale_floor=16 * MIB
)
SCALED_COUNT = Param(
    "count", "int", 1000, "blocks", minimum=1, maximum=10_000_000, scales=True, scale_floor=1
)
SCALED_INT_NO_FLOOR = Param("files", "int", 10, "files", minimum=1, scales=True)
SMALL_SIZE = Param("chunk", "size", "100k", "bytes", scales=True)


def test_scale_one_changes_nothing() -> None:
    assert SCALED_SIZE.scaled(GIB, 1) == GIB
    assert SCALED_COUNT.scaled(1000, 1) == 1000
    assert DURATION.scaled(30.0, 1) == 30.0
    assert SCALED_SIZE.scaled(5 * MIB, 1) == 5 * MIB  # below the floor, but scale 1 is the profile as is


@pytest.mark.parametrize(
    ("value", "scale", "expected"),
    [
        (8 * GIB, 0.01, 81 * MIB),  # 81.92 MiB rounds down to whole MiB
        (8 * GIB, 0.5, 4 * GIB),
        (GIB, 2, 2 * GIB),
        (GIB, 0.01, 16 * MIB),  # 10.24 MiB is below the 16 MiB floor
        (GIB, 0.0001, 16 * MIB),
        (100 * MIB, 0.333, 33 * MIB),
    ],
)
def test_scaled_sizes_are_whole_mib_and_floored(value: int, scale: float, expected: int) -> None:
    result = SCALED_SIZE.scaled(value, scale)
    assert result == expected
    assert isinstance(result, int)
    assert result % MIB == 0


def test_scaled_size_below_one_mib_is_whole_bytes() -> None:
    result = SMALL_SIZE.scaled(100 * KIB, 0.5)
    assert result == 50 * KIB
    assert isinstance(result, int)


@pytest.mark.parametrize(
    ("value", "scale", "expected"),
    [(1000, 0.01, 10), (1000, 0.001, 1), (1000, 0.0001, 1), (1024, 0.5, 512), (1000, 1.5, 1500)],
)
def test_scaled_counts(value: int, scale: float, expected: int) -> None:
    result = SCALED_COUNT.scaled(value, scale)
    assert result == expected
    assert isinstance(result, int)


def test_scaled_int_is_at_least_one_without_a_floor() -> None:
    assert SCALED_INT_NO_FLOOR.scaled(10, 0.01) == 1
    assert SCALED_INT_NO_FLOOR.scaled(10, 0.3) == 3


@pytest.mark.parametrize(
    ("value", "scale", "expected"), [(180.0, 0.01, 3.0), (180.0, 0.5, 90.0), (30.0, 2, 60.0)]
)
def test_scaled_durations_are_floored(value: float, scale: float, expected: float) -> None:
    assert DURATION.scaled(value, scale) == expected


@pytest.mark.parametrize(
    ("param", "value"),
    [(INT, 14), (INT, "auto"), (SIZE, 4096), (PLAIN_INT, 2), (CHOICE, "dsync"), (BOOL, True), (TEXT, "echo")],
)
@pytest.mark.parametrize("scale", [0.001, 0.01, 0.5, 2, 100])
def test_non_scaling_params_are_untouched(param: Param, value: Any, scale: float) -> None:
    assert param.scaled(value, scale) == value


def test_scaling_param_leaves_bools_and_text_alone() -> None:
    odd = Param("x", "int", 1, "x", scales=True)
    assert odd.scaled(True, 0.5) is True
    assert odd.scaled("auto", 0.5) == "auto"
