"""``storagebench run/results --stack NAME``: the same commands against a deployed stack's API.

Calls are signed with the caller's AWS credentials (SigV4); the API URL is the stack's
``ApiUrl`` output, or ``--api-url``. API errors are printed as the API names them (field, value,
what is allowed) and exit 2 for a refused request, 1 when the API or AWS could not answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from storagebench.cli.console import fail

# The options every --stack command shares (its own --stack help says what it does there)
ApiUrlOption = Annotated[str | None, typer.Option("--api-url", help="the API's URL instead of --stack")]
StackRegionOption = Annotated[str | None, typer.Option("--region", help="with --stack: the stack's region")]
AskStackOption = Annotated[
    str | None, typer.Option("--stack", help="ask this deployed stack's API (SigV4) instead")
]


@contextmanager
def stack_api(stack: str | None, api_url: str | None, region: str | None) -> Iterator[Any]:
    """The signed client of a stack's API; API and connection errors become exit codes."""
    import boto3

    from storagebench.adapters.aws.api_client import (
        ApiClientError,
        ApiResponseError,
        StackApi,
        api_url_of_stack,
    )

    session = boto3.session.Session(region_name=region) if region else boto3.session.Session()
    try:
        url = api_url or api_url_of_stack(str(stack), session)
        yield StackApi(url, session, region)
    except ApiResponseError as exc:
        raise fail(str(exc), 2 if 400 <= exc.status < 500 else 1) from None
    except ApiClientError as exc:
        raise fail(str(exc), 1) from None


def run_document(api: Any, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
    """``GET /runs/{id}``; ``histograms`` asks for each record's latency histogram too (its
    ``histograms=true`` parameter), which the default leaves out to answer faster."""
    _, document = api.call("GET", f"/runs/{run_id}", {"histograms": True} if histograms else None)
    return dict(document)


RESULTS_PAGE_LIMIT = 1000  # the most GET /results gives in one page


def results_points(api: Any, query: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every point GET /results holds for ``query`` (storage, workload, variant, phase, direction,
    since), following ``next_cursor`` page after page: a series is judged or shown whole."""
    points: list[dict[str, Any]] = []
    cursor = None
    while True:
        _, page = api.call("GET", "/results", {**query, "limit": RESULTS_PAGE_LIMIT, "cursor": cursor})
        points.extend(page["points"])
        cursor = page["next_cursor"]
        if cursor is None:
            return points
