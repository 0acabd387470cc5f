"""Implementations of the workflow's ports (``storagebench.workflow.ports``).

``adapters.aws`` talks to EC2, EFS, FSx, SSM, S3 and DynamoDB with boto3; it is the only
place that imports boto3. ``adapters.agent_bundle`` builds the on-instance agent zipapp
reproducibly (the AWS adapter uploads it, ``scripts/build_agent_zipapp.py`` writes it).
Importing this package imports nothing heavy.
"""
