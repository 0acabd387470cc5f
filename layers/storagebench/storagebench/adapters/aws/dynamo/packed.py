"""A run's results as ``get_run`` answers them, from packed ``RESULTS#`` items (this layout) and
``RESULT#`` items (the previous one): one document per record key, the latest write winning."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storagebench.adapters.aws.dynamo.codec import unpack
from storagebench.store import keys

_PACKED_ONLY = ("records", "count", "part", "parts", "batch", "type", "written_at")


def result_documents(sort_key: str, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The result documents one item holds: itself (previous layout) or its packed records, each
    shaped as the previous layout's item (``type``, ``run_id``, ``config_id``, ``record_key``,
    ``started_at``, ``labels``, ``record``). An unreadable packed item yields one document naming
    it, which ``store.models.decode_results`` reports as a note."""
    if not sort_key.startswith(keys.RESULTS_PREFIX):
        return [dict(item)]
    common = {k: v for k, v in item.items() if k not in _PACKED_ONLY}
    try:
        entries = unpack(item.get("records"))
        if not isinstance(entries, list):
            raise ValueError(f"a list of records was packed, not {type(entries).__name__}")
    except ValueError as exc:
        return [{**common, "type": "result", "record_key": f"{sort_key} ({exc})", "record": None}]
    documents: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        document = {
            **common,
            "type": "result",
            "record_key": entry.get("record_key"),
            "record": entry.get("record"),
        }
        if entry.get("bounded"):
            document["bounded"] = entry["bounded"]
        documents.append(document)
    return documents


class RunResults:
    """Collects a run partition's result items; ``documents()`` in the previous layout's key order.

    A config's records written twice (a retried or a re-launched collection) may sit in two
    packed items: the one written last wins for each record key, as a rewrite did before.
    """

    def __init__(self) -> None:
        self._items: list[tuple[str, str, Mapping[str, Any]]] = []

    def add(self, sort_key: str, item: Mapping[str, Any]) -> None:
        self._items.append((str(item.get("written_at") or ""), sort_key, item))

    def documents(self) -> list[dict[str, Any]]:
        by_key: dict[str, dict[str, Any]] = {}
        for _, sort_key, item in sorted(self._items, key=lambda entry: (entry[0], entry[1])):
            for document in result_documents(sort_key, item):
                key = f"{keys.RESULT_PREFIX}{document.get('config_id')}#{document.get('record_key')}"
                by_key[key] = document
        return [by_key[key] for key in sorted(by_key)]
