"""A directory on the machine running the agent (local runs): benchmarked in place, billed elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from storagebench.core.state import Resources
from storagebench.kinds.base import Bill, StorageKind
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import EbsTarget, LocalTarget


class Local(StorageKind[LocalTarget]):
    name = "local"

    def option_key(self, target: LocalTarget) -> str:
        return f"local:{target.path}"

    def report_text(self, target: LocalTarget) -> tuple[str, str]:
        text = f"directory {target.path}"
        return text, text

    def bill(self, target: LocalTarget, instance_type: str) -> Bill:
        if target.backed_by:  # the targets that hold it are billed with the config: it is in the total
            backing = ", ".join(target.backed_by)
            return Bill(
                notes=(f"{target.id}: local path {target.path} is backed by {backing}, priced as such",)
            )
        return Bill(
            unpriced=(
                f"{target.id}: local path {target.path} not priced: whatever backs it (set up by the "
                "config's hooks or another system) is outside this config's bill",
            )
        )

    def agent_spec(self, target: LocalTarget, resources: Resources, region: str) -> TargetSpec:
        return self._directory(target)

    def local_spec(self, target: LocalTarget, emulate_ebs: Callable[[EbsTarget], TargetSpec]) -> TargetSpec:
        return self._directory(target)

    @staticmethod
    def _directory(target: LocalTarget) -> TargetSpec:
        return {"id": str(target.id), "kind": "directory", "path": target.path}
