"""The CRD conversion webhook (controller-runtime's pkg/webhook/conversion), served at ``/convert``.

``ConversionWebhook(converter)`` answers ``apiextensions.k8s.io`` ``ConversionReview`` requests
in v1 and v1beta1 (the answer in the request's version, ``response.uid`` echoing the request's):
each of ``request.objects`` is converted to ``request.desiredAPIVersion`` through its kind's hub
(``samplecontroller.runtime.conversion.Converter``), in order. One object that cannot be
converted fails the whole review: ``result: {status: Failure, message: ...}`` and no objects,
which the API server turns into its ``conversion webhook for ... failed`` error.

A body that is not a ConversionReview with a request (not JSON, another kind or version, no
``request.uid``) is HTTP 400 with a one-line message, as Go's handler answers 400.

``webhook_managed_by(mgr).for_(Hub).with_conversion(spoke, ...)`` registers kinds on the
Manager's webhook server's one ``/convert`` handler (``conversion_webhook_for(server, scheme)``).
"""

from __future__ import annotations

import json
from typing import Any

from samplecontroller.client.scheme import Scheme
from samplecontroller.logs import get_logger
from samplecontroller.runtime.conversion import ConversionError, Converter

__all__ = ["CONVERT_PATH", "REVIEW_VERSIONS", "ConversionWebhook", "conversion_webhook_for"]

log = get_logger("runtime.webhook.conversion")

CONVERT_PATH = "/convert"
REVIEW_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


class BadReview(ValueError):
    """The body is not a ConversionReview this webhook can answer."""


def parse_review(body: bytes) -> tuple[str, dict[str, Any]]:
    """The review's apiVersion and its ``request``; BadReview otherwise."""
    try:
        doc = json.loads(body)
    except ValueError as err:
        raise BadReview(f"request body is not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "ConversionReview":
        raise BadReview("request body is not a ConversionReview")
    api_version = doc.get("apiVersion")
    if api_version not in REVIEW_VERSIONS:
        raise BadReview(f"unsupported ConversionReview version {api_version!r} (supported: {', '.join(REVIEW_VERSIONS)})")
    request = doc.get("request")
    if not isinstance(request, dict) or not request.get("uid"):
        raise BadReview("ConversionReview has no request or no request.uid")
    return str(api_version), request


class ConversionWebhook:
    """Serves a Converter as ConversionReviews (see the module docstring)."""

    def __init__(self, converter: Converter) -> None:
        self.converter = converter

    def convert(self, request: dict[str, Any]) -> dict[str, Any]:
        """The ``response`` of a review for ``request`` (never raises for a bad object)."""
        uid = str(request["uid"])
        desired = request.get("desiredAPIVersion")
        objects = request.get("objects")
        try:
            if not isinstance(desired, str) or not desired:
                raise ConversionError("request.desiredAPIVersion is missing")
            if not isinstance(objects, list):
                raise ConversionError("request.objects is missing")
            converted = []
            for i, obj in enumerate(objects):
                if not isinstance(obj, dict):
                    raise ConversionError(f"request.objects[{i}] is not an object")
                converted.append(self.converter.convert(obj, desired))
        except ConversionError as err:
            log.info("Conversion failed", uid=uid, error=str(err))
            return {"uid": uid, "convertedObjects": [], "result": {"status": "Failure", "message": str(err)}}
        return {"uid": uid, "convertedObjects": converted, "result": {"status": "Success"}}

    def serve(self, body: bytes) -> tuple[int, dict[str, Any] | str]:
        """HTTP status and the JSON answer (or a text message for a bad request)."""
        try:
            api_version, request = parse_review(body)
        except BadReview as err:
            return 400, f"{err}\n"
        return 200, {"apiVersion": api_version, "kind": "ConversionReview", "response": self.convert(request)}


def conversion_webhook_for(server: Any, scheme: Scheme | None) -> ConversionWebhook:
    """The ConversionWebhook at ``/convert`` on ``server``, registered on first use."""
    existing = server.handler(CONVERT_PATH)
    if isinstance(existing, ConversionWebhook):
        return existing
    if existing is not None:
        raise ValueError(f"{CONVERT_PATH} is taken by another handler ({type(existing).__name__})")
    hook = ConversionWebhook(Converter(scheme))
    server.register(CONVERT_PATH, hook)
    return hook
