"""The API tier's fixtures, from tests.support: ``stack`` (the API on moto), and ``served`` with its
``hooks`` (that API behind a SigV4-checking HTTP server, for the command line)."""

from tests.support.api_cli import hooks, served
from tests.support.api_stack import stack

__all__ = ["hooks", "served", "stack"]
