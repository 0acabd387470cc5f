"""The one door of a request document: matrices expanded, every problem located and worded.

``parse_request`` expands each ``configs[i].matrix`` (``request.matrix``) before the model reads
the document, so every problem, of the matrix or of a generated config, is reported where the
document as written has it; ``load_request`` reads a file first. Everything that accepts a
request (API, schedules, CLI, the steps reading a stored one) comes through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from storagebench.request import model as request_model
from storagebench.request.errors import (
    FieldError,
    RequestError,
    _document_order,
    _located_errors,
    _path,
)
from storagebench.request.json_document import JsonDocumentError, decode_json
from storagebench.request.matrix import expand_matrix
from storagebench.request.problems import Loc
from storagebench.request.recovery import recovered_problems
from storagebench.request.references import reference_problems
from storagebench.request.tags import tag_problems


def parse_request(document: Any) -> request_model.BenchmarkRequest:
    """Validate a request document; RequestError lists every problem with its path."""
    if not isinstance(document, dict):
        raise RequestError([FieldError("(request)", document, "must be a JSON object")])
    # Every configs[i].matrix expanded (request.matrix): its own problems are located in the
    # document as written, the expanded document's are moved there (expansion.locate).
    expansion = expand_matrix(document)
    expanded = expansion.document
    located = [
        (FieldError(_path(list(p.loc)), None if p.missing else p.value, p.message, p.missing), p.loc)
        for p in expansion.problems
    ]
    failed: list[Loc] = []
    try:
        request = request_model.BenchmarkRequest.model_validate(expanded)
        if not located:
            return request
    except ValidationError as exc:
        for error, loc in _located_errors(exc, expanded):
            failed.append(loc)
            moved = expansion.locate(error, loc)
            if moved is not None:
                located.append(moved)
    # Pydantic skips a model's rules when one of its fields failed; run them on the parts that
    # parsed, and the request's cross-reference and tag checks on the raw document, so that one
    # pass reports everything (each problem once), in the order of the document.
    recovered = recovered_problems(request_model.BenchmarkRequest, expanded, failed)
    found = [
        (FieldError(_path(list(p.loc)), None if p.missing else p.value, p.message, p.missing), p.loc)
        for p in recovered
    ]
    for loc, value, message in [*reference_problems(expanded), *tag_problems(document.get("tags"))]:
        found.append((FieldError(_path(list(loc)), value, message), loc))
    known = {(e.path, e.message) for e, _ in located}
    for unplaced, unplaced_loc in found:
        moved = expansion.locate(unplaced, unplaced_loc)
        if moved is None:
            continue
        error, loc = moved
        if (error.path, error.message) not in known:
            located.append((error, loc))
            known.add((error.path, error.message))
    located.sort(key=lambda pair: _document_order(document, pair[1]))
    errors = [error for error, _ in located]
    raise RequestError(errors)


def load_request(path: str | Path) -> request_model.BenchmarkRequest:
    """Read and validate a request file (JSON); syntax errors name the line and column."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise RequestError(
            [FieldError(str(file), None, f"cannot read the file: {exc.strerror}", missing=True)]
        ) from None
    try:
        document = decode_json(data)
    except JsonDocumentError as exc:
        raise RequestError([FieldError(str(file), None, str(exc), True)]) from None
    return parse_request(document)
