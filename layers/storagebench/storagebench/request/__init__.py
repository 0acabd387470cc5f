"""The benchmark request model (one source of truth) and its error reporting."""

from storagebench.request.errors import FieldError, RequestError, load_request, parse_request
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
