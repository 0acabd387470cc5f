"""The windows a node loss is measured in (``agent.node_loss``), which the request's rules read too.

A node-loss phase logs fio's rates every ``INTERVAL_MS``; the measurement needs ``MIN_BEFORE_S``
of log before the removal (it uses up to ``BEFORE_S``) and ``AFTER_S`` at the end, after it; a
stall is an interval at or under ``STALL_PCT`` of before; recovery is ``RECOVERY_PCT`` held for
``RECOVERY_WINDOW_S``. ``request.node_loss`` bounds ``after_s`` with the same figures, so a
request the agent could not measure is refused before launch.
"""

INTERVAL_MS = 100
BEFORE_S = 5.0
MIN_BEFORE_S = 1.0
AFTER_S = 3.0
STALL_PCT = 5.0
RECOVERY_PCT = 90.0
RECOVERY_WINDOW_S = 1.0
