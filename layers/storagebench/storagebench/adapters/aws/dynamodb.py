"""The results store on one DynamoDB table, with the key design of ``storagebench.store.keys``.

Items:

* run ``RUN#<run> / RUN``: status, suite, request, configs, times; GSI1 (suite history) and,
  while RUNNING or STOPPING, GSI3 (runs in progress: ``finish_run`` REMOVEs those attributes);
* config ``RUN#<run> / CONFIG#<c>``: the last status, the state document, errors, and the time
  each status was first recorded (``at_<STATUS>``, written once);
* result ``RUN#<run> / RESULT#<c>#<record key>``: the record as a map (numbers as Decimal), its
  labels, and GSI2 series keys when a ``storage_option`` label names the series;
* regression verdicts ``RUN#<run> / REGRESSIONS#<nnnn>``: Finalize's comparison with the suite's
  last runs, in parts under the item budget (``record_regressions``); their counts go on the run.
* occurrence claim ``OCCURRENCE#<schedule arn>@<time> / CLAIM``: the run a scheduled occurrence
  started (``claim_occurrence``: a conditional put), and the executions it refused.

Every write is idempotent: a retried step rewrites the same keys. Every read is a Query (never a
Scan); the ``*_page`` methods hand back an opaque cursor (base64 of LastEvaluatedKey).
"""

from __future__ import annotations

from storagebench.adapters.aws.dynamo.history import SeriesHistory
from storagebench.adapters.aws.dynamo.measured import MeasuredItems
from storagebench.adapters.aws.dynamo.regressions import RegressionItems
from storagebench.adapters.aws.dynamo.runs import RunItems
from storagebench.adapters.aws.settings import AwsSettings


class DynamoResultsStore(RunItems, MeasuredItems, SeriesHistory, RegressionItems):
    """``ResultsStore`` on the stack's table (low-level client + boto3's type serializer): the access
    patterns of ``adapters.aws.dynamo``, one class per pattern, over one ``TableAccess``."""

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> DynamoResultsStore:
        return cls(settings.client("dynamodb"), settings.results_table)
