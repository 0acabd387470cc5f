"""The request's ``tags``: put on everything storagebench creates for the run, or refused by name.

A tag lands on EC2 instances and volumes, EFS and FSx file systems and Storage Gateway gateways
and shares, so it must pass every one of their rules: a key of 1-128 and a value of 0-256
characters, each Unicode letters, digits, spaces and ``_ . : / = + - @`` (EFS's, FSx's and Storage
Gateway's pattern; EC2 takes more). ``aws:`` is AWS's own prefix (in any case); ``storagebench:``
(in any case: IAM matches tag keys without case) and ``Name`` are storagebench's. A resource takes
at most 50 tags, and storagebench puts up to ``len(OWN_TAG_KEYS)`` of its own on one (a File Gateway
appliance carries them all), which leaves ``MAX_USER_TAGS`` for the request.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from storagebench.core.tags import (
    TAG_CLIENT_TOKEN,
    TAG_CONFIG,
    TAG_EXPIRES,
    TAG_ROLE,
    TAG_RUN,
    TAG_STACK,
    TAG_TARGET,
)

Problem = tuple[tuple[str | int, ...], Any, str]

AWS_TAGS_PER_RESOURCE = 50
OWN_TAG_KEYS = (TAG_RUN, TAG_CONFIG, TAG_EXPIRES, TAG_STACK, TAG_TARGET, TAG_ROLE, TAG_CLIENT_TOKEN, "Name")
MAX_USER_TAGS = AWS_TAGS_PER_RESOURCE - len(OWN_TAG_KEYS)
MAX_KEY, MAX_VALUE = 128, 256
PUNCTUATION = "_.:/=+-@"
ALLOWED = f"Unicode letters, digits, spaces and {' '.join(PUNCTUATION)}"


def _bad_character(text: str) -> str | None:
    for char in text:
        if char not in PUNCTUATION and unicodedata.category(char)[0] not in "LNZ":
            return char
    return None


def _key_problem(key: str) -> str | None:
    lowered = key.lower()
    if lowered.startswith("aws:"):
        return "the aws: prefix (in any case) is reserved for AWS; use another key"
    if lowered.startswith("storagebench:"):
        return (
            "the storagebench: prefix (in any case) is storagebench's own (run, config, stack, expiry); "
            "use another key"
        )
    if key == "Name":
        return "storagebench sets Name (storagebench <run>/<config>); use another key"
    if not 1 <= len(key) <= MAX_KEY:
        return f"a tag key is 1-{MAX_KEY} characters, not {len(key)}"
    if (char := _bad_character(key)) is not None:
        return f"a tag key holds {ALLOWED}, not {char!r}"
    return None


def _value_problem(value: str) -> str | None:
    if len(value) > MAX_VALUE:
        return f"a tag value is 0-{MAX_VALUE} characters, not {len(value)}"
    if (char := _bad_character(value)) is not None:
        return f"a tag value holds {ALLOWED}, not {char!r}"
    return None


def tag_problems(tags: Any) -> list[Problem]:
    """Every tag AWS or storagebench would refuse, located at ``tags.<key>`` (the count at ``tags``).

    Takes the raw document's ``tags`` too: anything but a mapping of strings is left to the model.
    """
    if not isinstance(tags, Mapping):
        return []
    found: list[Problem] = []
    if len(tags) > MAX_USER_TAGS:
        found.append(
            (
                ("tags",),
                len(tags),
                f"at most {MAX_USER_TAGS} tags: AWS allows {AWS_TAGS_PER_RESOURCE} per resource and "
                f"storagebench puts up to {len(OWN_TAG_KEYS)} of its own on one",
            )
        )
    for key, value in tags.items():
        if not isinstance(key, str):
            continue
        if (problem := _key_problem(key)) is not None:
            found.append((("tags", key), key, problem))
        elif isinstance(value, str) and (problem := _value_problem(value)) is not None:
            found.append((("tags", key), value, problem))
    return found
