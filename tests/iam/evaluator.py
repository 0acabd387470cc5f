"""A real IAM policy evaluator for the tests: @cloud-copilot/iam-simulate, pinned in tools/iam-simulate.

``evaluate(requests)`` sends the whole batch to one ``node tools/iam-simulate/simulate.mjs`` process
and returns one ``Decision`` per request: Allowed, ImplicitlyDenied or ExplicitlyDenied, the statements
that granted or denied it, every statement the evaluator matched (action, resource, condition), the
context keys it ignored (keys the action does not define: a case naming one tests nothing), and an
error when it could not evaluate (an invalid policy, action or resource ARN).

``make setup`` installs the evaluator (``npm ci`` in tools/iam-simulate). Without node or the install
the tests are skipped with the reason, except under ``CI=true``, where they fail with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .template_policies import REPO, IdentityPolicy, RenderedTemplate, ResourcePolicy, Role

TOOL = REPO / "tools" / "iam-simulate"
SCRIPT = TOOL / "simulate.mjs"
INSTALLED = TOOL / "node_modules" / "@cloud-copilot" / "iam-simulate" / "package.json"
EVALUATOR = "@cloud-copilot/iam-simulate"
ALLOWED = "Allowed"
DENIALS = ("ImplicitlyDenied", "ExplicitlyDenied")


def unavailable() -> str | None:
    """Why the evaluator cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (Node.js 20: apt-get install nodejs npm), needed by tools/iam-simulate"
    if not INSTALLED.is_file():
        return f"{EVALUATOR} is not installed in {TOOL.relative_to(REPO)} (make setup runs npm ci there)"
    return None


def version() -> str:
    return str(json.loads(INSTALLED.read_text(encoding="utf-8"))["version"])


@dataclass(frozen=True)
class Request:
    """One authorization request: a principal's identity policies, the resource's policy, the context."""

    label: str
    principal: str  # the session's ARN (arn:aws:sts::<account>:assumed-role/<role>/<session>)
    action: str
    resource: str  # an ARN, or "*" for an action without resource types
    context: Mapping[str, str | list[str]]
    identity_policies: tuple[IdentityPolicy, ...]
    resource_policy: ResourcePolicy | None = None
    account: str = "123456789012"

    def payload(self, index: int) -> dict[str, Any]:
        return {
            "id": str(index),
            "principal": self.principal,
            "action": self.action,
            "resource": self.resource,
            "accountId": self.account,
            "context": dict(self.context),
            "identityPolicies": [{"name": p.name, "policy": p.document} for p in self.identity_policies],
            "resourcePolicy": self.resource_policy.document if self.resource_policy else None,
        }

    @classmethod
    def of(
        cls,
        label: str,
        rendered: RenderedTemplate,
        role: Role | str,
        session: str,
        action: str,
        resource: str,
        context: Mapping[str, str | list[str]] | None = None,
    ) -> Request:
        """A request of ``role``'s session ``session`` (aws:userid, aws:PrincipalArn... filled in),
        with the resource's policy from the template when it has one (buckets, keys)."""
        role = rendered.role(role) if isinstance(role, str) else role
        base: dict[str, str | list[str]] = {
            "aws:userid": role.userid(session),
            "aws:PrincipalArn": role.arn,
            "aws:PrincipalAccount": rendered.values.account,
            "aws:SecureTransport": "true",  # every SDK and the agent call AWS over HTTPS
        }
        return cls(
            label,
            role.session_arn(session),
            action,
            resource,
            {**base, **(context or {})},
            role.policies,
            rendered.resource_policy(resource),
            rendered.values.account,
        )


@dataclass(frozen=True)
class StatementMatch:
    policy_type: str  # identity | resource
    policy: str | None
    sid: str | None
    index: int  # 1-based, within its policy
    effect: str
    action_match: bool
    resource_match: bool
    principal_match: str | None
    condition_match: str  # Match | NoMatch
    conditions: tuple[tuple[str, str, bool], ...] = ()  # (operator, key, matched), in document order

    @property
    def failed_conditions(self) -> list[tuple[str, str]]:
        return [(operator, key) for operator, key, matched in self.conditions if not matched]

    @property
    def applies(self) -> bool:
        """Action, resource (and principal, in a resource policy) match: the condition decides."""
        return (
            self.action_match
            and self.resource_match
            and self.principal_match in (None, "Match", "AccountLevelMatch", "SessionRoleMatch")
        )


@dataclass(frozen=True)
class Decision:
    request: Request
    decision: str | None
    error: str | None
    ignored_context_keys: tuple[str, ...]
    grants: tuple[dict[str, Any], ...]
    denials: tuple[dict[str, Any], ...]
    statements: tuple[StatementMatch, ...] = field(repr=False)
    unvalidated: str | None = None  # decided without the evaluator's input validation, and why

    @property
    def allowed(self) -> bool:
        return self.decision == ALLOWED

    def explain(self) -> str:
        request = self.request
        granted = [f"{g.get('policy')}#{g.get('sid') or g.get('index')}" for g in self.grants]
        denied = [
            f"{d.get('policyType')}:{d.get('policy')}#{d.get('sid') or d.get('index')} ({d.get('kind')})"
            for d in self.denials
        ]
        return (
            f"{request.label}: {request.action} on {request.resource} by {request.principal}\n"
            f"  context {json.dumps(dict(request.context), sort_keys=True)}\n"
            f"  -> {self.decision or 'ERROR'}"
            + (f" error {self.error}" if self.error else "")
            + (f" granted by {granted}" if granted else "")
            + (f" denied by {denied}" if denied else "")
            + (
                f" ignored context keys {list(self.ignored_context_keys)}"
                if self.ignored_context_keys
                else ""
            )
            + (f" ({self.unvalidated})" if self.unvalidated else "")
        )


class EvaluatorError(RuntimeError):
    pass


def evaluate(requests: Sequence[Request], timeout_s: float = 600) -> list[Decision]:
    """Every request's decision, from one evaluator process."""
    if not requests:
        return []
    missing = unavailable()
    if missing:
        raise EvaluatorError(missing)
    payload = json.dumps({"requests": [r.payload(i) for i, r in enumerate(requests)]})
    done = subprocess.run(
        ["node", str(SCRIPT)],
        input=payload,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=TOOL,
        check=False,
        env={**os.environ, "NODE_OPTIONS": ""},
    )
    if done.returncode != 0:
        raise EvaluatorError(f"{SCRIPT.name} exited {done.returncode}: {done.stderr[-4000:]}")
    results = json.loads(done.stdout)["results"]
    if len(results) != len(requests):
        raise EvaluatorError(f"{len(requests)} requests, {len(results)} results")
    decisions = []
    for request, result in zip(requests, results, strict=True):
        decisions.append(
            Decision(
                request,
                result["decision"],
                result["error"],
                tuple(result["ignoredContextKeys"]),
                tuple(result["grants"]),
                tuple(result["denials"]),
                tuple(
                    StatementMatch(
                        s["policyType"],
                        s["policy"],
                        s["sid"],
                        int(s["index"]),
                        s["effect"],
                        bool(s["actionMatch"]),
                        bool(s["resourceMatch"]),
                        s["principalMatch"],
                        str(s["conditionMatch"]),
                        tuple((c["operator"], c["key"], bool(c["matches"])) for c in s["conditions"]),
                    )
                    for s in result["statements"]
                ),
                result.get("unvalidated"),
            )
        )
    return decisions
