"""Local mode: the stack's workflow on this machine, without AWS or Docker.

``cfn`` reads CloudFormation/SAM YAML, ``template`` turns ``template.yaml`` into what local mode
runs (functions, the state machine's ASL, the results table), ``lambda_endpoint`` serves the
functions behind a local Lambda Invoke endpoint for moto's Step Functions interpreter, and
``dynamodb_local`` runs DynamoDB Local. Only the CLI and tests import these modules: no Lambda
handler does, and PyYAML, moto and boto3 are imported inside functions, never at module level.
This file stays import-free.
"""
