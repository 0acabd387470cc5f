"""A command document as SSM runs it: parameters checked and substituted, steps in order.

The content is the template's ``AgentDocument`` itself (never a copy). Substitution follows
SSM's rules for ``schemaVersion`` 2.2 command documents: every ``{{ name }}`` (spaces optional)
is replaced by the parameter's value, a parameter the caller leaves out takes its ``default``,
a required one without a default, an unknown one, a value that breaks ``allowedPattern`` or a
list given for a ``String`` are refused before anything runs (SendCommand's InvalidParametersError).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_.:-]+)\s*\}\}")
SHELL_ACTION = "aws:runShellScript"
DEFAULT_STEP_TIMEOUT_S = 3600  # aws:runShellScript's default timeoutSeconds


class InvalidParametersError(ValueError):
    """SendCommand would refuse these parameters; the message names each and what is allowed."""


class InvalidDocumentError(ValueError):
    """The document holds something this stand-in (or SSM) cannot run."""


@dataclass(frozen=True)
class ShellStep:
    name: str
    script: str
    timeout_s: int


@dataclass(frozen=True)
class CommandDocument:
    content: Mapping[str, Any]

    def __post_init__(self) -> None:
        if str(self.content.get("schemaVersion")) != "2.2":
            raise InvalidDocumentError(
                f"schemaVersion {self.content.get('schemaVersion')!r}: only 2.2 is run"
            )
        for step in self.steps_declared():
            if step.get("action") != SHELL_ACTION:
                raise InvalidDocumentError(
                    f"step {step.get('name')!r}: action {step.get('action')!r}, only {SHELL_ACTION}"
                )

    def steps_declared(self) -> list[Mapping[str, Any]]:
        steps = self.content.get("mainSteps")
        if not isinstance(steps, list) or not steps:
            raise InvalidDocumentError("mainSteps: a non-empty list is required")
        return steps

    @property
    def parameters(self) -> Mapping[str, Mapping[str, Any]]:
        declared = self.content.get("parameters") or {}
        return declared if isinstance(declared, Mapping) else {}

    def values(self, given: Mapping[str, Sequence[str]]) -> dict[str, str]:
        """Each parameter's value after SSM's checks (given as SendCommand's lists of strings)."""
        problems: list[str] = []
        values: dict[str, str] = {}
        for name in given:
            if name not in self.parameters:
                problems.append(
                    f"{name}: not a parameter of this document (allowed: {', '.join(self.parameters)})"
                )
        for name, spec in self.parameters.items():
            if name in given:
                value = given[name]
                if isinstance(value, str) or len(value) != 1:
                    problems.append(f"{name}: a String parameter takes exactly one value, got {value!r}")
                    continue
                text = str(value[0])
            elif "default" in spec:
                text = str(spec["default"])
            else:
                problems.append(f"{name}: required and not given")
                continue
            pattern = spec.get("allowedPattern")
            if pattern is not None and re.search(str(pattern), text) is None:
                problems.append(f"{name}: {text[:80]!r} does not match allowedPattern {pattern}")
                continue
            values[name] = text
        if problems:
            raise InvalidParametersError("; ".join(problems))
        return values

    def render(self, given: Mapping[str, Sequence[str]]) -> list[ShellStep]:
        values = self.values(given)

        def substitute(text: str, where: str) -> str:
            def replace(match: re.Match[str]) -> str:
                name = match.group(1)
                if name not in values:
                    raise InvalidDocumentError(
                        f"{where}: {{{{ {name} }}}} names no parameter of the document"
                    )
                return values[name]

            return _PLACEHOLDER.sub(replace, text)

        steps: list[ShellStep] = []
        for step in self.steps_declared():
            name = str(step.get("name"))
            inputs = step.get("inputs") or {}
            commands = inputs.get("runCommand")
            if isinstance(commands, str):
                commands = [commands]
            if not isinstance(commands, list) or not commands:
                raise InvalidDocumentError(f"step {name}: inputs.runCommand is required")
            timeout_text = substitute(
                str(inputs.get("timeoutSeconds", DEFAULT_STEP_TIMEOUT_S)), f"step {name}"
            )
            if not timeout_text.isdigit():
                raise InvalidDocumentError(
                    f"step {name}: timeoutSeconds {timeout_text!r} is not a number of seconds"
                )
            # SSM writes the commands one per line into the step's script and runs it with sh -c
            # semantics of bash: what an instance runs, byte for byte, after substitution.
            script = "\n".join(substitute(str(c), f"step {name}") for c in commands)
            steps.append(ShellStep(name=name, script=script, timeout_s=int(timeout_text)))
        return steps


def agent_document(template: Any, logical_id: str = "AgentDocument") -> CommandDocument:
    """The template's command document (``template``: a ``storagebench_local.template.Template``)."""
    resource = template.resource(logical_id, ("AWS::SSM::Document",))
    content = template.resolve(resource["Properties"]["Content"])
    if not isinstance(content, Mapping):
        raise InvalidDocumentError(f"{logical_id}: Content is not a document")
    return CommandDocument(content)
