"""The agent's own AWS calls, in the standard library: SigV4, IMDSv2 credentials, S3, Step Functions.

An image needs nothing but Python 3.9+ for the agent to fetch its plan, upload its output and
report to Step Functions (Ubuntu, Debian and RHEL images carry no AWS CLI). Endpoints follow the
SDKs' conventions, so ``AWS_ENDPOINT_URL`` and ``AWS_EC2_METADATA_SERVICE_ENDPOINT`` point a local
instance at local servers exactly as they would point the AWS CLI.
"""
