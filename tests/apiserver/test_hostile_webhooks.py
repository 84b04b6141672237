"""The embedded API server under hostile or broken webhooks and tokens (issue 43, items 1, 2, 4,
5, 8, 9, 10 and 11), each answered as kube-apiserver answers it. The webhooks are served over
HTTPS by this module (``Scripted``: each path answers as a test scripts it); clients are real
HTTP clients (``Raw``)."""

from __future__ import annotations

import asyncio
import base64
import http.client
import itertools
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer, tokens, web
from samplecontroller.apiserver.__main__ import parse_args
from samplecontroller.apiserver.webhookclient import WebhookCallError, WebhookClient
from samplecontroller.runtime.webhook import write_self_signed
from tests.conversion_webhook import ConversionWebhook, widget_crd
from tests.live import free_port

from .conftest import Raw

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ISSUER = "https://kubernetes.default.svc.cluster.local"
Answer = Callable[[dict[str, Any]], dict[str, Any]]
_names = itertools.count()


def fresh(prefix: str = "h") -> str:
    return f"{prefix}-{next(_names)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the connection test opens 100 connections at once


class Scripted:
    """An HTTPS admission webhook: a POST to ``/<case>`` is answered by ``answers[case]`` (the
    AdmissionReview's ``response`` without its uid); ``/hang`` holds the call until ``release``
    is set (``held`` counts the calls it received)."""

    def __init__(self, cert_dir: Path) -> None:
        self.ca_bundle = base64.b64encode(write_self_signed(cert_dir)).decode()
        self.answers: dict[str, Answer] = {}
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.held = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                case = self.path.split("?")[0].strip("/")
                if case == "hang":
                    with hook.lock:
                        hook.held += 1
                    hook.release.wait(30)
                    response: dict[str, Any] = {"allowed": True}
                else:
                    response = hook.answers[case](review["request"])
                payload = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                      "response": {"uid": review["request"]["uid"], **response}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.base = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def config(self, case: str) -> dict[str, Any]:
        """The ``clientConfig`` of path ``/<case>``."""
        return {"url": f"{self.base}/{case}", "caBundle": self.ca_bundle}


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scripted]:
    scripted = Scripted(tmp_path_factory.mktemp("certs"))
    yield scripted
    scripted.close()


def patching(*ops: dict[str, Any]) -> Answer:
    """A webhook answer: allowed, with the JSONPatch ``ops``."""
    patch = base64.b64encode(json.dumps(list(ops)).encode()).decode()
    return lambda _request: {"allowed": True, "patchType": "JSONPatch", "patch": patch}


def webhook(name: str, client: dict[str, Any], operations: list[str], label: str = "",
            policy: str = "Fail", resources: tuple[str, ...] = ("configmaps",)) -> dict[str, Any]:
    """A webhook on ``resources`` (core v1; ``*/*``: everything) for ``operations``, selecting the
    objects labelled ``case=<label>`` when ``label`` is given."""
    groups, versions = ([""], ["v1"]) if resources != ("*/*",) else (["*"], ["*"])
    out: dict[str, Any] = {
        "name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": policy,
        "timeoutSeconds": 5, "clientConfig": client,
        "rules": [{"apiGroups": groups, "apiVersions": versions, "resources": list(resources),
                   "operations": operations}]}
    if label:
        out["objectSelector"] = {"matchLabels": {"case": label}}
    return out


def configuration(kind: str, name: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(hooks)}


def register(raw: Raw, path: str, config: dict[str, Any]) -> None:
    code, _, body = raw.call("POST", path, config)
    assert code == 201, body


def configmap(name: str, label: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"case": label}},
            "data": data}


# ---------------------------------------------------------------------------- item 1


def test_a_patch_that_cannot_be_applied_is_a_500_whatever_the_failure_policy(raw: Raw, hook: Scripted) -> None:
    """kube's mutating dispatcher: only a failed call is subject to ``failurePolicy``; a patch it
    cannot apply is an InternalError, so ``Ignore`` never admits the object unmutated."""
    hook.answers["unappliable"] = patching({"op": "remove", "path": "/metadata/annotations/does-not-exist"})
    config = fresh("unappliable")
    register(raw, MUTATING, configuration("MutatingWebhookConfiguration", config,
                                          webhook("unappliable.example.com", hook.config("unappliable"),
                                                  ["CREATE"], label="unappliable", policy="Ignore"),
                                          webhook("dead.example.com", {"url": f"https://127.0.0.1:{free_port()}/"},
                                                  ["CREATE"], label="dead", policy="Ignore")))
    try:
        name = fresh("cm")
        code, _, status = raw.call("POST", CONFIGMAPS, configmap(name, "unappliable"))
        assert code == 500 and status["reason"] == "InternalError", status
        assert status["message"].startswith("Internal error occurred: "), status
        assert raw.call("GET", f"{CONFIGMAPS}/{name}")[0] == 404
        # a webhook that cannot be called at all is still ignored under Ignore
        code, _, body = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "dead"))
        assert code == 201, body
    finally:
        raw.call("DELETE", f"{MUTATING}/{config}")


def test_a_patch_without_its_patch_type_is_a_failed_call(raw: Raw, hook: Scripted) -> None:
    """kube's VerifyAdmissionResponse: ``patch`` and ``patchType`` come together; a lone one is
    an invalid answer, a failed call that ``failurePolicy`` decides about."""
    patch = base64.b64encode(json.dumps([{"op": "add", "path": "/data/x", "value": "y"}]).encode()).decode()
    hook.answers["untyped"] = lambda _request: {"allowed": True, "patch": patch}
    config = fresh("untyped")
    register(raw, MUTATING, configuration(
        "MutatingWebhookConfiguration", config,
        webhook("untyped.example.com", hook.config("untyped"), ["CREATE"], label="untyped"),
        webhook("untyped-ignored.example.com", hook.config("untyped"), ["CREATE"], label="untyped-ignored",
                policy="Ignore")))
    try:
        code, _, status = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "untyped"))
        assert code == 500 and status["message"] == (
            'Internal error occurred: failed calling webhook "untyped.example.com": received invalid webhook '
            "response: webhook returned response.patch but not response.patchType"), status
        code, _, body = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "untyped-ignored"))
        assert code == 201 and body["data"] == {}, body
        # checked before `allowed`: a denial carrying a lone patch is a failed call too, so under
        # Ignore the object is admitted (it was denied with 403)
        hook.answers["untyped"] = lambda _request: {"allowed": False, "patch": patch}
        code, _, body = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "untyped-ignored"))
        assert code == 201 and body["data"] == {}, body
    finally:
        raw.call("DELETE", f"{MUTATING}/{config}")


def test_a_validating_webhook_answering_a_patch_is_a_failed_call(raw: Raw, hook: Scripted) -> None:
    """kube's VerifyAdmissionResponse (mutating false): a validating webhook may return neither
    ``patch`` nor ``patchType``; either makes the answer invalid, a failed call (``failurePolicy``
    decides), even when it allows."""
    hook.answers["validating-patch"] = patching({"op": "add", "path": "/data/x", "value": "y"})
    hook.answers["validating-type"] = lambda _request: {"allowed": True, "patchType": "JSONPatch"}
    config = fresh("validating-patch")
    register(raw, VALIDATING, configuration(
        "ValidatingWebhookConfiguration", config,
        webhook("validating-patch.example.com", hook.config("validating-patch"), ["CREATE"], label="v-patch"),
        webhook("validating-type.example.com", hook.config("validating-type"), ["CREATE"], label="v-type"),
        webhook("validating-ignored.example.com", hook.config("validating-patch"), ["CREATE"], label="v-ignored",
                policy="Ignore")))
    try:
        for label, name, field in [("v-patch", "validating-patch.example.com", "patch"),
                                   ("v-type", "validating-type.example.com", "patchType")]:
            code, _, status = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), label))
            assert code == 500 and status["message"] == (
                f'Internal error occurred: failed calling webhook "{name}": received invalid webhook '
                f"response: validating webhook may not return response.{field}"), status
        code, _, body = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "v-ignored"))
        assert code == 201 and body["data"] == {}, body
    finally:
        raw.call("DELETE", f"{VALIDATING}/{config}")


# ---------------------------------------------------------------------------- item 2


def test_issuer_discovery_ignores_the_host_header(raw: Raw, server: LocalAPIServer) -> None:
    """The OpenID configuration is served with ``Cache-Control: public``: its ``jwks_uri`` is
    fixed at start-up (this server's address), never the request's Host header."""
    conn = raw.conn()
    conn.request("GET", "/.well-known/openid-configuration",
                 headers={"Host": "evil.example.com", "Authorization": f"Bearer {server.token}"})
    resp = conn.getresponse()
    document = json.loads(resp.read())
    conn.close()
    assert resp.status == 200 and resp.getheader("Cache-Control") == "public, max-age=3600"
    assert document["jwks_uri"] == f"{server.url}/openid/v1/jwks", document


def test_issuer_discovery_is_written_as_kubes_json_marshal(raw: Raw, server: LocalAPIServer) -> None:
    """kube's openIDConfigJSON/openIDKeysetJSON are Go's json.Marshal: compact, no final newline
    (routes.OpenIDMetadataServer writes those bytes as they are), HTML characters escaped."""
    for path, ctype in [("/.well-known/openid-configuration", "application/json"),
                        ("/openid/v1/jwks", "application/jwk-set+json")]:
        conn = raw.conn()
        conn.request("GET", path, headers={"Authorization": f"Bearer {server.token}"})
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        assert resp.status == 200 and resp.getheader("Content-Type") == ctype, body
        assert not body.endswith(b"\n") and b": " not in body and b", " not in body, body
        assert body == json.dumps(json.loads(body), separators=(",", ":")).encode(), body
    config = tokens.signer("x").openid_configuration("https://keys.example.com/jwks?a=1&b=<2>")
    assert web.go_json(config).endswith(b'"jwks_uri":"https://keys.example.com/jwks?a=1\\u0026b=\\u003c2\\u003e",'
                                        b'"response_types_supported":["id_token"],"subject_types_supported":["public"],'
                                        b'"id_token_signing_alg_values_supported":["ES256"]}')


def test_the_jwks_uri_can_be_set_and_must_be_https(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="requires an https URL"):
        LocalAPIServer(service_account_jwks_uri="http://keys.example.com/jwks")
    for wrong in ("keys.example.com", "https://"):
        with pytest.raises(SystemExit):
            parse_args(["--service-account-jwks-uri", wrong])
    assert parse_args(["--service-account-jwks-uri", "https://keys.example.com/jwks"]
                      ).service_account_jwks_uri == "https://keys.example.com/jwks"
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", insecure_http=True,
                        service_account_jwks_uri="https://keys.example.com/jwks") as other:
        conn = http.client.HTTPConnection("127.0.0.1", other.port, timeout=10)
        conn.request("GET", "/.well-known/openid-configuration", headers={"Authorization": f"Bearer {other.token}"})
        document = json.loads(conn.getresponse().read())
        conn.close()
    assert document["jwks_uri"] == "https://keys.example.com/jwks"


# ---------------------------------------------------------------------------- item 4


def test_a_dead_webhook_on_everything_cannot_lock_the_admission_configuration(raw: Raw) -> None:
    """kube's IsExemptAdmissionConfigurationResource: no webhook is called for webhook
    configurations or admission policies (nor any policy for policies), so a ``Fail`` webhook on
    ``*/*`` that is down can still be patched and deleted."""
    dead = {"url": f"https://127.0.0.1:{free_port()}/"}
    everything = ["CREATE", "UPDATE", "DELETE"]
    mutating, validating, policy, binding = fresh("lock"), fresh("lock"), fresh("deny-all"), fresh("deny-all")
    register(raw, MUTATING, configuration("MutatingWebhookConfiguration", mutating,
                                          webhook("m.dead.example.com", dead, everything, resources=("*/*",))))
    register(raw, VALIDATING, configuration("ValidatingWebhookConfiguration", validating,
                                            webhook("v.dead.example.com", dead, everything, resources=("*/*",))))
    try:
        code, _, status = raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "locked"))
        assert code == 500 and "failed calling webhook" in status["message"], status  # the webhooks are on
        # a policy denying everything, created, bound and then unbound under the dead webhooks
        register(raw, POLICIES, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": policy},
            "spec": {"failurePolicy": "Fail", "validations": [{"expression": "false", "message": "no"}],
                     "matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                                                             "resources": ["*"], "operations": ["*"]}]}}})
        register(raw, BINDINGS, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": binding}, "spec": {"policyName": policy, "validationActions": ["Deny"]}})
        label = [{"op": "add", "path": "/metadata/labels", "value": {"fixed": "yes"}}]
        for path in (f"{POLICIES}/{policy}", f"{BINDINGS}/{binding}"):
            code, _, body = raw.call("PATCH", path, raw=json.dumps(label).encode(),
                                     ctype="application/json-patch+json")
            assert code == 200, body
        for path in (f"{BINDINGS}/{binding}", f"{POLICIES}/{policy}"):
            assert raw.call("DELETE", path)[0] == 200
        for path in (f"{MUTATING}/{mutating}", f"{VALIDATING}/{validating}"):
            code, _, body = raw.call("PATCH", path, raw=json.dumps(label).encode(),
                                     ctype="application/json-patch+json")
            assert code == 200 and body["metadata"]["labels"] == {"fixed": "yes"}, body
    finally:
        for path in (f"{MUTATING}/{mutating}", f"{VALIDATING}/{validating}"):
            assert raw.call("DELETE", path)[0] in (200, 404)
    assert raw.call("POST", CONFIGMAPS, configmap(fresh("cm"), "unlocked"))[0] == 201


# ---------------------------------------------------------------------------- item 5


def test_one_slow_webhook_never_makes_a_call_to_another_wait(hook: Scripted) -> None:
    """Go's transport caps no connections; the webhook client neither: 100 calls held by one
    webhook (aiohttp's default cap) leave a call to another one free to go at once."""
    hook.answers["quick"] = lambda _request: {"allowed": True}
    hook.release.clear()
    hook.held = 0

    async def scenario() -> tuple[int, float]:
        client = WebhookClient()
        try:
            held = [asyncio.ensure_future(client.post(hook.config("hang"), {"request": {"uid": str(i)}}, 30.0))
                    for i in range(100)]
            try:
                deadline = time.monotonic() + 20
                while hook.held < 100 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                assert hook.held == 100, f"only {hook.held} calls reached the slow webhook"
                started = time.monotonic()
                status, _ = await client.post(hook.config("quick"), {"request": {"uid": "quick"}}, 10.0)
            finally:
                hook.release.set()
                await asyncio.gather(*held, return_exceptions=True)
            return status, time.monotonic() - started
        finally:
            await client.close()

    try:
        status, took = asyncio.run(scenario())
    except WebhookCallError as err:
        raise AssertionError(f"the call to the quick webhook waited behind the slow one: {err}") from None
    assert status == 200 and took < 10.0


# ---------------------------------------------------------------------------- item 8


def test_a_delete_whose_object_cannot_be_converted_is_a_500_and_keeps_the_object(
        raw: Raw, server: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    """kube reads the object in the request's version before deleting it: a broken conversion
    webhook makes a DELETE (or a deletecollection) in a non-storage version a 500 that deletes
    nothing."""
    with ConversionWebhook(tmp_path_factory.mktemp("conversion")) as converter:
        crd = widget_crd(converter.url, converter.ca_bundle, group="hostile.example.com")
        code, _, body = raw.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert code == 201, body
        widgets = "/apis/hostile.example.com/{}/namespaces/default/widgets"
        name = fresh("w")
        code, _, body = raw.call("POST", widgets.format("v1"), {
            "apiVersion": "hostile.example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"replicas": 1}})
        assert code == 201, body
        converter.mode = "http500"
        code, _, status = raw.call("DELETE", f"{widgets.format('v2')}/{name}")
        assert code == 500 and "conversion webhook" in status["message"], status
        assert server.call(lambda core: core.store.get("hostile.example.com/widgets", "default", name)) is not None
        code, _, status = raw.call("DELETE", widgets.format("v2"))  # deletecollection lists (converts) first
        assert code == 500 and "conversion webhook" in status["message"], status
        assert server.call(lambda core: core.store.get("hostile.example.com/widgets", "default", name)) is not None
        converter.mode = "ok"
        code, _, body = raw.call("DELETE", f"{widgets.format('v2')}/{name}")
        # a custom resource's registry does not return the deleted object (no ReturnDeletedObject)
        assert code == 200 and body["kind"] == "Status" and body["status"] == "Success", body
        assert server.call(lambda core: core.store.get("hostile.example.com/widgets", "default", name)) is None


# ---------------------------------------------------------------------------- item 9


def test_a_mutating_webhook_cannot_patch_a_delete(raw: Raw, hook: Scripted) -> None:
    """A DELETE has no object to patch: a non-empty patch is kube's 500 "attempted to modify the
    object, which is not supported for this operation" (not a call failure: ``Ignore`` does not
    skip it) and nothing is deleted; an empty patch changes nothing."""
    hook.answers["delete-patch"] = patching({"op": "add", "path": "/metadata/labels/x", "value": "y"})
    hook.answers["delete-empty"] = patching()
    config = fresh("on-delete")
    register(raw, MUTATING, configuration(
        "MutatingWebhookConfiguration", config,
        webhook("patches.example.com", hook.config("delete-patch"), ["DELETE"], label="delete-patch",
                policy="Ignore"),
        webhook("empty.example.com", hook.config("delete-empty"), ["DELETE"], label="delete-empty")))
    try:
        kept, gone = fresh("cm"), fresh("cm")
        assert raw.call("POST", CONFIGMAPS, configmap(kept, "delete-patch"))[0] == 201
        assert raw.call("POST", CONFIGMAPS, configmap(gone, "delete-empty"))[0] == 201
        code, _, status = raw.call("DELETE", f"{CONFIGMAPS}/{kept}")
        assert code == 500 and status["reason"] == "InternalError", status
        why = ('admission webhook "patches.example.com" attempted to modify the object, which is not supported '
               "for this operation")
        assert status["message"] == f"Internal error occurred: {why}", status
        assert status["details"] == {"causes": [{"message": why}]}, status  # kube's NewInternalError
        assert raw.call("GET", f"{CONFIGMAPS}/{kept}")[0] == 200
        assert raw.call("DELETE", f"{CONFIGMAPS}/{gone}")[0] == 200
    finally:
        raw.call("DELETE", f"{MUTATING}/{config}")


# ---------------------------------------------------------------------------- item 10


def test_a_webhook_renaming_an_object_on_update_gets_422(raw: Raw, hook: Scripted) -> None:
    """The name check against the URL is made on the request's body (400); a webhook's rename is
    caught by the metadata update validation: 422 ``metadata.name: field is immutable``."""
    hook.answers["rename"] = patching({"op": "replace", "path": "/metadata/name", "value": "renamed"})
    config = fresh("rename")
    register(raw, MUTATING, configuration("MutatingWebhookConfiguration", config,
                                          webhook("rename.example.com", hook.config("rename"), ["UPDATE"],
                                                  label="rename")))
    try:
        name = fresh("cm")
        code, _, created = raw.call("POST", CONFIGMAPS, configmap(name, "rename", a="1"))
        assert code == 201, created
        expected = 'ConfigMap "renamed" is invalid: metadata.name: Invalid value: "renamed": field is immutable'
        code, _, status = raw.call("PUT", f"{CONFIGMAPS}/{name}", {**created, "data": {"a": "2"}})
        assert code == 422 and status["reason"] == "Invalid" and status["message"] == expected, status
        assert status["details"] == {"name": "renamed", "kind": "ConfigMap", "causes": [
            {"reason": "FieldValueInvalid", "message": 'Invalid value: "renamed": field is immutable',
             "field": "metadata.name"}]}, status
        code, _, status = raw.call("PATCH", f"{CONFIGMAPS}/{name}", raw=b'{"data":{"a":"3"}}',
                                   ctype="application/merge-patch+json")
        assert code == 422 and status["message"] == expected, status
        code, _, status = raw.call("PUT", f"{CONFIGMAPS}/{name}",
                                   {**created, "metadata": {**created["metadata"], "name": "other"}})
        assert code == 400 and "does not match the name on the URL" in status["message"], status
        code, _, stored = raw.call("GET", f"{CONFIGMAPS}/{name}")
        assert code == 200 and stored["data"] == {"a": "1"}, stored
    finally:
        raw.call("DELETE", f"{MUTATING}/{config}")


# ---------------------------------------------------------------------------- item 11


def test_a_token_is_accepted_for_a_minute_past_its_expiry(raw: Raw, server: LocalAPIServer) -> None:
    """kube's JWT validation allows 60 s of clock skew (go-jose's DefaultLeeway) on ``exp``."""
    code, _, account = raw.call("POST", "/api/v1/namespaces/default/serviceaccounts",
                                {"metadata": {"name": fresh("sa")}})
    assert code == 201, account
    assert server.app is not None
    signer, name, uid = server.app.signer, account["metadata"]["name"], account["metadata"]["uid"]

    def whoami(expired_ago: int) -> int:
        token, _ = signer.issue("default", name, uid, [ISSUER], 600, now=time.time() - 600 - expired_ago)
        return raw.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token=token)[0]

    assert whoami(30) == 201
    assert whoami(90) == 401
