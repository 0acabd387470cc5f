"""The benchmark request model (one source of truth) and its error reporting."""

from storagebench.request.errors import FieldError, RequestError
from storagebench.request.model import (
    BenchmarkRequest,
    Config,
    EbsTarget,
    EfsTarget,
    FileGatewayTarget,
    FsxLustreTarget,
    InstanceStoreTarget,
    LocalTarget,
    NfsTarget,
    ResolvedWorkload,
    Target,
    WorkloadRef,
)
from storagebench.request.parse import load_request, parse_request

__all__ = [
    "BenchmarkRequest",
    "Config",
    "EbsTarget",
    "EfsTarget",
    "FieldError",
    "FileGatewayTarget",
    "FsxLustreTarget",
    "InstanceStoreTarget",
    "LocalTarget",
    "NfsTarget",
    "RequestError",
    "ResolvedWorkload",
    "Target",
    "WorkloadRef",
    "load_request",
    "parse_request",
]
