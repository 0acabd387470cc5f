"""The agent's pause and recovery figures of a phase (``agent.node_loss``), validated onto its records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from storagebench.results.node_loss import NodeLoss
from storagebench.results.records import ResultRecord


def with_node_loss(
    records: list[ResultRecord], phase: Mapping[str, Any], plan_phase: Mapping[str, Any]
) -> tuple[list[ResultRecord], list[str]]:
    """The records with their direction's ``node_loss``, and a problem line for each figure missing.

    A phase planned with a node loss whose agent measured nothing says so (the logs' reason when
    the agent gave one): a removal whose effect is not recorded is not a result.
    """
    planned = plan_phase.get("node_loss")
    if not isinstance(planned, Mapping):
        return records, []
    error = phase.get("node_loss_error")
    if isinstance(error, str):
        return records, [f"node loss not measured: {error}"]
    measured = phase.get("node_loss")
    if not isinstance(measured, Mapping):
        return records, ["node loss planned but the agent recorded no measurement"]
    out: list[ResultRecord] = []
    problems: list[str] = []
    for record in records:
        if record.client is not None or record.direction not in measured:
            out.append(record)
            continue
        try:
            loss = NodeLoss(
                role=planned.get("role"),
                index=planned.get("index"),
                at_s=planned.get("at_s"),
                iops=measured[record.direction],
                bw=measured.get(f"{record.direction}_bw"),
            )
        except ValidationError as exc:
            problems.append(
                f"node loss of {record.direction}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
            )
            out.append(record)
            continue
        out.append(record.model_copy(update={"node_loss": loss}))
    return out, problems
