"""The bundled catalog: sourced values, AWS figures, and internal consistency."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from storagebench.catalog import Catalog, ebs_volume_type, instance_type, load_catalog

REQUIRED_INSTANCES = [
    "c5.large",
    "c5.xlarge",
    "c5.2xlarge",
    "c5.4xlarge",
    "c5.9xlarge",
    "m5.large",
    "m5.xlarge",
    "m5.2xlarge",
    "m6i.large",
    "m6i.xlarge",
    "m6i.2xlarge",
    "r5b.large",
    "r5b.xlarge",
    "r5b.4xlarge",
    "r5b.24xlarge",
    "i3en.large",
    "i3en.xlarge",
    "i3en.24xlarge",
    "c7g.large",
    "c7g.xlarge",
    "c7g.4xlarge",
    "m7g.large",
    "m7g.xlarge",
    "m7g.4xlarge",
    "r3.4xlarge",
]


def _raw() -> dict[str, Any]:
    text = resources.files("storagebench.catalog").joinpath("catalog.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _cited(node: object) -> list[str]:
    """Every source id cited anywhere below ``node`` (fields named source or *_source)."""
    found: list[str] = []
    if isinstance(node, BaseModel):
        for name in type(node).model_fields:
            value = getattr(node, name)
            if (name == "source" or name.endswith("_source")) and isinstance(value, str):
                found.append(value)
            found.extend(_cited(value))
    elif isinstance(node, dict):
        for value in node.values():
            found.extend(_cited(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_cited(value))
    return found


def test_at_least_24_instances_including_the_required_ones() -> None:
    instances = load_catalog().instances
    assert len(instances) >= 24
    missing = [name for name in REQUIRED_INSTANCES if name not in instances]
    assert missing == []


def test_every_cited_source_resolves_and_is_complete() -> None:
    catalog = load_catalog()
    cited = set(_cited(catalog)) | {src for rule in catalog.package_rules.values() for src in rule.values()}
    assert {"ebs-general-purpose", "ebs-optimized", "ec2-pricing", "ec2-instance-store"} <= cited
    assert cited <= set(catalog.sources)
    assert set(catalog.sources) - cited == set(), "every source in the table backs some value"
    for source_id, source in catalog.sources.items():
        assert source.title, source_id
        assert source.url.startswith("https://"), source_id
        sessions = ("2026-11-21", "2026-11-25", "2026-11-26", "2026-12-07")  # reading sessions
        assert source.retrieved in sessions, source_id


def test_every_instance_cites_spec_and_price_sources() -> None:
    for name, spec in load_catalog().instances.items():
        assert spec.spec_source is not None, name
        assert spec.price_source is not None, name
        assert spec.on_demand_usd_per_hour_us_east_1 is not None, name


def test_unknown_source_is_rejected() -> None:
    data = _raw()
    data["instances"]["c5.large"]["price_source"] = "no-such-source"
    with pytest.raises(ValidationError, match="no-such-source"):
        Catalog.model_validate(data)


def test_unverified_values_say_so() -> None:
    catalog = load_catalog()
    graviton3 = catalog.sources["ebs-optimized-graviton3"]
    assert graviton3.note is not None
    assert "UNVERIFIED" in graviton3.note
    for name in ("c7g.large", "c7g.4xlarge", "m7g.large", "m7g.4xlarge"):
        assert catalog.instances[name].source == "ebs-optimized-graviton3"
    magnetic = catalog.sources["ebs-magnetic"].note
    assert magnetic is not None
    assert "unverified" in magnetic


def test_gp3_keeps_2025_maxima_and_pre_2025_history() -> None:
    gp3 = ebs_volume_type("gp3")
    assert gp3.size_gib.max == 65536
    assert gp3.max_iops == 80000
    assert gp3.max_mibps == 2000
    assert gp3.iops is not None
    assert (gp3.iops.max, gp3.iops.max_per_gib, gp3.iops.default) == (80000, 500, 3000)
    assert gp3.throughput_mibps is not None
    assert (gp3.throughput_mibps.max, gp3.throughput_mibps.max_per_iops) == (2000, 0.25)
    assert gp3.history is not None
    for before in ("16 TiB", "16,000 IOPS", "1,000 MiB/s"):
        assert before in gp3.history


def test_gp2_rules_match_the_ebs_user_guide() -> None:
    gp2 = ebs_volume_type("gp2")
    assert (gp2.baseline_iops_per_gib, gp2.baseline_iops_min, gp2.max_iops, gp2.max_mibps) == (
        3,
        100,
        16000,
        250,
    )
    assert gp2.gp2_burst is not None
    assert gp2.gp2_burst.burst_iops == 3000
    assert gp2.gp2_burst.credit_capacity == 5_400_000
    assert gp2.gp2_burst.no_burst_from_gib == 1000
    assert gp2.mibps_by_size is not None
    tiers = [(t.up_to_gib, t.value, t.burst_value) for t in gp2.mibps_by_size]
    assert tiers == [(170, 128, None), (333, 128, 250), (None, 250, None)]


def test_provisioned_iops_and_hdd_rules() -> None:
    io1, io2 = ebs_volume_type("io1"), ebs_volume_type("io2")
    assert io1.iops is not None and io2.iops is not None
    assert (io1.iops.max, io1.iops.max_per_gib, io1.max_mibps) == (64000, 50, 1000)
    assert (io1.mibps_per_iops, io1.mibps_per_iops_cap, io1.high_iops_from, io1.high_iops_io_kib) == (
        0.25,
        500,
        32000,
        16,
    )
    assert (io2.iops.max, io2.iops.max_per_gib, io2.max_mibps, io2.mibps_per_iops) == (
        256000,
        1000,
        4000,
        0.256,
    )
    assert io2.size_gib.max == 65536
    st1, sc1 = ebs_volume_type("st1"), ebs_volume_type("sc1")
    assert st1.throughput_credits is not None and sc1.throughput_credits is not None
    assert (st1.throughput_credits.baseline_mibps_per_tib, st1.throughput_credits.burst_mibps_per_tib) == (
        40,
        250,
    )
    assert (sc1.throughput_credits.baseline_mibps_per_tib, sc1.throughput_credits.burst_mibps_per_tib) == (
        12,
        80,
    )
    assert st1.size_gib.min == 125
    assert (st1.io_size_kib, ebs_volume_type("gp2").io_size_kib) == (1024, 256)


def test_published_ebs_optimized_rows() -> None:
    def ebs_optimized(name: str) -> tuple[float, int, float, int, int | None]:
        """Baseline MB/s and IOPS, maximum MB/s and IOPS, burst minutes a day."""
        row = instance_type(name)
        assert row is not None, name
        return (
            row.ebs_baseline_mbps,
            row.ebs_baseline_iops,
            row.ebs_max_mbps,
            row.ebs_max_iops,
            row.ebs_burst_minutes_per_day,
        )

    assert ebs_optimized("c5.large") == (81.25, 4000, 593.75, 20000, 30)
    assert ebs_optimized("r5b.large")[:4] == (156.25, 5417, 1250, 43333)
    big = instance_type("r5b.24xlarge")
    assert big is not None
    assert (big.ebs_max_mbps, big.ebs_max_iops, big.ebs_burst_minutes_per_day) == (7500, 260000, None)


def test_r3_4xlarge_is_xen_with_2000_mbps_ebs_optimization() -> None:
    r3 = instance_type("r3.4xlarge")
    assert r3 is not None
    assert r3.nitro is False
    assert r3.ebs_max_bandwidth_mbit == 2000
    assert r3.ebs_max_mbps == 250
    assert r3.ebs_max_iops == 16000
    assert r3.ebs_optimized_by_default is False
    assert r3.instance_store is not None
    assert (r3.instance_store.devices, r3.instance_store.device_gb, r3.instance_store.media) == (
        1,
        320,
        "ssd",
    )


def test_i3en_instance_store_devices() -> None:
    expected = {"i3en.large": (1, 1250), "i3en.xlarge": (1, 2500), "i3en.24xlarge": (8, 7500)}
    for name, (devices, gb) in expected.items():
        spec = instance_type(name)
        assert spec is not None and spec.instance_store is not None
        assert (spec.instance_store.devices, spec.instance_store.device_gb) == (devices, gb)
        assert spec.instance_store.media == "nvme"


@pytest.mark.parametrize("name", REQUIRED_INSTANCES)
def test_instance_rows_are_internally_consistent(name: str) -> None:
    spec = instance_type(name)
    assert spec is not None
    # The 30-min flag exactly when the maximum exceeds the baseline.
    bursts = spec.ebs_max_mbps > spec.ebs_baseline_mbps or spec.ebs_max_iops > spec.ebs_baseline_iops
    assert (spec.ebs_burst_minutes_per_day == 30) is bursts
    assert spec.ebs_baseline_mbps <= spec.ebs_max_mbps
    assert spec.ebs_baseline_iops <= spec.ebs_max_iops
    # MB/s (128 KiB I/O) is the published Mbps / 8, up to AWS's rounding (i3en.large: 577 Mbps, 72.1 MB/s).
    assert spec.ebs_max_bandwidth_mbit is not None and spec.ebs_baseline_bandwidth_mbit is not None
    assert spec.ebs_max_mbps * 8 == pytest.approx(spec.ebs_max_bandwidth_mbit, abs=1)
    assert spec.ebs_baseline_mbps * 8 == pytest.approx(spec.ebs_baseline_bandwidth_mbit, abs=1)
    assert spec.arch == ("arm64" if name.startswith(("c7g", "m7g")) else "x86_64")
    assert spec.nitro is (name != "r3.4xlarge")
    if spec.instance_store is not None:
        assert spec.instance_store.device_gb is not None
        assert spec.instance_store.device_gib == pytest.approx(
            spec.instance_store.device_gb * 1e9 / 2**30, abs=0.01
        )


def test_efs_and_fsx_rules() -> None:
    catalog = load_catalog()
    assert (catalog.efs.provisioned_mibps.min, catalog.efs.provisioned_mibps.max) == (1, 3414)
    assert (catalog.efs.baseline_mibps_per_tib, catalog.efs.burst_mibps_per_tib) == (50, 100)
    assert catalog.efs.elastic_per_client_max_mibps == 1500
    fsx = catalog.fsx_lustre
    assert fsx["SCRATCH_1"].capacity_gib_allowed == [1200, 2400]
    assert fsx["SCRATCH_1"].capacity_gib_step == 3600
    assert fsx["PERSISTENT_2"].per_unit_mibps_per_tib == [125, 250, 500, 1000]
    tiers = {t.per_unit: t for t in fsx["PERSISTENT_2"].tiers}
    assert tiers[125].network_baseline_mbps_per_tib == 320
    assert tiers[125].network_burst_mbps_per_tib == 1300
    assert tiers[1000].network_burst_mbps_per_tib is None
    assert fsx["SCRATCH_2"].burst_mibps_per_tib == 1300
