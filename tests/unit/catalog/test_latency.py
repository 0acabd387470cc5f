"""Per-type service times in the catalog: they load, keep AWS's published bounds, and bad ones are refused."""

from __future__ import annotations

import json
import math
from importlib import resources
from statistics import NormalDist
from typing import Any

import pytest
from pydantic import ValidationError

from storagebench.agent.twin.model import ServiceTime
from storagebench.catalog import Catalog, ebs_volume_type, envelope, load_catalog
from storagebench.catalog.envelope import emulation_latency
from storagebench.catalog.models import LatencyModel

Z99 = NormalDist().inv_cdf(0.99)
SSD = ("gp2", "gp3", "io1", "io2")
HDD = ("st1", "sc1", "standard")


def _raw() -> dict[str, Any]:
    text = resources.files("storagebench.catalog").joinpath("catalog.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _latency(volume_type: str) -> LatencyModel:
    latency = ebs_volume_type(volume_type).latency
    assert latency is not None, volume_type
    return latency


def _sigma(p50: float, p99: float) -> float:
    return math.log(p99 / p50) / Z99


def _mean_ms(volume_type: str) -> float:
    """Mean of the (single-mode) lognormal: p50 x exp(sigma^2 / 2)."""
    (mode,) = _latency(volume_type).modes
    return mode.p50_ms * math.exp(_sigma(mode.p50_ms, mode.p99_ms) ** 2 / 2)


def _share_above_ms(volume_type: str, threshold_ms: float) -> float:
    (mode,) = _latency(volume_type).modes
    z = math.log(threshold_ms / mode.p50_ms) / _sigma(mode.p50_ms, mode.p99_ms)
    return 1 - NormalDist().cdf(z)


def test_every_ebs_type_has_a_sourced_unimodal_latency() -> None:
    catalog = load_catalog()
    for name, spec in catalog.ebs.items():
        assert spec.latency is not None, name
        assert spec.latency.source in catalog.sources, name
        if spec.latency.bound_source is not None:
            assert spec.latency.bound_source in catalog.sources, name
        assert len(spec.latency.modes) == 1, f"{name}: a bimodal twin would trip the bimodal detector"
        assert len(spec.latency.basis.split()) >= 15, f"{name}: basis should say how the numbers were derived"


def test_catalog_version_marks_the_latency_edition() -> None:
    assert load_catalog().catalog_version == "2026-11-26.1"


def test_io2_block_express_is_fastest_and_meets_aws_design_figures() -> None:
    io2 = _latency("io2").modes[0]
    for other in ("gp2", "gp3", "io1"):
        assert io2.p50_ms < _latency(other).modes[0].p50_ms, other
    # AWS (source ebs-optimization): average under 500 us for 16 KiB, and over 10x fewer I/Os above
    # 800 us than General Purpose volumes.
    assert _mean_ms("io2") < 0.5
    for general_purpose in ("gp2", "gp3"):
        assert _share_above_ms("io2", 0.8) * 10 < _share_above_ms(general_purpose, 0.8), general_purpose


def test_ssd_types_stay_single_digit_ms_with_a_narrow_spread() -> None:
    for name in SSD:
        (mode,) = _latency(name).modes
        assert mode.p99_ms < 10, name  # AWS: single-digit millisecond (sub-millisecond for io2)
        assert 1.5 <= mode.p99_ms / mode.p50_ms <= 2.5, name


def test_general_purpose_models_reproduce_the_cited_qd1_measurement() -> None:
    # Source ioping-gp2-gp3: 4 KiB reads at QD1, averages 372-377 us (gp2) and 527 us (gp3).
    assert _mean_ms("gp2") == pytest.approx(0.375, rel=0.05)
    assert _mean_ms("gp3") == pytest.approx(0.527, rel=0.05)
    assert {_latency(t).source for t in ("gp2", "gp3")} == {"ioping-gp2-gp3"}


def test_hdd_types_serve_slower_than_every_ssd_type() -> None:
    slowest_ssd_p99 = max(_latency(name).modes[0].p99_ms for name in SSD)
    for name in HDD:
        (mode,) = _latency(name).modes
        assert mode.p50_ms > slowest_ssd_p99, name
        assert mode.p50_ms >= 5, f"{name}: seek plus rotation is several milliseconds"
    assert _latency("sc1").modes[0].p50_ms > _latency("st1").modes[0].p50_ms


def test_st1_mean_is_the_cited_drive_average_access_time() -> None:
    # Source hdd-7200rpm-mechanics: average read seek 7.4 ms + average rotational latency 4.16 ms.
    assert _mean_ms("st1") == pytest.approx(7.4 + 4.16, rel=0.02)


def test_estimates_say_so_and_name_their_bound() -> None:
    for name in ("io1", "st1", "sc1", "standard"):
        assert "estimate" in _latency(name).basis.lower(), name
    assert _latency("io1").bound_source == "ebs-selection-slides"
    for name in ("st1", "sc1"):
        assert "publishes no" in _latency(name).basis, name


@pytest.mark.parametrize("volume_type", sorted(_raw()["ebs"]))
def test_emulation_latency_is_what_the_twin_reads(volume_type: str) -> None:
    latency = emulation_latency(volume_type)
    assert set(latency) == {"modes", "source"}
    assert json.loads(json.dumps(latency)) == latency
    (mode,) = latency["modes"]
    assert set(mode) == {"weight", "p50_ms", "p99_ms"}
    service = ServiceTime.from_spec(latency, seed=1)
    (twin_mode,) = service.modes
    assert twin_mode.quantile(0.5) * 1000 == pytest.approx(mode["p50_ms"])
    assert twin_mode.quantile(0.99) * 1000 == pytest.approx(mode["p99_ms"], rel=1e-6)


def test_emulation_latency_names_a_type_without_latency(monkeypatch: pytest.MonkeyPatch) -> None:
    bare = ebs_volume_type("gp3").model_copy(update={"latency": None})
    monkeypatch.setattr(envelope, "ebs_volume_type", lambda name: bare)
    with pytest.raises(ValueError, match=r"'gp3' has no latency in the catalog \(ebs\.gp3\.latency\)"):
        emulation_latency("gp3")


def test_emulation_latency_refuses_an_unknown_type() -> None:
    with pytest.raises(KeyError, match="unknown EBS volume type 'gp9'; allowed: gp2, gp3"):
        emulation_latency("gp9")


def _with_gp3_latency(**changes: Any) -> dict[str, Any]:
    data = _raw()
    latency = data["ebs"]["gp3"]["latency"]
    for key, value in changes.items():
        if key in ("weight", "p50_ms", "p99_ms"):
            latency["modes"][0][key] = value
        else:
            latency[key] = value
    return data


@pytest.mark.parametrize(
    ("changes", "field", "allowed"),
    [
        ({"p50_ms": 0}, "ebs.gp3.latency.modes.0.p50_ms", "greater than 0"),
        ({"p99_ms": -1.0}, "ebs.gp3.latency.modes.0.p99_ms", "greater than 0"),
        ({"weight": 0}, "ebs.gp3.latency.modes.0.weight", "greater than 0"),
        ({"p50_ms": "fast"}, "ebs.gp3.latency.modes.0.p50_ms", "valid number"),
        ({"modes": []}, "ebs.gp3.latency.modes", "at least 1 item"),
        ({"basis": ""}, "ebs.gp3.latency.basis", "at least 1 character"),
    ],
)
def test_bad_latency_is_refused_naming_field_value_and_rule(
    changes: dict[str, Any], field: str, allowed: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        Catalog.model_validate(_with_gp3_latency(**changes))
    message = str(caught.value)
    assert field in message
    assert allowed in message
    (value,) = changes.values()
    assert f"input_value={value!r}" in message


def test_p99_below_p50_is_refused_with_both_values() -> None:
    with pytest.raises(ValidationError) as caught:
        Catalog.model_validate(_with_gp3_latency(p50_ms=0.5, p99_ms=0.2))
    message = str(caught.value)
    assert "ebs.gp3.latency.modes.0" in message
    assert "p99_ms 0.2 is below p50_ms 0.5: p99_ms >= p50_ms expected" in message


def test_a_misspelt_mode_key_is_refused() -> None:
    data = _raw()
    data["ebs"]["gp3"]["latency"]["modes"][0]["p95_ms"] = 0.9
    with pytest.raises(ValidationError, match=r"ebs\.gp3\.latency\.modes\.0\.p95_ms"):
        Catalog.model_validate(data)


@pytest.mark.parametrize("key", ["source", "bound_source"])
def test_an_unknown_latency_source_is_refused_naming_the_field(key: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Catalog.model_validate(_with_gp3_latency(**{key: "no-such-paper"}))
    message = str(caught.value)
    assert f"ebs.gp3.latency.{key} 'no-such-paper'" in message
    assert "allowed: the ids of the sources table" in message
    assert "ioping-gp2-gp3" in message  # the known ids are listed
