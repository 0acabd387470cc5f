"""A kind no module implements fails loudly wherever it used to be mispriced or misdrawn.

Before the registry, an unknown kind cost $0 (and so passed the cost guardrail), showed as
"directory ?" in the report, planned as a local disk and was created in AWS as FSx for Lustre.
The request model refuses such a kind; these tests reach past it (``model_construct``) to prove
nothing downstream quietly takes a default.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storagebench.analysis.annotate import burst_labels
from storagebench.cli.request_summary import summarize_request
from storagebench.core.errors import ProvisioningError
from storagebench.core.state import FileSystemRef, FileSystemSpec, Resources
from storagebench.costs.monthly import monthly_cost
from storagebench.costs.run_cost import usage_for_config
from storagebench.kinds import UnknownKindError
from storagebench.planning.duration import config_duration, target_rates
from storagebench.planning.local import local_targets
from storagebench.planning.preview import instances_per_config
from storagebench.planning.steps import target_context
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.report.inputs import storage_text, target_text
from storagebench.request import parse_request
from storagebench.request.model import BenchmarkRequest, Config
from storagebench.workflow.bindings import agent_targets, launch_spec, storage_option

STRAY = "fsx_openzfs"


class StrayTarget:
    """What a new kind looks like to code that was never told about it."""

    kind = STRAY
    id = "zfs"
    path = "/mnt/zfs"  # the attribute the old report fallback read ("directory ?")
    filesystem = "zfs"


def _request() -> BenchmarkRequest:
    request = parse_request(
        {
            "name": "stray",
            "configs": [
                {
                    "id": "a",
                    "instance_type": "c5.large",
                    "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}],
                }
            ],
            "workloads": [{"profile": "std-randread-4k"}],
        }
    )
    config = request.configs[0]
    stray = Config.model_construct(**{**dict(config), "targets": [StrayTarget(), *config.targets]})
    return request.model_copy(update={"configs": [stray]})


REQUEST = _request()
CONFIG = REQUEST.configs[0]
TARGET: Any = CONFIG.targets[0]
MANIFEST = {"steps": [{"id": "s1", "target": "zfs"}]}


PLACES: dict[str, Callable[[], object]] = {
    "monthly cost (was $0)": lambda: monthly_cost(CONFIG, SnapshotPriceBook("us-east-1")),
    "run cost usage (was $0)": lambda: usage_for_config(CONFIG, 3600.0),
    "report text (was 'directory ?')": lambda: target_text(TARGET),
    "report storage column": lambda: storage_text(CONFIG, CONFIG.id, {}),
    "history key": lambda: storage_option(CONFIG, TARGET.id),
    "launch volumes": lambda: launch_spec(CONFIG, "r1", {}),
    "agent bindings": lambda: agent_targets(CONFIG, Resources(instance_id="i-1"), "us-east-1"),
    "local bindings": lambda: local_targets(CONFIG),
    "planner context": lambda: target_context(CONFIG, TARGET),
    "rates": lambda: target_rates(CONFIG, TARGET),
    "duration": lambda: config_duration(REQUEST, CONFIG),
    "instances per config": lambda: instances_per_config(CONFIG),
    "burst labels": lambda: burst_labels(
        {"steps": [{"id": "s1", "target": "zfs"}]}, Path("/nonexistent"), CONFIG
    ),
    "request summary": lambda: summarize_request(REQUEST),
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_an_unknown_kind_is_refused(place: str) -> None:
    with pytest.raises(UnknownKindError, match=STRAY):
        PLACES[place]()


def test_the_aws_file_system_driver_refuses_a_kind_it_has_no_driver_for() -> None:
    from storagebench.adapters.aws.filesystems import AwsFileSystems

    filesystems = AwsFileSystems.__new__(AwsFileSystems)  # no clients: it must refuse before any call
    spec = FileSystemSpec.model_construct(
        target_id="zfs", kind=STRAY, creation_token="t", tags={}, settings={}
    )
    ref = FileSystemRef.model_construct(target_id="zfs", kind=STRAY, file_system_id="fs-1")
    calls = (
        lambda: filesystems.create(spec, None),
        lambda: filesystems.status(ref),
        lambda: filesystems.delete(ref),
    )
    for call in calls:
        with pytest.raises(ProvisioningError, match=f"'{STRAY}'.*efs, fsx_lustre"):
            call()
