"""The recorded answer: the bundled new-account answers, and a bad file refused naming its field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.catalog import load_catalog
from storagebench.quotas.models import QuotaAnswerError, QuotaNotReadError
from storagebench.quotas.recorded import RecordedQuotas


def test_the_bundled_answer_holds_every_catalog_quota_at_its_documented_default() -> None:
    recorded = RecordedQuotas()
    refs = [
        ref for group in load_catalog().vcpu_quotas.groups for ref in (group.on_demand, group.spot) if ref
    ]
    assert len(refs) == 18
    for ref in refs:
        quota = recorded.vcpu_quota(ref.code)
        assert (quota.quota_code, quota.quota_name, quota.value) == (ref.code, ref.name, ref.default_vcpus)
        assert quota.origin == "recorded"
    assert recorded.vcpu_quota("L-1216C47A").value == 5.0
    assert recorded.source == "recorded answer storagebench/quotas/recorded.json"


def test_the_bundled_file_says_where_it_came_from() -> None:
    from importlib import resources

    document = json.loads(resources.files("storagebench.quotas").joinpath("recorded.json").read_text())
    assert "get-aws-default-service-quota" in document["source"]
    assert "unverified" in document["source"] and "Not an answer of any real account" in document["source"]


def _write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "quotas.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _answer(code: str = "L-1216C47A", **quota: Any) -> dict[str, Any]:
    return {
        "Quota": {
            "ServiceCode": "ec2",
            "QuotaCode": code,
            "QuotaName": "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
            "Value": 1536.0,
            **quota,
        }
    }


def test_a_file_of_the_same_shape_stands_for_an_account(tmp_path: Path) -> None:
    recorded = RecordedQuotas(_write(tmp_path, {"answers": {"L-1216C47A": _answer()}}))
    assert recorded.vcpu_quota("L-1216C47A").value == 1536
    with pytest.raises(QuotaNotReadError, match=r"L-34B43A08 in .*quotas.json: no recorded answer"):
        recorded.vcpu_quota("L-34B43A08")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"answers": {"L-1216C47A": _answer(Value="five")}}, r"answers\.L-1216C47A\.Quota\.Value: 'five': "),
        (
            {"answers": {"L-1216C47A": _answer(Value=-1)}},
            r"answers\.L-1216C47A\.Quota\.Value: -1: .*greater than",
        ),
        ({"answers": {"L-1216C47A": _answer(ServiceCode="vpc")}}, r"Quota\.ServiceCode: 'vpc': .*'ec2'"),
        (
            {"answers": {"L-1216C47A": {"Quota": {"QuotaCode": "L-1216C47A"}}}},
            r"Quota\.ServiceCode: 'missing'",
        ),
        (
            {"answers": {"L-1216C47A": _answer("L-34B43A08")}},
            r"QuotaCode: 'L-34B43A08' answers another quota",
        ),
        (
            {"answers": {"L-1216C47A": {"quota": {}}}},
            r"answers\.L-1216C47A\.Quota: missing \(got \['quota'\]\)",
        ),
        ({"answers": {"standard": _answer()}}, r"answers\.standard: not a quota code"),
        ({"answers": []}, r"answers: list; an object of quota code"),
        ([], r"answers: list; an object"),
    ],
)
def test_a_bad_recorded_file_is_refused_naming_the_field(tmp_path: Path, document: Any, message: str) -> None:
    with pytest.raises(QuotaAnswerError, match=message):
        RecordedQuotas(_write(tmp_path, document))


def test_a_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "quotas.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(QuotaAnswerError, match=r"quotas.json: not JSON"):
        RecordedQuotas(path)
