"""Notifications: the messages a run and the janitor send, their delivery, the local channel."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from storagebench.core.regression import Regression
from storagebench.core.state import ConfigResult, ErrorInfo, RunSummary
from storagebench.janitor.messages import leak_notification
from storagebench.janitor.models import Leak
from storagebench.notify import LogNotifier, Notification, NotificationError, deliver
from storagebench.notify.models import SUBJECT_MAX, subject_line
from storagebench.notify.run_messages import run_notifications
from storagebench.workflow.run_metrics import run_metrics
from storagebench_local.adapters.notifications import FileNotifier


def summary(status: str = "PARTIAL", **extra: Any) -> RunSummary:
    configs = [
        ConfigResult(run_id="r1", config_id="gp3", status="succeeded", records=4),
        ConfigResult(
            run_id="r1",
            config_id="io2",
            status="failed",
            records=0,
            errors=[ErrorInfo(step="ready", error="NotReadyError", cause="not ready after 1200 s")],
            leftovers=["vol-1"],
        ),
    ]
    values: dict[str, Any] = {
        "run_id": "r1",
        "suite": "nightly",
        "status": status,
        "configs": configs,
        "records": 4,
        "started_at": "2030-01-01T00:00:00Z",
        "ended_at": "2030-01-01T01:00:00Z",
        "economics": {
            "run_cost_usd": 1.234,
            "configs": [
                {"id": "gp3", "verdict": "baseline"},
                {"id": "io2", "verdict": "3.1x more expensive; 2.0x faster on 4 KiB random read"},
            ],
        },
        "report": {"html": "s3://bucket/runs/r1/report.html"},
    }
    values.update(extra)
    return RunSummary.model_validate(values)


def regression(verdict: str, delta: float) -> Regression:
    return Regression(
        storage_option="gp3-100",
        workload="std-randread-4k",
        variant="-",
        phase="run",
        direction="read",
        metric="iops",
        higher_is_better=True,
        verdict=verdict,  # type: ignore[arg-type]
        flagged=True,
        value=3000 * (1 + delta / 100),
        repetitions=3,
        baseline=3000.0,
        delta_pct=delta,
        band=(2850.0, 3150.0),
        history_n=20,
    )


def test_a_finished_run_says_everything_on_its_first_line() -> None:
    (finished,) = run_notifications(summary(), "sb")
    assert finished.kind == "run-finished" and finished.run_id == "r1" and finished.stack == "sb"
    assert finished.summary == (
        "run r1 of nightly: PARTIAL; configs 1 ok, 1 failed; run cost $1.23; gp3: baseline; "
        "io2: 3.1x more expensive; 2.0x faster on 4 KiB random read; "
        "report s3://bucket/runs/r1/report.html (open it with `storagebench report --stack sb r1 --open`)"
    )
    assert "io2 failed: ready NotReadyError: not ready after 1200 s" in finished.text
    assert "io2 left vol-1 (the janitor sweeps them)" in finished.text
    assert finished.subject == "storagebench nightly: PARTIAL (configs 1 ok, 1 failed) r1"


def test_a_failed_run_without_costs_or_report_says_so() -> None:
    (failed,) = run_notifications(summary("FAILED", economics=None, report=None), "sb")
    assert failed.kind == "run-failed"
    assert "run cost not computed" in failed.summary
    assert "no report was written; `storagebench report r1 --open` builds it from the store" in failed.summary


def test_regressions_name_the_metric_the_change_and_the_reference() -> None:
    flagged = [regression("regression", -12.5), regression("improvement", 9.0)]
    _, found = run_notifications(summary(regressions=flagged), "sb")
    assert found.kind == "regression"
    lines = found.text.splitlines()
    assert lines[0].startswith(
        "1 regression(s) in run r1 of nightly against the median of the suite's last runs"
    )
    assert lines[1] == (
        "gp3-100 std-randread-4k - run/read iops: regression 2625 vs median 3000 "
        "(-12.5 %, band [2850, 3150], 20 runs)"
    )
    assert run_metrics(summary(regressions=flagged))["RegressionsFound"] == 1


def test_run_metrics() -> None:
    assert run_metrics(summary()) == {
        "RunsPartial": 1,
        "Configs": 2,
        "ConfigFailures": 1,
        "RegressionsFound": 0,
        "NotificationFailures": 0,
        "RunCostUSD": 1.234,
    }
    assert "RunCostUSD" not in run_metrics(summary(economics=None))


def test_subjects_are_one_line_within_the_sns_limit() -> None:
    long = subject_line("storagebench " + "x" * 300 + "\nsecond line")
    assert len(long) == SUBJECT_MAX and long.endswith("...") and "\n" not in long
    with pytest.raises(ValidationError, match="subject must be one printable line"):
        Notification(kind="leak", subject="two\nlines", text="t", stack="sb")


def test_a_leak_says_what_how_late_and_what_was_done() -> None:
    leak = Leak(
        kind="efs-file-system",
        resource_id="fs-1",
        run_id="r1",
        config_id="c1",
        expires_at="2030-01-01T00:00:00Z",
        overdue_s=5400,
        outcome="failed",
        detail="ProvisioningError: AccessDenied",
    )
    note = leak_notification(leak, "sb")
    assert note.summary == (
        "leak NOT swept: efs-file-system fs-1 of run r1 config c1, 1.5 h past its expires-at "
        "2030-01-01T00:00:00Z: ProvisioningError: AccessDenied"
    )
    assert (
        "Delete it by hand" in note.text
        and note.subject == "storagebench sb: leak NOT swept: efs-file-system fs-1"
    )


class Refusing:
    def publish(self, notification: Notification) -> str:
        if notification.kind == "regression":
            raise NotificationError("SNS refused regression: AuthorizationError")
        return "id"


def test_a_refused_notification_is_logged_and_recorded_and_the_others_go(
    caplog: pytest.LogCaptureFixture,
) -> None:
    notes = run_notifications(summary(regressions=[regression("regression", -20.0)]), "sb")
    with caplog.at_level(logging.ERROR, logger="storagebench.notify"):
        delivery = deliver(Refusing(), notes)
    assert delivery.sent == ["run-finished"]
    assert delivery.failed == ["regression: SNS refused regression: AuthorizationError"]
    assert "notification regression" in caplog.text and "AuthorizationError" in caplog.text


def test_the_local_channel_appends_json_lines(tmp_path: Path) -> None:
    channel = FileNotifier(tmp_path / "state" / "notifications.jsonl")
    for note in run_notifications(summary(regressions=[regression("regression", -20.0)]), "sb"):
        channel.publish(note)
    recorded = channel.read()
    assert [r["kind"] for r in recorded] == ["run-finished", "regression"]
    assert recorded[0]["run_id"] == "r1" and str(recorded[0]["sent_at"]).endswith("Z")
    blocked = FileNotifier(tmp_path / "state" / "notifications.jsonl" / "not-a-dir.jsonl")
    with pytest.raises(NotificationError, match="cannot append run-finished"):
        blocked.publish(run_notifications(summary(), "sb")[0])


def test_the_log_channel_keeps_what_it_sent() -> None:
    channel = LogNotifier()
    assert channel.publish(run_notifications(summary(), "sb")[0]) == "log-1"
    assert [n.kind for n in channel.sent] == ["run-finished"]
