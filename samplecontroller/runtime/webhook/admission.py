"""AdmissionReview v1 handling: defaulters (mutating) and validators (pkg/webhook/admission).

A request body is an ``admission.k8s.io/v1`` AdmissionReview; the answer is one with
``response.uid`` echoing the request's.

- ``DefaultingHandler(model, defaulter)``: decodes ``request.object`` into ``model``, calls
  ``defaulter.default(obj) -> obj`` and answers a JSONPatch from the original JSON to the result.
  As in Go's default, ``remove`` operations are dropped (fields the model does not know must
  not be deleted). DELETE requests are allowed untouched.
- ``ValidatingHandler(model, validator)``: ``validate_create(obj)``, ``validate_update(old, new)``,
  ``validate_delete(obj)`` return warnings (a list of strings, may be empty); raising denies:
  a ``StatusError`` answers its own status, anything else 403 Forbidden with the message.
- A body that is not an AdmissionReview, or an object that does not decode, gets
  ``allowed: false`` with code 400 (never a traceback).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from samplecontroller.apimachinery import objects
from samplecontroller.apimachinery.errors import StatusError
from samplecontroller.runtime._gvk import gvk_for_type
from samplecontroller.runtime.conversion import ConversionError, Convertible, hub
from samplecontroller.runtime.webhook.conversion import CONVERT_PATH, conversion_webhook_for
from samplecontroller.runtime.webhook.jsonpatch import create_patch

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

ADMISSION_API_VERSION = "admission.k8s.io/v1"


class Defaulter(Protocol[T]):
    def default(self, obj: T) -> T: ...


class Validator(Protocol[T_contra]):
    def validate_create(self, obj: T_contra) -> Sequence[str]: ...
    def validate_update(self, old: T_contra, new: T_contra) -> Sequence[str]: ...
    def validate_delete(self, obj: T_contra) -> Sequence[str]: ...


class Handler(Protocol):
    def handle(self, request: dict[str, Any]) -> dict[str, Any]: ...


class BadRequest(ValueError):
    """The AdmissionReview or its object could not be understood."""


def allowed(uid: str, warnings: Sequence[str] = ()) -> dict[str, Any]:
    resp: dict[str, Any] = {"uid": uid, "allowed": True}
    if warnings:
        resp["warnings"] = list(warnings)
    return resp


def denied(uid: str, code: int, reason: str, message: str, warnings: Sequence[str] = ()) -> dict[str, Any]:
    resp: dict[str, Any] = {"uid": uid, "allowed": False,
                            "status": {"code": code, "reason": reason, "message": message}}
    if warnings:
        resp["warnings"] = list(warnings)
    return resp


def review(response: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}


def parse_review(body: bytes) -> dict[str, Any]:
    """The ``request`` of an AdmissionReview v1 body; BadRequest otherwise."""
    try:
        doc = json.loads(body)
    except ValueError as err:
        raise BadRequest(f"request body is not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "AdmissionReview":
        raise BadRequest("request body is not an AdmissionReview")
    if doc.get("apiVersion") != ADMISSION_API_VERSION:
        raise BadRequest(f"unsupported AdmissionReview version {doc.get('apiVersion')!r} "
                         f"(only {ADMISSION_API_VERSION})")
    request = doc.get("request")
    if not isinstance(request, dict) or not request.get("uid"):
        raise BadRequest("AdmissionReview has no request or no request.uid")
    return request


def _decode(model: type[T], raw: Any, what: str) -> T:
    if not isinstance(raw, dict):
        raise BadRequest(f"request.{what} is missing")
    try:
        return objects.from_dict(model, raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        raise BadRequest(f"cannot decode request.{what}: {err}") from None


class DefaultingHandler:
    """A mutating handler around a Defaulter (see the module docstring)."""

    def __init__(self, model: type[Any], defaulter: Defaulter[Any], *, remove_unknown_fields: bool = False) -> None:
        self.model = model
        self.defaulter = defaulter
        self.remove_unknown_fields = remove_unknown_fields

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        uid = str(request["uid"])
        if request.get("operation") == "DELETE":
            return allowed(uid)
        try:
            raw = request.get("object")
            obj = _decode(self.model, raw, "object")
            defaulted = self.defaulter.default(obj)
        except BadRequest as err:
            return denied(uid, 400, "BadRequest", str(err))
        except StatusError as err:
            return denied(uid, err.code, err.reason, err.message)
        except Exception as err:
            return denied(uid, 500, "InternalError", f"defaulting failed: {type(err).__name__}: {err}")
        ops = create_patch(raw, objects.to_dict(defaulted))
        if not self.remove_unknown_fields:
            ops = [op for op in ops if op["op"] != "remove"]
        resp = allowed(uid)
        if ops:
            resp["patchType"] = "JSONPatch"
            resp["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        return resp


class ValidatingHandler:
    """A validating handler around a Validator (see the module docstring)."""

    def __init__(self, model: type[Any], validator: Validator[Any]) -> None:
        self.model = model
        self.validator = validator

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        uid = str(request["uid"])
        op = request.get("operation")
        try:
            if op == "CREATE":
                warnings = self.validator.validate_create(_decode(self.model, request.get("object"), "object"))
            elif op == "UPDATE":
                old = _decode(self.model, request.get("oldObject"), "oldObject")
                new = _decode(self.model, request.get("object"), "object")
                warnings = self.validator.validate_update(old, new)
            elif op == "DELETE":
                warnings = self.validator.validate_delete(_decode(self.model, request.get("oldObject"), "oldObject"))
            else:
                return denied(uid, 400, "BadRequest", f"unknown operation {op!r}")
        except BadRequest as err:
            return denied(uid, 400, "BadRequest", str(err))
        except StatusError as err:
            return denied(uid, err.code, err.reason, err.message)
        except Exception as err:
            return denied(uid, 403, "Forbidden", str(err))
        return allowed(uid, list(warnings or ()))


def path_for(model: type[Any], prefix: str, scheme: Any = None) -> str:
    """``/mutate-<group with dashes>-<version>-<kind lowercased>`` (or /validate-...), as Go."""
    group, version, kind = gvk_for_type(model, scheme)
    group_part = group.replace(".", "-") if group else "core"
    return f"/{prefix}-{group_part}-{version}-{kind.lower()}"


class WebhookBuilder:
    """``webhook_managed_by(mgr).for_(Foo).with_defaulter(d).with_validator(v).complete()``.

    ``with_conversion(spoke, ...)`` makes the ``for_`` model the hub of its kind and adds the
    spokes' conversions (``runtime.conversion.Convertible``) to the server's ``/convert``
    webhook; ``complete()`` then raises ``ValueError`` when a version of the kind in the
    manager's scheme has no conversion, or the kind has a hub already.
    """

    def __init__(self, mgr: Any) -> None:
        self.mgr = mgr
        self._model: type[Any] | None = None
        self._defaulter: Defaulter[Any] | None = None
        self._validator: Validator[Any] | None = None
        self._spokes: tuple[Convertible[Any, Any], ...] | None = None

    def for_(self, model: type[Any]) -> WebhookBuilder:
        self._model = model
        return self

    def with_defaulter(self, defaulter: Defaulter[Any]) -> WebhookBuilder:
        self._defaulter = defaulter
        return self

    def with_validator(self, validator: Validator[Any]) -> WebhookBuilder:
        self._validator = validator
        return self

    def with_conversion(self, *spokes: Convertible[Any, Any]) -> WebhookBuilder:
        """The ``for_`` model is its kind's hub; ``spokes`` convert the other versions to and from it."""
        self._spokes = spokes
        return self

    def complete(self) -> list[str]:
        """Register the handlers on the manager's webhook server; return their paths."""
        if self._model is None:
            raise ValueError("webhook builder needs for_(type)")
        if self._defaulter is None and self._validator is None and self._spokes is None:
            raise ValueError("webhook builder needs with_defaulter(), with_validator() and/or with_conversion()")
        server = self.mgr.get_webhook_server()
        scheme = self.mgr.get_scheme()
        paths = []
        if self._spokes is not None:
            paths.append(self._register_conversion(server, scheme, self._model, self._spokes))
        if self._defaulter is not None:
            path = path_for(self._model, "mutate", scheme)
            server.register(path, DefaultingHandler(self._model, self._defaulter))
            paths.append(path)
        if self._validator is not None:
            path = path_for(self._model, "validate", scheme)
            server.register(path, ValidatingHandler(self._model, self._validator))
            paths.append(path)
        return paths


    @staticmethod
    def _register_conversion(server: Any, scheme: Any, model: type[Any],
                             spokes: tuple[Convertible[Any, Any], ...]) -> str:
        converter = conversion_webhook_for(server, scheme).converter
        group, _, kind = gvk_for_type(model, scheme)
        try:
            converter.register(hub(model), *spokes)
            converter.check(group, kind)
        except ConversionError as err:
            raise ValueError(f"conversion webhook: {err}") from None
        return CONVERT_PATH


def webhook_managed_by(mgr: Any) -> WebhookBuilder:
    return WebhookBuilder(mgr)
