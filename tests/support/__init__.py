"""Helpers shared by the test tiers: record builders, stored runs, the fake AWS endpoint, report runs.

Importable as ``tests.support`` from any test: pytest puts the checkout's root on ``sys.path``
(``pythonpath = ["."]`` in pyproject.toml; ``tests/agent39.ini`` does the same for Python 3.9), so
no test reaches another folder with ``sys.path`` inserts.
"""
