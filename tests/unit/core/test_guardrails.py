"""The stack's guardrails read AllowedInstanceTypes the way IAM's StringLike reads it."""

from __future__ import annotations

import pytest

from storagebench.core.guardrails import Guardrails


@pytest.mark.parametrize(
    ("allowed", "instance_type", "allows"),
    [
        (("*",), "p5.48xlarge", True),
        (("c5.*", "m5.large"), "c5.4xlarge", True),
        (("c5.*", "m5.large"), "m5.large", True),
        (("c5.*", "m5.large"), "m5.xlarge", False),
        (("c5.*",), "c5n.large", False),  # '.' is literal, as in IAM
        (("c5?.large",), "c5n.large", True),
        (("C5.*",), "c5.large", False),  # case-sensitive, as StringLike
        (("[c]5.large",), "c5.large", False),  # brackets are not a character class in IAM
        (("[c]5.large",), "[c]5.large", True),
    ],
)
def test_allowed_instance_types_are_string_like_patterns(
    allowed: tuple[str, ...], instance_type: str, allows: bool
) -> None:
    assert Guardrails(allowed_instance_types=allowed).allows(instance_type) is allows


def test_the_environment_list_is_split_on_commas() -> None:
    limits = Guardrails.from_env({"ALLOWED_INSTANCE_TYPES": "c5.*, r5b.2xlarge"})
    assert limits.allowed_instance_types == ("c5.*", "r5b.2xlarge")
    assert limits.allows("r5b.2xlarge") and not limits.allows("r5b.4xlarge")
