"""Admission webhooks under ``matchPolicy`` (admissionregistration.k8s.io/v1): with ``Equivalent``
(the default) a webhook whose rules list only one version of a CRD is also called for requests in
its other served versions, with the object converted to the version the rule matched (through the
CRD's conversion webhook under ``strategy: Webhook``) and converted back after mutation; with
``Exact`` it is not called. The webhooks are real HTTPS servers."""

from __future__ import annotations

import base64
import itertools
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.runtime.webhook import write_self_signed
from tests.conversion_webhook import ConversionWebhook, widget_crd

from .conftest import Raw, checked_kubectl

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
GROUP = "matchpolicy.example.com"
WIDGETS = "matchpolicy-widgets.example.com"
_names = itertools.count()


class AdmissionHooks:
    """An HTTPS admission webhook: ``/default`` sets ``spec.size`` to 3 when absent and labels the
    object ``defaulted=<the review's kind version>``; ``/validate`` denies ``spec.mode: forbidden``.
    ``reviews`` records every request received (by path)."""

    def __init__(self, cert_dir: Path) -> None:
        self.ca_bundle = base64.b64encode(write_self_signed(cert_dir)).decode()
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                payload = json.dumps(hooks.answer(self.path.partition("?")[0], review["request"])).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.base = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        self.reviews.append((path, request))
        response: dict[str, Any] = {"uid": request["uid"], "allowed": True}
        obj = request.get("object") or {}
        if path == "/validate" and (obj.get("spec") or {}).get("mode") == "forbidden":
            response = {"uid": request["uid"], "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden", "message": "mode forbidden is not allowed"}}
        if path == "/default":
            patch: list[dict[str, Any]] = []
            if not (obj.get("metadata") or {}).get("labels"):
                patch.append({"op": "add", "path": "/metadata/labels", "value": {}})
            patch.append({"op": "add", "path": "/metadata/labels/defaulted", "value": request["kind"]["version"]})
            if "size" not in (obj.get("spec") or {}):
                patch.append({"op": "add", "path": "/spec/size", "value": 3})
            response.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(patch).encode()).decode())
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}

    def for_object(self, path: str, name: str) -> list[dict[str, Any]]:
        """The reviews ``path`` received for the object ``name``."""
        return [request for at, request in self.reviews if at == path and request.get("name") == name]


def gadget_crd() -> dict[str, Any]:
    """Gadgets in v1 (storage) and v2, the same schema, conversion strategy None."""
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "mode": {"type": "string"}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                                  {"name": "v2", "served": True, "storage": False, "schema": schema}]}}


def configuration(kind: str, name: str, url: str, ca: str, group: str, resource: str, suite: str,
                  match_policy: str | None) -> dict[str, Any]:
    """A webhook configuration whose one rule lists only v1 of ``group``/``resource``, for the
    objects labelled ``suite=<suite>``."""
    hook: dict[str, Any] = {
        "name": f"{name}.{group}", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": url, "caBundle": ca}, "objectSelector": {"matchLabels": {"suite": suite}},
        "rules": [{"apiGroups": [group], "apiVersions": ["v1"], "resources": [resource],
                   "operations": ["CREATE", "UPDATE"]}]}
    if match_policy is not None:
        hook["matchPolicy"] = match_policy
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": [hook]}


@pytest.fixture(scope="module")
def hooks(server: LocalAPIServer, raw: Raw, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdmissionHooks]:
    """The Gadget CRD and the webhook server, with configurations for the suites ``default``
    (matchPolicy absent), ``equivalent`` and ``exact``."""
    admission = AdmissionHooks(tmp_path_factory.mktemp("certs"))
    code, _, body = raw.call("POST", CRDS, gadget_crd())
    assert code == 201, body
    names = []
    for suite, policy in (("default", None), ("equivalent", "Equivalent"), ("exact", "Exact")):
        for kind, path, collection in (("MutatingWebhookConfiguration", "/default", MUTATING),
                                       ("ValidatingWebhookConfiguration", "/validate", VALIDATING)):
            name = f"gadgets-{suite}-{path[1:]}"
            config = configuration(kind, name, admission.base + path, admission.ca_bundle, GROUP, "gadgets",
                                   suite, policy)
            code, _, body = raw.call("POST", collection, config)
            assert code == 201, body
            names.append(f"{collection}/{name}")
    yield admission
    for name in names:
        raw.call("DELETE", name)
    admission.close()


def gadgets(version: str, name: str = "") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/default/gadgets" + (f"/{name}" if name else "")


def gadget(version: str, name: str, suite: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Gadget",
            "metadata": {"name": name, "labels": {"suite": suite}}, "spec": spec}


def fresh() -> str:
    return f"g-{next(_names)}"


@pytest.mark.parametrize("suite", ["default", "equivalent"])
def test_a_create_in_another_version_is_defaulted_and_validated(hooks: AdmissionHooks, raw: Raw, suite: str) -> None:
    name = fresh()
    code, _, created = raw.call("POST", gadgets("v2"), gadget("v2", name, suite))
    assert code == 201, created
    assert created["apiVersion"] == f"{GROUP}/v2" and created["spec"] == {"size": 3}
    assert created["metadata"]["labels"] == {"suite": suite, "defaulted": "v1"}
    code, _, denied = raw.call("POST", gadgets("v2"), gadget("v2", fresh(), suite, mode="forbidden"))
    assert code == 403 and denied["reason"] == "Forbidden", denied
    assert denied["message"] == (f'admission webhook "gadgets-{suite}-validate.{GROUP}" denied the request: '
                                 "mode forbidden is not allowed")


def test_a_patch_in_another_version_is_defaulted_and_can_be_denied(hooks: AdmissionHooks, raw: Raw) -> None:
    name = fresh()
    assert raw.call("POST", gadgets("v1"), gadget("v1", name, "default", size=1))[0] == 201
    code, _, patched = raw.call("PATCH", gadgets("v2", name), {"metadata": {"labels": {"defaulted": None}}},
                                ctype="application/merge-patch+json")
    assert code == 200 and patched["apiVersion"] == f"{GROUP}/v2", patched
    assert patched["metadata"]["labels"]["defaulted"] == "v1" and patched["spec"] == {"size": 1}
    code, _, denied = raw.call("PATCH", gadgets("v2", name), {"spec": {"mode": "forbidden"}},
                               ctype="application/merge-patch+json")
    assert code == 403 and "mode forbidden is not allowed" in denied["message"], denied
    code, _, current = raw.call("GET", gadgets("v2", name))
    assert code == 200 and "mode" not in current["spec"]


def test_the_review_names_the_matched_version_and_the_requested_one(hooks: AdmissionHooks, raw: Raw) -> None:
    name = fresh()
    assert raw.call("POST", gadgets("v2"), gadget("v2", name, "equivalent", size=2))[0] == 201
    code, _, body = raw.call("PATCH", gadgets("v2", name), {"spec": {"size": 5}}, ctype="application/merge-patch+json")
    assert code == 200, body
    for path in ("/default", "/validate"):
        create, update = hooks.for_object(path, name)
        for request in (create, update):
            assert request["kind"] == {"group": GROUP, "version": "v1", "kind": "Gadget"}
            assert request["resource"] == {"group": GROUP, "version": "v1", "resource": "gadgets"}
            assert request["requestKind"] == {"group": GROUP, "version": "v2", "kind": "Gadget"}
            assert request["requestResource"] == {"group": GROUP, "version": "v2", "resource": "gadgets"}
            assert request["object"]["apiVersion"] == f"{GROUP}/v1"
        assert create["oldObject"] is None
        assert update["oldObject"]["apiVersion"] == f"{GROUP}/v1" and update["oldObject"]["spec"]["size"] == 2
        assert update["object"]["spec"]["size"] == 5
    in_v1 = fresh()  # a request in the rule's own version names it as both
    assert raw.call("POST", gadgets("v1"), gadget("v1", in_v1, "equivalent"))[0] == 201
    (request,) = hooks.for_object("/default", in_v1)
    assert request["kind"]["version"] == request["requestKind"]["version"] == "v1"


def test_match_policy_exact_is_not_called_for_another_version(hooks: AdmissionHooks, raw: Raw) -> None:
    """The same request is admitted by the Equivalent webhooks and passes the Exact ones by."""
    name = fresh()
    code, _, created = raw.call("POST", gadgets("v2"), gadget("v2", name, "exact", mode="forbidden"))
    assert code == 201 and created["spec"] == {"mode": "forbidden"}, created
    assert created["metadata"]["labels"] == {"suite": "exact"}
    assert hooks.for_object("/default", name) == [] and hooks.for_object("/validate", name) == []
    code, _, denied = raw.call("POST", gadgets("v2"), gadget("v2", fresh(), "equivalent", mode="forbidden"))
    assert code == 403, denied
    contrast = fresh()
    code, _, created = raw.call("POST", gadgets("v2"), gadget("v2", contrast, "equivalent"))
    assert code == 201 and created["metadata"]["labels"]["defaulted"] == "v1", created
    assert len(hooks.for_object("/default", contrast)) == len(hooks.for_object("/validate", contrast)) == 1


def test_kubectl_apply_in_another_version_is_defaulted_and_denied(hooks: AdmissionHooks, raw: Raw,
                                                                  server: LocalAPIServer, tmp_path: Path) -> None:
    """The scaffold's case: webhooks written for one version, kubectl working in the other."""
    kubectl = checked_kubectl(tmp_path, server)
    name = fresh()
    kubectl("apply", "-f", "-", stdin=json.dumps(gadget("v2", name, "default")))
    got = json.loads(kubectl("get", f"gadgets.v2.{GROUP}", name, "-n", "default", "-o", "json").stdout)
    assert got["apiVersion"] == f"{GROUP}/v2" and got["spec"] == {"size": 3}
    assert got["metadata"]["labels"]["defaulted"] == "v1"
    proc = kubectl.raw("apply", "-f", "-", stdin=json.dumps(gadget("v2", fresh(), "default", mode="forbidden")))  # type: ignore[attr-defined]
    assert proc.returncode != 0
    assert f'admission webhook "gadgets-default-validate.{GROUP}" denied the request: mode forbidden is not allowed' \
        in proc.stderr


def test_match_conditions_see_the_converted_object(hooks: AdmissionHooks, raw: Raw) -> None:
    """A condition on ``object.apiVersion`` sees the version the rule matched."""
    config = configuration("ValidatingWebhookConfiguration", "gadgets-conditions", hooks.base + "/validate",
                           hooks.ca_bundle, GROUP, "gadgets", "conditions", None)
    config["webhooks"][0]["matchConditions"] = [
        {"name": "in-v1", "expression": f"object.apiVersion == '{GROUP}/v1'"}]
    assert raw.call("POST", VALIDATING, config)[0] == 201
    try:
        code, _, denied = raw.call("POST", gadgets("v2"), gadget("v2", fresh(), "conditions", mode="forbidden"))
        assert code == 403 and "gadgets-conditions" in denied["message"], denied
    finally:
        raw.call("DELETE", f"{VALIDATING}/gadgets-conditions")


# ---------------------------------------------------------------------------- conversion webhook


@pytest.fixture(scope="module")
def converting(server: LocalAPIServer, raw: Raw, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[ConversionWebhook]:
    """Widgets (v1 storage with ``spec.replicas``, v2 with ``spec.count``) converted by a real
    conversion webhook, and a mutating webhook (the same server's ``/mutate``, labelling
    ``admitted=<kind version>``) whose rule lists only v1."""
    with ConversionWebhook(tmp_path_factory.mktemp("convcerts")) as webhook:
        code, _, body = raw.call("POST", CRDS, widget_crd(webhook.url, webhook.ca_bundle, group=WIDGETS))
        assert code == 201, body
        config = configuration("MutatingWebhookConfiguration", "widgets-equivalent",
                               webhook.url.replace("/convert", "/mutate"), webhook.ca_bundle, WIDGETS, "widgets",
                               "widgets", None)
        code, _, body = raw.call("POST", MUTATING, config)
        assert code == 201, body
        yield webhook
        raw.call("DELETE", f"{MUTATING}/widgets-equivalent")


def test_the_object_is_converted_through_the_conversion_webhook(converting: ConversionWebhook, raw: Raw,
                                                                 server: LocalAPIServer) -> None:
    converting.reviews.clear()
    converting.admissions.clear()
    name = fresh()
    body = {"apiVersion": f"{WIDGETS}/v2", "kind": "Widget",
            "metadata": {"name": name, "labels": {"suite": "widgets"}}, "spec": {"count": 4}}
    code, _, created = raw.call("POST", f"/apis/{WIDGETS}/v2/namespaces/default/widgets", body)
    assert code == 201, created
    assert created["apiVersion"] == f"{WIDGETS}/v2" and created["spec"] == {"count": 4}
    assert created["metadata"]["labels"] == {"suite": "widgets", "admitted": "v1"}
    # the mutating webhook saw the object converted to v1 (spec.replicas) by the conversion webhook
    assert converting.admissions == [(f"{WIDGETS}/v1", None)]
    desired = [review["desired"] for review in converting.reviews]
    assert desired[:2] == [f"{WIDGETS}/v1", f"{WIDGETS}/v2"], desired  # to the rule's version and back
    entry = server.call(lambda core: core.store.get(f"{WIDGETS}/widgets", "default", name))
    assert entry is not None and entry.obj["spec"] == {"replicas": 4}
    assert entry.obj["metadata"]["labels"]["admitted"] == "v1"
    # a patch in v2: the object and the old object both reach the webhook in v1
    code, _, patched = raw.call("PATCH", f"/apis/{WIDGETS}/v2/namespaces/default/widgets/{name}",
                                {"spec": {"count": 5}}, ctype="application/merge-patch+json")
    assert code == 200 and patched["spec"] == {"count": 5}, patched
    assert converting.admissions[-1] == (f"{WIDGETS}/v1", f"{WIDGETS}/v1")
    entry = server.call(lambda core: core.store.get(f"{WIDGETS}/widgets", "default", name))
    assert entry is not None and entry.obj["spec"] == {"replicas": 5}


def test_a_failed_conversion_for_a_webhook_is_an_internal_error(converting: ConversionWebhook, raw: Raw) -> None:
    converting.mode = "failure"
    try:
        body = {"apiVersion": f"{WIDGETS}/v2", "kind": "Widget",
                "metadata": {"name": fresh(), "labels": {"suite": "widgets"}}, "spec": {"count": 1}}
        code, _, status = raw.call("POST", f"/apis/{WIDGETS}/v2/namespaces/default/widgets", body)
    finally:
        converting.mode = "ok"
    assert code == 500 and status["reason"] == "InternalError", status
    assert status["message"] == (f"Internal error occurred: conversion webhook for {WIDGETS}/v2, Kind=Widget "
                                 "failed: widgets cannot travel in time")
