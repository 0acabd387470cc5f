"""The documented SQL over the exports (docs/results.md, Exports and SQL), one ``.sql`` file per query.

They are written for Athena (Trino) over ``storagebench.results`` (template.yaml ``ExportsTable``)
and run unchanged in DuckDB over a view of that name (tests/unit/export). Each names one suite: the
table's ``suite`` partition is injected, so Athena needs it equal to a literal.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["QUERY_NAMES", "TABLE", "query_text"]

TABLE = "storagebench.results"
"""The table the queries read: ``<ExportsDatabaseName>.results`` with the parameter's default."""
QUERY_NAMES: tuple[str, ...] = ("cheapest_option", "p95_trend")


def query_text(name: str) -> str:
    if name not in QUERY_NAMES:
        raise KeyError(f"query {name!r}: not one of {', '.join(QUERY_NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.sql").read_text(encoding="utf-8")
