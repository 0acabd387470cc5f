"""Helpers shared by the test tiers, one concern a module:

- ``records``: ``ResultRecord`` builders (one record, a latency summary, repetitions, stored results)
- ``fio_runs``: the records of the real fio outputs under ``tests/data/fio``
- ``report_runs``: a realistic nightly run and its report inputs (the report and browser tests)
- ``workflow_fakes``: in-memory ports for the workflow steps and handlers
- ``fake_aws``: a fake AWS endpoint for the agent (stdlib and pytest: runs on Python 3.9 too)
- ``api_stack``, ``api_events``, ``api_cli``: the API on moto, its events, and a SigV4-checking server
- ``moto_env``: moto's credentials without the host's settings
- ``processes``: the processes a test starts, killed and reaped when it ends
- ``host``: what a root-tier test needs of the machine (root, tools, fio's nbd engine)
- ``modules``: scripts and function apps loaded by path
- ``data/invalid_requests.yaml``: the invalid-request table

Importable as ``tests.support`` from any test: pytest puts the checkout's root on ``sys.path``
(``pythonpath`` in pyproject.toml; ``tests/agent39.ini`` does the same for Python 3.9), so no test
reaches another folder with ``sys.path`` inserts.
"""
