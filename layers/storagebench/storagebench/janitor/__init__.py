"""The janitor: on its own schedule, deletes what the stack's runs left behind past their deadline
(instances, volumes, EFS and FSx file systems, security and placement groups, by the run tags), marks
runs stuck in RUNNING as FAILED, and notifies and counts every leak."""

from storagebench.janitor.models import Leak, StuckRun, SweepIncompleteError, SweepReport, TaggedResource
from storagebench.janitor.service import Janitor

__all__ = ["Janitor", "Leak", "StuckRun", "SweepIncompleteError", "SweepReport", "TaggedResource"]
