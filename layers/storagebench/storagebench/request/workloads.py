"""The request's workloads: a profile or a suite from the library with overrides, and the
workloads they resolve to."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from storagebench.request.fields import Slug
from storagebench.request.node_loss import NODE_LOSS_DESCRIPTION, NodeLossSpec
from storagebench.request.problems import Problems
from storagebench.request.repetitions import (
    REPETITIONS_DESCRIPTION,
    STEADY_STATE_DESCRIPTION,
    Repetitions,
    SteadyState,
)
from storagebench.request.rules import RequestModel, rule
from storagebench.workloads import SUITES, get_profile
from storagebench.workloads.naming import workload_name
from storagebench.workloads.profile import ParamsError, check_params


class WorkloadRef(RequestModel):
    """A profile from the library (or a whole suite), with overrides."""

    profile: str | None = Field(default=None, description="a profile name from `storagebench workloads`")
    suite: str | None = Field(default=None, description="every profile of a suite: " + ", ".join(SUITES))
    id: Slug | None = Field(
        default=None,
        description="names this workload in results; defaults to the profile, with the params that "
        "differ from its defaults: std-randread-4k[bs=8k]",
    )
    scale: float = Field(default=1.0, gt=0, le=100, description="multiplies sizes, counts and runtimes")
    params: dict[str, Any] = Field(
        default_factory=dict, description="overrides; a list sweeps a sweepable one"
    )
    targets: list[str] | None = Field(
        default=None, description="target ids to run on; all targets when omitted"
    )
    repetitions: Repetitions | None = Field(
        default=None,
        description="this workload's repetitions, instead of the request's: " + REPETITIONS_DESCRIPTION,
    )
    steady_state: SteadyState | None = Field(default=None, description=STEADY_STATE_DESCRIPTION)
    node_loss: NodeLossSpec | None = Field(default=None, description=NODE_LOSS_DESCRIPTION)

    @rule("profile", "suite", "params", "id")
    def _profile(self, problems: Problems) -> None:
        """Exactly one of profile and suite, which exists; a profile's params are checked (and
        normalised: sizes as fio reads them)."""
        if (self.profile is None) == (self.suite is None):
            message = "give exactly one of profile or suite"
            problems.add(("profile",), self.profile, message, missing=self.profile is None)
        elif self.suite is not None:
            if self.suite not in SUITES:
                problems.add(("suite",), self.suite, f"unknown suite; allowed: {', '.join(SUITES)}")
            if self.params:
                problems.add(
                    ("params",), self.params, "a suite takes no params; list its profiles to override"
                )
            if self.id is not None:
                problems.add(("id",), self.id, "a suite's workloads are named after their profiles")
        elif self.profile is not None:
            try:
                profile = get_profile(self.profile)
            except KeyError as exc:
                problems.add(("profile",), self.profile, str(exc.args[0]))
            else:
                try:
                    self.params = check_params(profile, self.params)
                except ParamsError as exc:
                    for error in exc.errors:
                        loc: tuple[str | int, ...] = ("params", error.param)
                        if error.index is not None:
                            loc = (*loc, error.index)
                        problems.add(loc, error.value, error.allowed, missing=error.value is None)

    def expand(self) -> list[ResolvedWorkload]:
        names = SUITES[self.suite] if self.suite else (self.profile,)
        return [
            ResolvedWorkload(
                id=self.id
                or (workload_name(get_profile(str(name)), self.params) if self.profile else str(name)),
                profile=str(name),
                scale=self.scale,
                params=self.params if self.profile else {},
                targets=self.targets,
                repetitions=self.repetitions,
                steady_state=self.steady_state,
                node_loss=self.node_loss,
            )
            for name in names
        ]


class ResolvedWorkload(RequestModel):
    """A workload after suites are expanded: one profile, validated params."""

    id: str
    profile: str
    scale: float
    params: dict[str, Any]
    targets: list[str] | None
    repetitions: Repetitions | None
    steady_state: SteadyState | None = None
    node_loss: NodeLossSpec | None = None
