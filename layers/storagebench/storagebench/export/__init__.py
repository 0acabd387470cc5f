"""Flat exports of measured results: CSV, JSON Lines and Parquet, one row per record.

``run_rows`` flattens a stored run (``ResultsStore.get_run``, locally); on AWS, ``jsonl_rows`` reads
back the files Collect wrote (``GET /runs/{id}/export`` links them); ``write_rows`` writes rows in
one of ``EXPORT_FORMATS``. The columns, their types and units are
``schema.COLUMNS``: the CSV header, the Parquet schema and the Athena table over Collect's JSON
Lines files (template.yaml ``ExportsTable``) all follow it.
"""

from storagebench.export.errors import ExportError
from storagebench.export.formats import EXPORT_FORMATS, write_rows
from storagebench.export.jsonl_rows import jsonl_rows
from storagebench.export.rows import run_rows

__all__ = ["EXPORT_FORMATS", "ExportError", "jsonl_rows", "run_rows", "write_rows"]
