"""AdmissionReview v1 handling: defaulters (mutating) and validators (pkg/webhook/admission).

A request body is an ``admission.k8s.io/v1`` AdmissionReview; the answer is one with
``response.uid`` echoing the request's.

- ``DefaultingHandler(model, defaulter)``: decodes ``request.object`` into ``model``, calls
  ``defaulter.default(obj) -> obj`` and answers a JSONPatch from the original JSON to the result.
  As in Go's default, ``remove`` operations are dropped (fields the model does not know must
  not be deleted). DELETE requests are allowed untouched. Raising denies, as a validator's
  exceptions do.
- ``ValidatingHandler(model, validator)``: ``validate_create(obj)``, ``validate_update(old, new)``,
  ``validate_delete(obj)`` return warnings (a list of strings, may be empty); raising denies:
  a ``StatusError`` answers its whole Status (code, reason, message and ``details``: causes,
  retryAfterSeconds, as controller-runtime's ``validationResponseFromStatus``), anything else 403
  Forbidden with the message. kube-apiserver passes that Status to the client with only the
  message prefixed, so ``kubectl`` names the object and each field of an Invalid one.
- A body that is not an AdmissionReview, or an object that does not decode, gets
  ``allowed: false`` with code 400 (never a traceback).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import weakref
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from samplecontroller.apimachinery import objects
from samplecontroller.apimachinery.errors import StatusError
from samplecontroller.client.unstructured import guess_plural
from samplecontroller.runtime._gvk import gvk_for_type
from samplecontroller.runtime.conversion import ConversionError, Convertible, hub
from samplecontroller.runtime.webhook.conversion import CONVERT_PATH, conversion_webhook_for
from samplecontroller.runtime.webhook.jsonpatch import create_patch
from samplecontroller.runtime.webhook_options import WebhookDeclaration, WebhookOptions

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

ADMISSION_API_VERSION = "admission.k8s.io/v1"


class Defaulter(Protocol[T]):
    """Sets defaults on an object being created or updated (controller-runtime's CustomDefaulter).

    Wrapped by ``DefaultingHandler``, registered by ``WebhookBuilder.with_defaulter``.
    """

    def default(self, obj: T) -> T:
        """Return ``obj`` with its defaults set (models are frozen: a new object, e.g. ``msgspec.structs.replace``).

        Called for the CREATE and UPDATE requests the webhook configuration lists, never for
        DELETE (allowed untouched), on a thread of the webhook server's pool: it may block, and calls for
        different requests may run at the same time. ``obj`` is the request's object decoded
        into the handler's model. The answer is a JSON patch from the request's object to the
        returned one; fields the model does not know are kept. Raising denies the request: a
        ``StatusError`` with its whole Status (details included), anything else with 403
        Forbidden and its text (controller-runtime's ``Denied``). A defaulter should be idempotent: the API server may call it again (the
        ``reinvocationPolicy`` of the webhook configuration).
        """
        ...


class Validator(Protocol[T_contra]):
    """Accepts or refuses an object being created, updated or deleted (controller-runtime's CustomValidator).

    Wrapped by ``ValidatingHandler``, registered by ``WebhookBuilder.with_validator``. Each method
    runs on a thread of the webhook server's pool (it may block; calls for different requests may
    run at the same time), returns warnings the API server passes to the client (``kubectl``
    prints them; an empty sequence for none), and refuses the request by raising: a
    ``StatusError`` (for instance ``apimachinery.errors.new_invalid``) is answered with its whole
    Status (code, reason, message, details with causes and retryAfterSeconds), any other
    exception with 403 Forbidden and its text. A validator
    must not change the object; it is called with what the mutating webhooks produced.
    """

    def validate_create(self, obj: T_contra) -> Sequence[str]:
        """Validate ``obj`` on CREATE; return warnings, raise to refuse."""
        ...

    def validate_update(self, old: T_contra, new: T_contra) -> Sequence[str]:
        """Validate the change from ``old`` (stored) to ``new`` on UPDATE; return warnings, raise to refuse.

        Called for updates of the main resource (and of its ``status`` when the webhook
        configuration lists the subresource): where an immutable field is checked.
        """
        ...

    def validate_delete(self, obj: T_contra) -> Sequence[str]:
        """Validate the deletion of ``obj`` (the stored object) on DELETE; return warnings, raise to refuse.

        Called only when the webhook configuration lists the DELETE operation (the scaffold's
        lists CREATE and UPDATE).
        """
        ...


class Handler(Protocol):
    """Answers admission requests (controller-runtime's admission.Handler): what ``Server.register`` serves.

    ``DefaultingHandler`` and ``ValidatingHandler`` are the two the builder registers; a custom
    one builds its answer with ``allowed`` and ``denied``.
    """

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """The AdmissionResponse (as JSON) for ``request``, the ``request`` of an AdmissionReview v1.

        ``request`` has been checked to be a dict with a ``uid``; everything else in it is as
        the API server sent it. The answer's ``uid`` must be the request's; the server wraps it
        in an AdmissionReview (``review``). Runs on a thread of the server's pool, so it may
        block. It should not raise: an exception is answered with HTTP 500, which the API
        server treats as a call failure (the webhook configuration's ``failurePolicy``
        decides), not as a denial.
        """
        ...


class BadRequest(ValueError):
    """The AdmissionReview or its object could not be understood."""


def allowed(uid: str, warnings: Sequence[str] = ()) -> dict[str, Any]:
    """An AdmissionResponse allowing the request ``uid`` unchanged (no patch), with ``warnings`` if any."""
    resp: dict[str, Any] = {"uid": uid, "allowed": True}
    if warnings:
        resp["warnings"] = list(warnings)
    return resp


def denied(uid: str, code: int, reason: str, message: str, warnings: Sequence[str] = (),
           details: dict[str, Any] | None = None) -> dict[str, Any]:
    """An AdmissionResponse refusing the request ``uid``.

    ``code``, ``reason``, ``message`` and ``details`` (a metav1 StatusDetails: ``name``, ``group``,
    ``kind``, ``causes``, ``retryAfterSeconds``) become the response's Status, which the API
    server returns to the client with the message prefixed by ``admission webhook "<name>"
    denied the request: ``; ``reason`` is a metav1 StatusReason such as ``Forbidden`` or
    ``Invalid``. ``denied_by_status`` answers a whole Status instead.
    """
    status: dict[str, Any] = {"code": code, "reason": reason, "message": message}
    if details:
        status["details"] = details
    return denied_by_status(uid, status, warnings)


def denied_by_status(uid: str, status: dict[str, Any], warnings: Sequence[str] = ()) -> dict[str, Any]:
    """An AdmissionResponse refusing the request ``uid`` with ``status`` (a metav1 Status as a dict,
    for instance a ``StatusError``'s ``status``) as its result, whole (controller-runtime's
    ``validationResponseFromStatus``): only ``kind``/``apiVersion`` are left out, as Go's
    ``metav1.Status`` inside an AdmissionResponse carries no type."""
    result = {k: v for k, v in status.items() if k not in ("kind", "apiVersion")}
    resp: dict[str, Any] = {"uid": uid, "allowed": False, "status": result}
    if warnings:
        resp["warnings"] = list(warnings)
    return resp


def review(response: dict[str, Any]) -> dict[str, Any]:
    """An ``admission.k8s.io/v1`` AdmissionReview carrying ``response`` (what the server sends back)."""
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
        """Allow ``request`` with a JSON patch to the defaulted object (none when nothing changed).

        DELETE is allowed untouched. ``remove`` operations are dropped unless the handler was
        made with ``remove_unknown_fields=True``, so fields the model does not know survive. An
        object that does not decode is denied with 400 BadRequest; the defaulter's exceptions
        as ``Defaulter.default`` says. Never raises.
        """
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
            return denied_by_status(uid, err.status)
        except Exception as err:
            return denied(uid, 403, "Forbidden", str(err))  # controller-runtime's Denied(err.Error())
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
        """Call the validator's method for the request's operation and allow with its warnings.

        CREATE validates ``object``, UPDATE ``oldObject`` and ``object``, DELETE ``oldObject``;
        any other operation (CONNECT), or an object that does not decode, is denied with 400
        BadRequest; the validator's exceptions as ``Validator`` says. Never raises.
        """
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
            return denied_by_status(uid, err.status)
        except Exception as err:
            return denied(uid, 403, "Forbidden", str(err))
        return allowed(uid, list(warnings or ()))


_declared_by_server: weakref.WeakKeyDictionary[Any, list[WebhookDeclaration]] = weakref.WeakKeyDictionary()


def declarations(server: Any) -> list[WebhookDeclaration]:
    """The webhooks registered through ``WebhookBuilder`` on ``server`` (a ``Server``), in order."""
    return list(_declared_by_server.get(server, []))


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
        self._defaulter_options = WebhookOptions()
        self._validator_options = WebhookOptions()
        self._spokes: tuple[Convertible[Any, Any], ...] | None = None

    def for_(self, model: type[Any]) -> WebhookBuilder:
        """The kind the webhooks are for: a model class registered in the manager's scheme (required).

        Its group, version and kind name the paths (``path_for``) and its class decodes the
        requests' objects.
        """
        self._model = model
        return self

    def with_defaulter(self, defaulter: Defaulter[Any], *, options: WebhookOptions | None = None) -> WebhookBuilder:
        """Serve ``defaulter`` as the mutating webhook at ``/mutate-<group>-<version>-<kind>``;
        ``options``: how the API server calls it (``WebhookOptions``, kubebuilder's defaults)."""
        self._defaulter = defaulter
        self._defaulter_options = (options or WebhookOptions()).checked("with_defaulter")
        return self

    def with_validator(self, validator: Validator[Any], *, options: WebhookOptions | None = None) -> WebhookBuilder:
        """Serve ``validator`` as the validating webhook at ``/validate-<group>-<version>-<kind>``;
        ``options``: how the API server calls it (``WebhookOptions``, kubebuilder's defaults)."""
        self._validator = validator
        self._validator_options = (options or WebhookOptions()).checked("with_validator")
        if options is not None and options.reinvocation_policy is not None:
            raise ValueError("with_validator: reinvocation_policy applies to defaulters (mutating webhooks) only")
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
        declared = _declared_by_server.setdefault(server, [])
        group, version, kind = gvk_for_type(self._model, scheme)
        plural = _plural(scheme, self._model, kind)

        def declare(type_: str, path: str, options: WebhookOptions | None) -> None:
            if options is not None and not options.name:
                options = dataclasses.replace(options, name=f"{type_[0]}{kind.lower()}-{version}.{group}")
            declared.append(WebhookDeclaration(type_, group, version, kind, plural, path, options))

        if self._spokes is not None:
            paths.append(self._register_conversion(server, scheme, self._model, self._spokes))
            declare("conversion", CONVERT_PATH, None)
        if self._defaulter is not None:
            path = path_for(self._model, "mutate", scheme)
            server.register(path, DefaultingHandler(self._model, self._defaulter))
            paths.append(path)
            declare("mutating", path, self._defaulter_options)
        if self._validator is not None:
            path = path_for(self._model, "validate", scheme)
            server.register(path, ValidatingHandler(self._model, self._validator))
            paths.append(path)
            declare("validating", path, self._validator_options)
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


def _plural(scheme: Any, model: type[Any], kind: str) -> str:
    """The model's resource name from the scheme, else the guessed plural of ``kind``."""
    if scheme is not None:
        try:
            return str(scheme.info_for(model).resource)
        except KeyError:
            pass
    return guess_plural(kind)


def webhook_managed_by(mgr: Any) -> WebhookBuilder:
    """A ``WebhookBuilder`` registering on ``mgr``'s webhook server (controller-runtime's ``NewWebhookManagedBy``).

    ``mgr`` is anything with ``get_webhook_server()`` and ``get_scheme()`` (a ``Manager``).
    Nothing is registered until ``complete()``.
    """
    return WebhookBuilder(mgr)
