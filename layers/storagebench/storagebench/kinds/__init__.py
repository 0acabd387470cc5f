"""Storage kinds: one module per kind (its option key, bill, envelope, rates, bindings), one registry."""

from storagebench.kinds.base import Bill, Rates, StorageKind, UnknownKindError
from storagebench.kinds.registry import KINDS, emulator_key, kind_of, option_of, storage_kind, storage_option

__all__ = [
    "KINDS",
    "Bill",
    "Rates",
    "StorageKind",
    "UnknownKindError",
    "emulator_key",
    "kind_of",
    "option_of",
    "storage_kind",
    "storage_option",
]
