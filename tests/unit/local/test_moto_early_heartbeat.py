"""moto_fixes: a heartbeat on a task token before the task waits on it is accepted, as on AWS.

moto 5.2.5 registers a ``.waitForTaskToken`` task's token, invokes its resource, and sets up the
heartbeat timer only once the invocation returns. An agent that invocation started can heartbeat
first; unpatched, moto answers ``InvalidToken`` and the agent stops ("nobody waits for this task").
Seen in the 60-config run beside the unit tier: 2 configs lost at their first heartbeat, 1 s in.
"""

from __future__ import annotations

import pytest

pytest.importorskip("moto", reason="moto (the local extra) is not installed")

from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackPoolManager

from storagebench_local import moto_fixes


@pytest.fixture(autouse=True)
def _fixed() -> None:
    moto_fixes.apply()


def test_a_heartbeat_before_the_task_waits_is_accepted() -> None:
    pool = CallbackPoolManager(activity_store={})
    pool.add("token-1")
    assert pool.heartbeat("token-1") is True  # the invocation has not returned yet


def test_a_heartbeat_while_the_task_waits_resets_its_timer() -> None:
    pool = CallbackPoolManager(activity_store={})
    endpoint = pool.add("token-1")
    timer = endpoint.setup_heartbeat_endpoint(heartbeat_seconds=60)
    assert pool.heartbeat("token-1") is True
    assert timer.clear_and_wait() is True  # the heartbeat arrived: the wait ends at once


def test_an_unknown_token_is_still_refused() -> None:
    pool = CallbackPoolManager(activity_store={})
    assert pool.heartbeat("never-issued") is False
