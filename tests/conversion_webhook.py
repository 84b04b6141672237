"""A real CRD conversion webhook for tests and benchmarks: an HTTPS server (http.server on a
thread, certificates from ``samplecontroller.tls`` via ``write_self_signed``) that converts the
Widgets of ``WIDGET_CRD`` between v1 (``spec.replicas``, ``status.ready``; the storage version)
and v2 (``spec.count``, ``status.readyCount``).

``ConversionWebhook.mode`` makes it misbehave on purpose: ``ok``, ``slow`` (answers after
``delay`` s), ``malformed`` (not JSON), ``uid`` (changes each object's UID), ``drop`` (returns one
object fewer), ``failure`` (``result.status: Failure`` with a message), ``http500``, ``label``
(adds the label ``converted=yes``, which kube keeps), ``badlabel`` (adds an invalid label
key), ``name`` (renames each object), ``extra`` (adds ``spec.bogus``, which
kube prunes). ``reviews`` records every review received
(its apiVersion, desiredAPIVersion and object count).

It also answers AdmissionReviews at ``/mutate``: the object gets the label ``admitted`` (the
request's version); ``admissions`` records the apiVersions of each review's object and oldObject.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from samplecontroller.runtime.webhook import write_self_signed

__all__ = ["ConversionWebhook", "convert_widget", "widget_crd"]


def widget_crd(url: str, ca_bundle: str, review_versions: tuple[str, ...] = ("v1", "v1beta1"),
               storage: str = "v1", group: str = "conversion.example.com") -> dict[str, Any]:
    """The Widget CRD (in ``group``), converting through the webhook at ``url``."""
    def version(name: str, replicas: str, ready: str) -> dict[str, Any]:
        return {
            "name": name, "served": True, "storage": name == storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    replicas: {"type": "integer"}, "image": {"type": "string"}, "mode": {"type": "string"},
                    **({"tags": {"type": "array", "items": {"type": "string"}}} if name == "v2" else {})}},
                "status": {"type": "object", "properties": {ready: {"type": "integer"}}}}}},
            "subresources": {"status": {}, "scale": {"specReplicasPath": f".spec.{replicas}",
                                                     "statusReplicasPath": f".status.{ready}"}},
            "selectableFields": [{"jsonPath": f".spec.{replicas}"}, {"jsonPath": ".spec.mode"}],
            "additionalPrinterColumns": [{"name": replicas.capitalize(), "type": "integer",
                                          "jsonPath": f".spec.{replicas}"}],
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [version("v1", "replicas", "ready"), version("v2", "count", "readyCount")],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": list(review_versions),
                "clientConfig": {"url": url, "caBundle": ca_bundle}}},
        },
    }


_RENAMES = {("v1", "v2"): {"replicas": "count", "ready": "readyCount"},
            ("v2", "v1"): {"count": "replicas", "readyCount": "ready"}}


def convert_widget(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """A Widget in ``desired`` (``conversion.example.com/v1`` or ``/v2``)."""
    source = str(obj["apiVersion"]).rpartition("/")[2]
    target = desired.rpartition("/")[2]
    renames = _RENAMES.get((source, target), {})
    out = {**obj, "apiVersion": desired}
    for part in ("spec", "status"):
        if isinstance(obj.get(part), dict):
            section = {renames.get(k, k): v for k, v in obj[part].items()}
            if target == "v1":
                section.pop("tags", None)  # v2 only: a lossy conversion
            out[part] = section
    return out


class ConversionWebhook:
    """The webhook server (see the module docstring); a context manager."""

    def __init__(self, cert_dir: Path) -> None:
        self.ca_bundle = base64.b64encode(write_self_signed(cert_dir)).decode()
        self.mode = "ok"
        self.delay = 0.0
        self.reviews: list[dict[str, Any]] = []
        self.admissions: list[tuple[str, str | None]] = []
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                status, payload = webhook.answer(body, self.path)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/convert"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ConversionWebhook:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def admit(self, review: dict[str, Any]) -> bytes:
        """The AdmissionReview answer: allowed, with the ``admitted`` label added."""
        request = review["request"]
        old = request.get("oldObject")
        self.admissions.append((request["object"]["apiVersion"], old["apiVersion"] if old else None))
        labels = request["object"].get("metadata", {}).get("labels")
        patch = [{"op": "add", "path": "/metadata/labels", "value": {}}] if not labels else []
        patch.append({"op": "add", "path": "/metadata/labels/admitted", "value": request["kind"]["version"]})
        return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
            "uid": request["uid"], "allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode()}}).encode()

    def answer(self, review: dict[str, Any], path: str) -> tuple[int, bytes]:
        """The HTTP status and body answering ``review``."""
        if path.startswith("/mutate"):
            return 200, self.admit(review)
        request = review["request"]
        self.reviews.append({"apiVersion": review.get("apiVersion"), "desired": request["desiredAPIVersion"],
                             "count": len(request["objects"]), "path": path})
        mode = self.mode
        if mode == "slow":
            time.sleep(self.delay)
        if mode == "malformed":
            return 200, b"this is not json"
        if mode == "http500":
            return 500, b"conversion exploded"
        response: dict[str, Any] = {"uid": request["uid"]}
        if mode == "failure":
            response["result"] = {"status": "Failure", "message": "widgets cannot travel in time"}
        else:
            converted = [convert_widget(obj, request["desiredAPIVersion"]) for obj in request["objects"]]
            if mode == "uid":
                converted = [{**o, "metadata": {**o["metadata"], "uid": "not-the-uid"}} for o in converted]
            if mode == "drop":
                converted = converted[1:]
            if mode == "extra":
                converted = [{**o, "spec": {**o.get("spec", {}), "bogus": True}} for o in converted]
            if mode == "badlabel":
                converted = [{**o, "metadata": {**o["metadata"], "labels": {"bad key!": "x"}}} for o in converted]
            if mode == "name":
                converted = [{**o, "metadata": {**o["metadata"], "name": "renamed"}} for o in converted]
            if mode == "label":
                converted = [{**o, "metadata": {**o["metadata"], "labels": {
                    **(o["metadata"].get("labels") or {}), "converted": "yes"}}} for o in converted]
            response["convertedObjects"] = converted
            response["result"] = {"status": "Success"}
        return 200, json.dumps({"apiVersion": review.get("apiVersion"), "kind": "ConversionReview",
                                "response": response}).encode()
