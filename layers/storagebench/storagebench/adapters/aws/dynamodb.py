"""The results store on one DynamoDB table, with the key design of ``storagebench.store.keys``.

Items:

* run ``RUN#<run> / RUN``: status, suite, request, configs, times; GSI1 (suite history) and,
  while RUNNING or STOPPING, GSI3 (runs in progress: ``finish_run`` REMOVEs those attributes);
* config ``RUN#<run> / CONFIG#<c>``: the last status, the state document, errors, and the time
  each status was first recorded (``at_<STATUS>``, written once);
* packed results ``RUN#<run> / RESULTS#<c>#<batch>#<part>``: the records of one ``put_results``
  call without their histograms, packed (compressed JSON in one binary attribute), with their labels;
* history point ``POINTS#<run> / <c>#<record key>``: one record packed without its histogram, with
  GSI2 series keys when a ``storage_option`` label names the series;
* histogram ``HISTOGRAMS#<run> / <c>#<record key>``: read only when asked for;
* suite digest ``DIGEST#<suite> / <started>#<run>#<c>#<batch>#<part>``: every record's series and
  headline metrics, what the regression check reads for the last N runs in one Query;
* result of the previous layout ``RUN#<run> / RESULT#<c>#<record key>``: the record as a map with
  its histogram (numbers as Decimal), its labels and GSI2 keys; still read by every pattern;
* regression verdicts ``RUN#<run> / REGRESSIONS#<nnnn>``: Finalize's comparison with the suite's
  last runs, in parts under the item budget (``record_regressions``); their counts go on the run.
* occurrence claim ``OCCURRENCE#<schedule arn>@<time> / CLAIM``: the run a scheduled occurrence
  started (``claim_occurrence``: a conditional put), and the executions it refused.

Every write is idempotent: a retried step rewrites the same keys. Every read is a Query (never a
Scan); the ``*_page`` methods hand back an opaque cursor (base64 of LastEvaluatedKey).
"""

from __future__ import annotations

from storagebench.adapters.aws.dynamo.digests import DigestItems
from storagebench.adapters.aws.dynamo.history import SeriesHistory
from storagebench.adapters.aws.dynamo.measured import MeasuredItems
from storagebench.adapters.aws.dynamo.regressions import RegressionItems
from storagebench.adapters.aws.dynamo.runs import RunItems
from storagebench.adapters.aws.settings import AwsSettings


class DynamoResultsStore(RunItems, MeasuredItems, SeriesHistory, RegressionItems, DigestItems):
    """``ResultsStore`` on the stack's table (low-level client + boto3's type serializer): the access
    patterns of ``adapters.aws.dynamo``, one class per pattern, over one ``TableAccess``."""

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> DynamoResultsStore:
        return cls(settings.client("dynamodb"), settings.results_table)
