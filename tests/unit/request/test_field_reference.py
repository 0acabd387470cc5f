"""docs/request-reference.md holds the request field reference that `make field-reference` generates from
the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.catalog import load_catalog
from storagebench.request import BenchmarkRequest
from storagebench.request.reference import (
    BEGIN,
    END,
    PAGE,
    REGENERATE,
    ReferenceMarkersError,
    field_reference,
    with_reference,
)

REFERENCE_PAGE = Path(__file__).resolve().parents[3] / PAGE


def test_the_docs_page_holds_the_generated_reference() -> None:
    text = REFERENCE_PAGE.read_text(encoding="utf-8")
    assert text == with_reference(text, field_reference()), (
        f"{PAGE}'s field reference differs from the schema's: run `{REGENERATE}`"
    )


def test_every_target_kind_and_every_field_of_the_schema_is_documented() -> None:
    schema = BenchmarkRequest.model_json_schema()
    reference = field_reference(schema)
    mapping = schema["$defs"]["Config"]["properties"]["targets"]["items"]["discriminator"]["mapping"]
    for kind in mapping:
        assert f"#### Target `{kind}`" in reference
    for definition in schema["$defs"].values():
        for name in definition["properties"]:
            assert f"| `{name}` |" in reference


def test_aws_limits_come_from_the_catalog_with_their_source() -> None:
    catalog = load_catalog()
    gp3 = catalog.ebs["gp3"]
    assert gp3.iops is not None
    reference = field_reference()
    assert f"gp3 {gp3.iops.min:,}..{gp3.iops.max:,}, {gp3.iops.max_per_gib:g}/GiB" in reference
    assert catalog.sources[gp3.iops.source].url in reference
    efs = catalog.efs.provisioned_mibps
    assert f"{efs.min:,.0f}..{efs.max:,.0f} MiB/s, with `throughput_mode: provisioned` only" in reference


def test_a_changed_schema_changes_the_reference() -> None:
    schema = BenchmarkRequest.model_json_schema()
    schema["$defs"]["EbsTarget"]["properties"]["count"]["maximum"] = 99
    assert "| 1..99 |" in field_reference(schema) and "| 1..99 |" not in field_reference()


def test_markers_are_required_once_each_in_order() -> None:
    assert with_reference(f"a\n{BEGIN}\nold\n{END}\nb", "new\n") == f"a\n{BEGIN}\nnew\n{END}\nb"
    for broken in ("no markers", f"{END}\n{BEGIN}", f"{BEGIN}{BEGIN}{END}"):
        with pytest.raises(ReferenceMarkersError, match="field-reference:begin"):
            with_reference(broken, "x")
