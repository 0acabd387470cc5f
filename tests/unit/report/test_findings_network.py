"""The report's "instance-bound: network": a delivered result the client's network held."""

from __future__ import annotations

from storagebench.report.findings import FINDING_PREFIXES, cell_flags, label_findings


def test_the_network_label_is_a_finding_and_a_cell_flag_beside_the_ebs_one() -> None:
    assert "instance-bound:network".startswith(FINDING_PREFIXES)  # the report keeps it (build.py)
    labels = {"delivered:0.97": 3, "instance-bound:network": 3}
    (finding,) = label_findings("r5b-io2-controllers", "vsan-randwrite-256k", "256k random write", labels, 3)
    assert (finding.severity, finding.category) == ("info", "delivery")
    assert finding.config_id == "r5b-io2-controllers"
    assert finding.text == (
        "r5b-io2-controllers, 256k random write: instance-bound: network: the client's network, not the "
        "storage, set the ceiling in every repetition"
    )
    assert cell_flags(labels) == ["instance-bound: network"]
    assert cell_flags({"instance-bound": 1}) == ["instance-bound"]
    (ebs,) = label_findings("io1", "w", "w", {"instance-bound": 1}, 1)
    assert ebs.text == "io1, w: the instance's EBS limit, not the volume, set the ceiling"
