"""The API's ports on AWS, from the environment the template gives the API function."""

from __future__ import annotations

import os
from collections.abc import Mapping

from storagebench.api.service import ApiService
from storagebench.wiring.lazy import Lazy


def from_environment(env: Mapping[str, str]) -> ApiService:
    from storagebench.adapters.aws.dynamodb import DynamoResultsStore
    from storagebench.adapters.aws.report_links import S3ReportLinks
    from storagebench.adapters.aws.run_sweeper import LambdaSweeper
    from storagebench.adapters.aws.service_quotas import ServiceQuotasReader
    from storagebench.adapters.aws.settings import AwsSettings, SettingsError
    from storagebench.adapters.aws.stepfunctions import StepFunctionsLauncher
    from storagebench.core.guardrails import Guardrails

    missing = [name for name in ("STATE_MACHINE_ARN", "SWEEP_RUN_FUNCTION") if not env.get(name, "").strip()]
    if missing:
        raise SettingsError(missing)
    settings = AwsSettings.from_env(env)
    return ApiService(
        store=DynamoResultsStore.from_settings(settings),
        launcher=StepFunctionsLauncher(settings.client("stepfunctions"), env["STATE_MACHINE_ARN"].strip()),
        links=S3ReportLinks(settings.client("s3"), settings.artifacts_bucket),
        sweeper=LambdaSweeper(settings.client("lambda"), env["SWEEP_RUN_FUNCTION"].strip()),
        guardrails=Guardrails.from_env(env),
        quotas=ServiceQuotasReader.from_settings(settings),
    )


_service: Lazy[ApiService] = Lazy(lambda: from_environment(os.environ))
configure = _service.configure  # tests and local servers put their own service here
service = _service.get
