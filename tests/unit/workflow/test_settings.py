"""The stack's guardrails from the environment the template gives every function."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails

TEMPLATE = Path(__file__).resolve().parents[3] / "template.yaml"


def test_defaults_without_environment() -> None:
    guardrails = Guardrails.from_env({})
    assert guardrails == Guardrails()
    assert (guardrails.max_configs_per_run, guardrails.max_concurrency) == (12, 4)
    assert guardrails.allowed_instance_types == ("*",)
    assert (guardrails.heartbeat_max_s, guardrails.ready_timeout_s) == (300, 1200)
    assert guardrails.allows("anything.large")


def test_values_from_the_environment() -> None:
    guardrails = Guardrails.from_env(
        {
            "MAX_CONFIGS_PER_RUN": "3",
            "MAX_CONCURRENCY": "2",
            "AGENT_HEARTBEAT_SECONDS": "60",
            "READY_TIMEOUT_SECONDS": "600",
            "ALLOWED_INSTANCE_TYPES": " c5.large, m7g.large ,,",
            "UNRELATED": "x",
        }
    )
    assert (guardrails.max_configs_per_run, guardrails.max_concurrency) == (3, 2)
    assert (guardrails.heartbeat_max_s, guardrails.ready_timeout_s) == (60, 600)
    assert guardrails.allowed_instance_types == ("c5.large", "m7g.large")
    assert guardrails.allows("m7g.large") and not guardrails.allows("m7g.xlarge")


def test_empty_values_keep_the_defaults() -> None:
    assert Guardrails.from_env({"MAX_CONCURRENCY": "", "ALLOWED_INSTANCE_TYPES": ""}) == Guardrails()


@pytest.mark.parametrize(
    ("variable", "value", "field"),
    [
        ("MAX_CONCURRENCY", "0", "max_concurrency"),
        ("MAX_CONCURRENCY", "41", "max_concurrency"),
        ("MAX_CONFIGS_PER_RUN", "many", "max_configs_per_run"),
        ("AGENT_HEARTBEAT_SECONDS", "10", "heartbeat_max_s"),
        ("READY_TIMEOUT_SECONDS", "7201", "ready_timeout_s"),
    ],
)
def test_a_bad_setting_is_named_with_its_value(variable: str, value: str, field: str) -> None:
    with pytest.raises(ValueError, match=f"stack setting {field}: .*got '{value}'"):
        Guardrails.from_env({variable: value})


def test_guardrails_are_frozen() -> None:
    with pytest.raises(ValueError):
        Guardrails().max_concurrency = 9  # type: ignore[misc]


def test_template_parameters_have_the_guardrails_bounds() -> None:
    pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra: pip install -e '.[local]')")
    from storagebench_local.cfn import load_template

    template = load_template(TEMPLATE)
    parameters: dict[str, Any] = template["Parameters"]
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    pairs = {
        "MaxConcurrency": ("MAX_CONCURRENCY", "max_concurrency"),
        "MaxConfigsPerRun": ("MAX_CONFIGS_PER_RUN", "max_configs_per_run"),
        "AgentHeartbeatSeconds": ("AGENT_HEARTBEAT_SECONDS", "heartbeat_max_s"),
    }
    for parameter, (variable, field) in pairs.items():
        assert variables[variable] == {"Ref": parameter}
        bounds = {type(m).__name__: m for m in Guardrails.model_fields[field].metadata}
        assert parameters[parameter]["MinValue"] == bounds["Ge"].ge, parameter
        assert parameters[parameter]["MaxValue"] == bounds["Le"].le, parameter
        assert parameters[parameter]["Default"] == Guardrails.model_fields[field].default, parameter
    assert variables["ALLOWED_INSTANCE_TYPES"] == {"Fn::Join": [",", {"Ref": "AllowedInstanceTypes"}]}
    assert Guardrails.from_env({"ALLOWED_INSTANCE_TYPES": parameters["AllowedInstanceTypes"]["Default"]}) == (
        Guardrails()
    )
