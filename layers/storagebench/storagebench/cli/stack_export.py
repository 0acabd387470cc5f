"""``storagebench results --stack NAME --run ID --format csv|jsonl|parquet``: a run's export on a stack.

The rows are the files Collect wrote, one per config (and one per attempt after a Spot relaunch):
``GET /runs/{id}/export`` answers a presigned S3 link to each, fetched with plain HTTPS (the
signature is in the link, so the caller needs no S3 permission). Every line is checked against
the export schema (``export.jsonl_rows``) before a row is written: a file that does not hold
Collect's rows is an error naming the object, the line and the column, never a row left out.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from storagebench.cli.console import fail

DOWNLOAD_TIMEOUT_S = 60
EXIT_NO_ROWS = 1


@dataclass(frozen=True)
class StackExport:
    """The run's rows, by config and attempt, and what the API said of configs without a file."""

    run_id: str
    status: str
    rows: list[dict[str, Any]]
    files: list[str]
    configs_without_rows: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _download(url: str, key: str, run_id: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            data: bytes = response.read()
    except urllib.error.HTTPError as exc:
        raise fail(
            f"downloading s3 object {key} (the export of run {run_id}) failed: HTTP {exc.code} {exc.reason}",
            1,
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise fail(f"downloading s3 object {key} (the export of run {run_id}) failed: {exc}", 1) from None
    return data


def _file_rows(file: Mapping[str, Any], run_id: str) -> list[dict[str, Any]]:
    from storagebench.export import ExportError, jsonl_rows

    key = str(file["key"])
    data = _download(str(file["url"]), key, run_id)
    try:
        return jsonl_rows(data, f"s3 object {key}", run_id=run_id, config_id=str(file["config_id"]))
    except ExportError as exc:
        raise fail(f"the export of run {run_id} cannot be read: {exc}", 1) from None


def stack_export(api: Any, run_id: str) -> StackExport:
    """Every row of the run's export files; exits 1 when the run has none (nothing collected yet)."""
    _, answer = api.call("GET", f"/runs/{run_id}/export")
    files = list(answer["files"])
    status = str(answer["status"])
    without = [str(c) for c in answer["configs_without_rows"]]
    if not files:
        raise fail(
            f"run {run_id} ({status}) has no exported rows yet: Collect writes each config's rows once "
            f"the config is measured ({len(without)} config(s) without: {', '.join(without) or 'none'})",
            EXIT_NO_ROWS,
        )
    rows = [row for file in files for row in _file_rows(file, run_id)]
    return StackExport(
        run_id=run_id,
        status=status,
        rows=rows,
        files=[str(f["key"]) for f in files],
        configs_without_rows=without,
        notes=[str(n) for n in answer.get("notes") or []],
    )
