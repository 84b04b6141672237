"""API errors: ``APIError`` carries the Status object a request fails with; the constructors
build the ones kube-apiserver answers with (k8s.io/apimachinery/pkg/api/errors), with the
same codes, reasons, messages and details."""

from __future__ import annotations

from typing import Any

import msgspec

from samplecontroller.apimachinery.errors import new_status
from samplecontroller.apiserver import schema
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError

__all__ = ["STALE", "APIError", "GoRawZero", "already_exists", "bad_request", "conflict", "details_for", "invalid",
           "laid_out", "not_allowed", "not_found", "not_found_path", "too_large_rv"]

_encode = msgspec.json.Encoder().encode
STALE = "the object has been modified; please apply your changes to the latest version and try again"


_STATUS_FIELDS = ("kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code")
_DETAILS_FIELDS = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
_CAUSE_FIELDS = ("reason", "message", "field")


def _ordered(obj: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    out = {key: obj[key] for key in fields if key in obj}
    if len(out) < len(obj):
        out.update((key, value) for key, value in obj.items() if key not in out)
    return out


def laid_out(obj: Any) -> Any:
    """``obj`` with a ``Status``'s fields in the order kube-apiserver's encoder writes them (the Go
    struct's: kind, apiVersion, metadata, status, message, reason, details {name, group, kind,
    uid, causes [{reason, message, field}], retryAfterSeconds}, code); anything else as it is."""
    if type(obj) is not dict or obj.get("kind") != "Status":
        return obj
    out = _ordered(obj, _STATUS_FIELDS)
    details = out.get("details")
    if type(details) is dict:
        details = out["details"] = _ordered(details, _DETAILS_FIELDS)
        causes = details.get("causes")
        if type(causes) is list:
            details["causes"] = [_ordered(c, _CAUSE_FIELDS) if type(c) is dict else c for c in causes]
    return out


class APIError(Exception):
    """An API failure: ``status`` is the Status object, ``code`` the HTTP code."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = new_status(code, reason, message, details)
        if code == 404 and "details" not in self.status:
            self.status["details"] = {}  # clients read details.name of every 404 (kubectl debug)
        self.encoded: bytes | None = None
        self.headers: dict[str, str] | None = None  # sent with the Status (a webhook denial's Retry-After)

    def encode(self) -> bytes:
        """The Status as JSON, kept in ``encoded`` (rendered once, where it is convenient: a worker
        thread for a huge error list)."""
        if self.encoded is None:
            self.encoded = _encode(laid_out(self.status)) + b"\n"  # as kube's JSON encoder ends a body
        return self.encoded


def details_for(res: Resource, name: str, kind: str | None = None) -> dict[str, Any]:
    """A Status' details naming object ``name`` of ``res`` (``kind`` defaults to the plural)."""
    out: dict[str, Any] = {"name": name}
    if res.group:
        out["group"] = res.group
    out["kind"] = kind or res.plural
    return out


def not_found(res: Resource, name: str) -> APIError:
    return APIError(404, "NotFound", f'{res.group_resource} "{name}" not found', details_for(res, name))


def not_found_path() -> APIError:
    """404 for a URL that names no resource the server serves."""
    return APIError(404, "NotFound", "the server could not find the requested resource")


def not_allowed() -> APIError:
    return APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def already_exists(res: Resource, name: str) -> APIError:
    return APIError(409, "AlreadyExists", f'{res.group_resource} "{name}" already exists', details_for(res, name))


def conflict(res: Resource, name: str, why: str) -> APIError:
    return APIError(409, "Conflict", f'Operation cannot be fulfilled on {res.group_resource} "{name}": {why}',
                    details_for(res, name))


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def invalid(res: Resource, name: str, errors: list[FieldError]) -> APIError:
    details = details_for(res, name, res.kind)
    details["causes"] = schema.status_details_causes(errors)
    return APIError(422, "Invalid", schema.format_invalid_message(res.kind_group, name, errors), details)


def too_large_rv(requested: int, current: int) -> APIError:
    """504 for a resourceVersion the server has not reached (the client retries after 1 s), worded
    as kube-apiserver's NewTimeoutError: "Timeout: Too large resource version: N, current: M"."""
    return APIError(504, "Timeout", f"Timeout: Too large resource version: {requested}, current: {current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                     "retryAfterSeconds": 1})


class GoRawZero(schema.GoRaw):
    """Renders as Go's ``0x0`` (the uint64 zero Kubernetes prints for a missing resourceVersion)."""

    def __new__(cls) -> GoRawZero:
        return super().__new__(cls, "0x0")
