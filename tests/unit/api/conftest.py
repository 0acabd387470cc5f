"""The ``stack`` fixture (api_stack.py): the API on moto."""

from api_stack import stack

__all__ = ["stack"]
