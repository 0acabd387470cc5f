"""The agent's wire contract: the documents the domain and the on-instance agent exchange.

The plan (``plan``, with its ``topology`` and emulated ``latency``), the manifest the agent
writes (``manifest``, its adaptive ``SeriesRecord`` in ``adaptive``, a latency-SLA search in
``sla``), the caveat labels both print (``caveats``, ``measurable``), fio's output as the agent
splits and summarises it (``fio_output``, ``fio_summary``), the cold-read sample layout
(``sample_layout``) and the package table (``packages``), with the pure rules both sides must
compute alike (``adaptive.decide`` on ``student_t``, ``sla.search``).

Standard library only, Python 3.9 syntax, and nothing of ours but ``storagebench.protocol``
(pyproject.toml's import contracts and ``tests/unit/agent/test_agent_stdlib_only.py`` hold it):
it ships inside the agent's zipapp, and the domain imports it instead of ``storagebench.agent``.
"""
