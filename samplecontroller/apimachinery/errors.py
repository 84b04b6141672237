"""Typed API errors carrying the Kubernetes Status, like k8s.io/apimachinery/pkg/api/errors.

Every error the API answers is a ``StatusError`` (or a subclass chosen by the Status reason
and HTTP code). ``is_*`` helpers accept any exception and never raise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

# Status reasons (metav1.StatusReason).
REASON_UNKNOWN = ""
REASON_UNAUTHORIZED = "Unauthorized"
REASON_FORBIDDEN = "Forbidden"
REASON_NOT_FOUND = "NotFound"
REASON_ALREADY_EXISTS = "AlreadyExists"
REASON_CONFLICT = "Conflict"
REASON_GONE = "Gone"
REASON_INVALID = "Invalid"
REASON_SERVER_TIMEOUT = "ServerTimeout"
REASON_TIMEOUT = "Timeout"
REASON_TOO_MANY_REQUESTS = "TooManyRequests"
REASON_BAD_REQUEST = "BadRequest"
REASON_METHOD_NOT_ALLOWED = "MethodNotAllowed"
REASON_NOT_ACCEPTABLE = "NotAcceptable"
REASON_REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
REASON_UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
REASON_INTERNAL_ERROR = "InternalError"
REASON_EXPIRED = "Expired"
REASON_SERVICE_UNAVAILABLE = "ServiceUnavailable"


class StatusError(Exception):
    """An error answered by the API server, with its ``Status`` object as a dict."""

    def __init__(self, status: dict[str, Any]) -> None:
        self.status: dict[str, Any] = status
        super().__init__(self.message or self.reason or f"status code {self.code}")

    @property
    def code(self) -> int:
        return int(self.status.get("code") or 0)

    @property
    def reason(self) -> str:
        return str(self.status.get("reason") or "")

    @property
    def message(self) -> str:
        return str(self.status.get("message") or "")

    @property
    def details(self) -> dict[str, Any]:
        d = self.status.get("details")
        return d if isinstance(d, dict) else {}


class UnauthorizedError(StatusError):
    """401 Unauthorized: no or bad credentials."""

class ForbiddenError(StatusError):
    """403 Forbidden: authenticated, but RBAC (or admission) does not allow it."""

class NotFoundError(StatusError):
    """404 NotFound: the object (or resource) does not exist."""

class AlreadyExistsError(StatusError):
    """409 AlreadyExists: a create of a name that is taken."""

class ConflictError(StatusError):
    """409 Conflict: the write was based on a stale resourceVersion (read again and retry)."""

class GoneError(StatusError):
    """410 Gone: the requested resourceVersion is no longer available."""

class ExpiredError(GoneError):
    """410 Expired: a list continue token or watch resourceVersion is too old (list again)."""

class InvalidError(StatusError):
    """422 Invalid: the object fails validation; ``details.causes`` name the fields."""

class BadRequestError(StatusError):
    """400 BadRequest: the request cannot be understood."""

class MethodNotAllowedError(StatusError):
    """405 MethodNotAllowed: the resource does not support the verb."""

class UnsupportedMediaTypeError(StatusError):
    """415 UnsupportedMediaType: the content type (or patch type) is not accepted."""

class TimeoutError_(StatusError):
    """504 Timeout or ServerTimeout: the server did not finish in time (the request may be retried)."""

class TooManyRequestsError(StatusError):
    """429 TooManyRequests: throttled (``details.retryAfterSeconds`` says when to retry)."""

class InternalError(StatusError):
    """500 InternalError: the server failed."""

class ServiceUnavailableError(StatusError):
    """503 ServiceUnavailable: the server cannot answer now."""


_BY_REASON: dict[str, type[StatusError]] = {
    REASON_UNAUTHORIZED: UnauthorizedError,
    REASON_FORBIDDEN: ForbiddenError,
    REASON_NOT_FOUND: NotFoundError,
    REASON_ALREADY_EXISTS: AlreadyExistsError,
    REASON_CONFLICT: ConflictError,
    REASON_GONE: GoneError,
    REASON_EXPIRED: ExpiredError,
    REASON_INVALID: InvalidError,
    REASON_BAD_REQUEST: BadRequestError,
    REASON_METHOD_NOT_ALLOWED: MethodNotAllowedError,
    REASON_UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
    REASON_SERVER_TIMEOUT: TimeoutError_,
    REASON_TIMEOUT: TimeoutError_,
    REASON_TOO_MANY_REQUESTS: TooManyRequestsError,
    REASON_INTERNAL_ERROR: InternalError,
    REASON_SERVICE_UNAVAILABLE: ServiceUnavailableError,
}

_BY_CODE: dict[int, type[StatusError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    415: UnsupportedMediaTypeError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
    504: TimeoutError_,
}


def new_status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build a Failure ``Status`` object as the API server sends it."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        status["details"] = details
    status["code"] = code  # the Go struct's order: details before code
    return status


def from_status(status: dict[str, Any]) -> StatusError:
    """The typed error for a Status object: by reason first, then by code."""
    reason = str(status.get("reason") or "")
    cls = _BY_REASON.get(reason) or _BY_CODE.get(int(status.get("code") or 0), StatusError)
    return cls(status)


def from_response(code: int, body: bytes | str | None) -> StatusError:
    """The typed error for an HTTP error response; a body that is not a Status is kept as the message."""
    status: dict[str, Any] | None = None
    if body:
        try:
            decoded = json.loads(body)
            if isinstance(decoded, dict) and decoded.get("kind") == "Status":
                status = decoded
        except ValueError:
            pass
    if status is None:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
        cls = _BY_CODE.get(code, StatusError)
        reason = next((r for r, c in _BY_REASON.items() if c is cls), REASON_UNKNOWN)
        status = new_status(code, reason, text.strip() or f"the server responded with status {code}")
    status.setdefault("code", code)
    return from_status(status)


def new_not_found(group: str, resource: str, name: str) -> NotFoundError:
    """The NotFound error kube-apiserver returns for ``resource.group`` ``name``."""
    qualified = f"{resource}.{group}" if group else resource
    return NotFoundError(
        new_status(404, REASON_NOT_FOUND, f'{qualified} "{name}" not found',
                   {"name": name, "group": group, "kind": resource})
    )


def new_already_exists(group: str, resource: str, name: str) -> AlreadyExistsError:
    """The AlreadyExists error kube-apiserver returns for ``resource.group`` ``name``."""
    qualified = f"{resource}.{group}" if group else resource
    return AlreadyExistsError(
        new_status(409, REASON_ALREADY_EXISTS, f'{qualified} "{name}" already exists',
                   {"name": name, "group": group, "kind": resource})
    )


def new_invalid(group: str, kind: str, name: str, causes: Sequence[tuple[str, str]]) -> InvalidError:
    """Go's ``apierrors.NewInvalid``: 422 Invalid for ``causes`` (field path, what is wrong), e.g.
    ``Backup.ops.example.com "b" is invalid: spec.message: Too long: may not be more than 64 bytes``."""
    qualified = f"{kind}.{group}" if group else kind
    errs = [f"{path}: {detail}" for path, detail in causes]
    message = f'{qualified} "{name}" is invalid'
    if errs:
        message += ": " + (errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]")
    details = {"name": name, "group": group, "kind": kind,
               "causes": [{"field": path, "message": detail} for path, detail in causes]}
    return InvalidError(new_status(422, REASON_INVALID, message, details))


def new_conflict(group: str, resource: str, name: str, why: str) -> ConflictError:
    """The Conflict error kube-apiserver returns for ``resource.group`` ``name``, ``why`` being the reason."""
    qualified = f"{resource}.{group}" if group else resource
    return ConflictError(
        new_status(409, REASON_CONFLICT, f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
                   {"name": name, "group": group, "kind": resource})
    )


def _reason_is(err: BaseException, reason: str, code: int) -> bool:
    if not isinstance(err, StatusError):
        return False
    if err.reason:
        return err.reason == reason
    return err.code == code


def is_not_found(err: BaseException) -> bool:
    """True for a NotFound StatusError (by reason, else by code 404)."""
    return _reason_is(err, REASON_NOT_FOUND, 404)


def is_already_exists(err: BaseException) -> bool:
    """True for an AlreadyExists StatusError (by reason, else by code 409)."""
    return _reason_is(err, REASON_ALREADY_EXISTS, 409)


def is_conflict(err: BaseException) -> bool:
    """True for a Conflict StatusError (by reason, else by code 409)."""
    return _reason_is(err, REASON_CONFLICT, 409)


def is_invalid(err: BaseException) -> bool:
    """True for an Invalid StatusError (by reason, else by code 422)."""
    return _reason_is(err, REASON_INVALID, 422)


def is_bad_request(err: BaseException) -> bool:
    """True for a BadRequest StatusError (by reason, else by code 400)."""
    return _reason_is(err, REASON_BAD_REQUEST, 400)


def is_forbidden(err: BaseException) -> bool:
    """True for a Forbidden StatusError (by reason, else by code 403)."""
    return _reason_is(err, REASON_FORBIDDEN, 403)


def is_unauthorized(err: BaseException) -> bool:
    """True for an Unauthorized StatusError (by reason, else by code 401)."""
    return _reason_is(err, REASON_UNAUTHORIZED, 401)


def is_gone(err: BaseException) -> bool:
    """True for any 410 StatusError (Gone or Expired)."""
    return isinstance(err, StatusError) and err.code == 410


def is_resource_expired(err: BaseException) -> bool:
    """410 Expired (or Gone): the requested resourceVersion is compacted; re-list from scratch."""
    return isinstance(err, StatusError) and (err.reason in (REASON_EXPIRED, REASON_GONE) or err.code == 410)


def is_too_many_requests(err: BaseException) -> bool:
    """True for a TooManyRequests StatusError (by reason, else by code 429)."""
    return _reason_is(err, REASON_TOO_MANY_REQUESTS, 429)


def is_timeout(err: BaseException) -> bool:
    """True for a Timeout or ServerTimeout StatusError, or any 504."""
    return isinstance(err, StatusError) and (err.reason in (REASON_TIMEOUT, REASON_SERVER_TIMEOUT) or err.code == 504)


def is_method_not_supported(err: BaseException) -> bool:
    """True for a MethodNotAllowed StatusError (by reason, else by code 405)."""
    return _reason_is(err, REASON_METHOD_NOT_ALLOWED, 405)
