"""``storagebench report --stack NAME RUN_ID``: the report Finalize wrote, through the stack's API.

GET /runs/{id}/report answers a presigned S3 link per form (html, md, csv); the link is fetched
with plain HTTPS (the signature is in it), so downloading needs no S3 permission of the caller.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from storagebench.cli.console import fail

API_FORMS = {"html": "html", "markdown": "md", "csv": "csv"}  # the CLI's names -> the API's
DOWNLOAD_TIMEOUT_S = 60


def download_report(
    stack: str | None,
    api_url: str | None,
    region: str | None,
    run_id: str,
    forms: list[str],
    directory: Path,
    link_only: bool,
) -> dict[str, str]:
    """Each form's presigned link (``link_only``), else the file it was saved to under ``directory``."""
    from storagebench.cli.stack_client import stack_api

    links: dict[str, str] = {}
    with stack_api(stack, api_url, region) as api:
        for form in forms:
            _, answer = api.call("GET", f"/runs/{run_id}/report", {"format": API_FORMS[form]})
            links[form] = str(answer["url"])
    if link_only:
        return links
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for form, url in links.items():
        target = directory / f"report.{API_FORMS[form]}"
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
                target.write_bytes(response.read())
        except urllib.error.HTTPError as exc:
            raise fail(
                f"downloading the {form} report of run {run_id} failed: HTTP {exc.code} {exc.reason}", 1
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise fail(f"downloading the {form} report of run {run_id} failed: {exc}", 1) from None
        written[form] = str(target)
    return written
