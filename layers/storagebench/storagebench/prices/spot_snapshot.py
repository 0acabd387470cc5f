"""The bundled, dated Spot price snapshot: what estimates use where a config buys Spot.

``spot_snapshot.json`` (next to this module) holds, per region and instance type, a published Spot
price with its source and date (the file says where each figure was read and why that date). It is
for estimates only: dry runs, guardrails, ``storagebench cost`` and the economy benchmark. A run is
priced at what its instance really paid (``prices.spot.paid`` over the Spot price history).

A type the snapshot lacks has no Spot estimate: :func:`spot_estimate` answers None and the caller
estimates with the on-demand price, the upper bound of any Spot price (EC2 never charges more), and
says so (:func:`unknown_note`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from storagebench.prices.models import Price

__all__ = ["SPOT_SNAPSHOT_PATH", "SpotSnapshot", "load_spot_snapshot", "spot_estimate", "unknown_note"]

SPOT_SNAPSHOT_PATH = Path(__file__).with_name("spot_snapshot.json")


class SpotRate(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float = Field(gt=0)
    unit: str = "Hrs"


class SpotSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    snapshot_version: str
    as_of: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    date_basis: str
    source: str
    use: str
    regions: dict[str, dict[str, SpotRate]]
    absent: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="types looked for and not found, with why"
    )


@cache
def load_spot_snapshot(path: Path = SPOT_SNAPSHOT_PATH) -> SpotSnapshot:
    return SpotSnapshot.model_validate_json(path.read_text(encoding="utf-8"))


def spot_estimate(region: str, instance_type: str, snapshot: SpotSnapshot | None = None) -> Price | None:
    """The snapshot's Spot price of the type in the region (None: not in the snapshot)."""
    book = snapshot or load_spot_snapshot()
    rate = book.regions.get(region, {}).get(instance_type)
    if rate is None:
        return None
    return Price(
        usd=rate.usd,
        unit=rate.unit,
        region=region,
        source="spot-snapshot",
        as_of=book.as_of,
        description=f"{instance_type} Spot, lowest across {region}'s zones (AWS Spot price feed)",
    )


def unknown_note(region: str, instance_type: str, snapshot: SpotSnapshot | None = None) -> str:
    """What an estimate says when it has no Spot price for a type."""
    book = snapshot or load_spot_snapshot()
    why = book.absent.get(region, {}).get(instance_type, "not in the bundled Spot price snapshot")
    return f"Spot price unknown for {instance_type} in {region} ({why}): on-demand used as the upper bound"
