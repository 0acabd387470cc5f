"""A request's ``tags`` pass every service's tag rules or are refused by name (issue 11).

They land on EC2 instances and volumes, EFS and FSx file systems and Storage Gateway gateways and
shares, so the rules are what all of those accept, minus the keys AWS and storagebench reserve,
and few enough that storagebench's own tags still fit in AWS's 50 per resource.
"""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.request import RequestError, parse_request
from storagebench.request.tags import AWS_TAGS_PER_RESOURCE, MAX_USER_TAGS, OWN_TAG_KEYS


def _refused(minimal: dict[str, Any], tags: Any) -> list[str]:
    minimal["tags"] = tags
    with pytest.raises(RequestError) as raised:
        parse_request(minimal)
    return [str(e) for e in raised.value.errors]


def test_tags_within_every_services_rules_are_kept(minimal: dict[str, Any]) -> None:
    tags = {"team": "storage", "cost-center": "CC-1234", "owner@": "ana.lópez/été", "k": ""}
    tags["x" * 128] = "v" * 256
    minimal["tags"] = tags
    assert parse_request(minimal).tags == tags


@pytest.mark.parametrize(
    ("key", "allowed"),
    [
        ("aws:createdBy", "the aws: prefix (in any case) is reserved for AWS"),
        ("AWS:x", "the aws: prefix (in any case) is reserved for AWS"),
        ("storagebench:stack", "the storagebench: prefix (in any case) is storagebench's own"),
        ("StorageBench:run-id", "the storagebench: prefix (in any case) is storagebench's own"),
        ("Name", "storagebench sets Name"),
        ("k" * 129, "a tag key is 1-128 characters, not 129"),
        ("", "a tag key is 1-128 characters, not 0"),
        ("team;rm -rf /", "a tag key holds Unicode letters, digits, spaces and _ . : / = + - @, not ';'"),
        ("$(id)", "not '$'"),
    ],
)
def test_a_reserved_or_invalid_key_is_refused_at_its_path_with_the_key(
    minimal: dict[str, Any], key: str, allowed: str
) -> None:
    (error,) = _refused(minimal, {key: "v"})
    assert error.startswith(f"tags.{key}: ") and allowed in error
    assert f'(got "{key[:70]}' in error  # the key, as given


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("v" * 257, "a tag value is 0-256 characters, not 257"),
        ("a`reboot`", "a tag value holds Unicode letters, digits, spaces and _ . : / = + - @, not '`'"),
        ("line\nbreak", "not '\\n'"),
    ],
)
def test_an_invalid_value_is_refused_at_its_key_with_the_value(
    minimal: dict[str, Any], value: str, allowed: str
) -> None:
    (error,) = _refused(minimal, {"team": value})
    assert error.startswith("tags.team: ") and allowed in error and "(got " in error


def test_storagebench_and_the_user_stay_within_50_tags_per_resource(minimal: dict[str, Any]) -> None:
    assert MAX_USER_TAGS + len(OWN_TAG_KEYS) == AWS_TAGS_PER_RESOURCE == 50
    minimal["tags"] = {f"k{i}": "v" for i in range(MAX_USER_TAGS)}
    assert len(parse_request(minimal).tags) == MAX_USER_TAGS
    (error,) = _refused(minimal, {f"k{i}": "v" for i in range(MAX_USER_TAGS + 1)})
    assert error.startswith("tags: at most 42 tags") and "(got 43)" in error


def test_tag_problems_are_reported_alongside_other_field_problems(minimal: dict[str, Any]) -> None:
    minimal["repetitions"] = "3"
    errors = _refused(minimal, {"aws:x": "1", "ok": 2})
    # in the order of the document: the reserved key aws:x was written before ok
    assert [e.split(":")[0] for e in errors] == ["repetitions", "tags.aws", "tags.ok"]
