"""Reading what the store returns (``ResultsStore.get_run``) back into domain objects.

Stored results are either the store's items (the record nested under ``record``, with labels)
or flat record fields with extra attributes; both are read, unknown attributes dropped, and an
unreadable item becomes a note naming it, never an exception: one bad item must not hide a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from storagebench.results.records import ResultRecord

PROBLEMS_SHOWN = 8
"""Problems quoted in one note; the rest are counted."""
_RECORD_FIELDS = frozenset(ResultRecord.model_fields)


def read_records(
    results: Iterable[Any], notes: list[str]
) -> tuple[list[ResultRecord], dict[tuple[str, str], str]]:
    """Stored results -> records (unknown attributes dropped), and the storage option of each
    (config, target) from the result's labels."""
    records: list[ResultRecord] = []
    options: dict[tuple[str, str], str] = {}
    bad: list[str] = []
    for index, item in enumerate(results):
        if not isinstance(item, Mapping):
            bad.append(f"results[{index}]: not an object")
            continue
        nested = item.get("record")
        document = nested if isinstance(nested, Mapping) else item
        fields = {k: v for k, v in document.items() if k in _RECORD_FIELDS}
        if "config_id" not in fields and isinstance(item.get("config_id"), str):
            fields["config_id"] = item["config_id"]
        try:
            record = ResultRecord.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(record)"
            name = item.get("record_key") or item.get("SK") or "?"
            bad.append(f"results[{index}] ({name}): {where}: {first['msg']}")
            continue
        records.append(record)
        labels = item.get("labels")
        labels = labels if isinstance(labels, Mapping) else {}
        option = labels.get("storage_option", item.get("storage_option"))
        if isinstance(option, str) and option:
            options.setdefault((record.config_id, record.target_id), option)
    if bad:
        shown = "; ".join(bad[:PROBLEMS_SHOWN]) + (
            f"; {len(bad) - PROBLEMS_SHOWN} more" if len(bad) > PROBLEMS_SHOWN else ""
        )
        notes.append(f"{len(bad)} stored result(s) could not be read and are left out: {shown}")
    return records, options
