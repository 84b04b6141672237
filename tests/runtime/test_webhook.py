"""The admission webhook server: real AdmissionReview v1 bodies over HTTPS (self-signed cert)."""

from __future__ import annotations

import base64
import gc
import json
import re
import socket
import ssl
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import psutil
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from samplecontroller.apimachinery import errors
from samplecontroller.apimachinery.jsonpatch import apply_patch
from samplecontroller.runtime.webhook import Server, path_for, webhook_managed_by, write_self_signed
from samplecontroller.runtime.webhook.admission import DefaultingHandler
from samplecontroller.runtime.webhook.jsonpatch import create_patch
from tests.live import WebhookHost


class FooDefaulter:
    def default(self, obj: Foo) -> Foo:
        spec = obj.spec if obj.spec is not msgspec.UNSET else FooSpec()
        if spec.replicas is msgspec.UNSET:
            spec = msgspec.structs.replace(spec, replicas=1)
        return msgspec.structs.replace(obj, spec=spec)


class FooValidator:
    def validate_create(self, obj: Foo) -> Sequence[str]:
        if obj.spec is msgspec.UNSET or not obj.spec.deployment_name:
            raise ValueError("spec.deploymentName is required")
        if obj.spec.deployment_name == "Bad_Name":
            raise errors.new_invalid("samplecontroller.k8s.io", "Foo", str(obj.metadata.name), [
                ("spec.deploymentName", 'Invalid value: "Bad_Name": must be a DNS label'),
                ("spec.replicas", "Required value")])
        if obj.spec.deployment_name == "busy":
            raise errors.from_status(errors.new_status(429, "TooManyRequests", "try later",
                                                       {"retryAfterSeconds": 7}))
        return ["replicas above 5 are expensive"] if (obj.spec.replicas or 0) > 5 else []

    def validate_update(self, old: Foo, new: Foo) -> Sequence[str]:
        if old.spec.deployment_name != new.spec.deployment_name:  # type: ignore[union-attr]
            raise errors.from_status(errors.new_status(422, "Invalid", "spec.deploymentName is immutable"))
        return []

    def validate_delete(self, obj: Foo) -> Sequence[str]:
        return []


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, ssl.SSLContext]]:
    cert_dir = tmp_path_factory.mktemp("certs")
    ca = write_self_signed(cert_dir)
    server = Server(host="127.0.0.1", port=0, cert_dir=cert_dir)
    paths = webhook_managed_by(WebhookHost(server)).for_(Foo).with_defaulter(FooDefaulter()).with_validator(
        FooValidator()).complete()
    assert paths == ["/mutate-samplecontroller-k8s-io-v1alpha1-foo", "/validate-samplecontroller-k8s-io-v1alpha1-foo"]
    stop = threading.Event()
    t = threading.Thread(target=server.start, args=(stop,), daemon=True)
    t.start()
    assert server.started.wait(5)
    ctx = ssl.create_default_context(cadata=ca.decode())
    yield server, ctx
    stop.set()
    t.join(5)
    assert not t.is_alive()


def foo_json(replicas: int | None = None, deployment_name: str | None = "d") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if deployment_name is not None:
        spec["deploymentName"] = deployment_name
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": "f", "namespace": "ns", "labels": {"x": "y"}}, "spec": spec,
            "futureField": {"keep": True}}


def admission_review(operation: str, obj: Any = None, old: Any = None, uid: str = "1234-abcd") -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "kind": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"},
        "resource": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "resource": "foos"},
        "name": "f", "namespace": "ns", "operation": operation, "userInfo": {"username": "admin"},
        "object": obj, "oldObject": old, "dryRun": False}}


def post(webhook: tuple[Server, ssl.SSLContext], path: str, body: Any,
         content_type: str = "application/json") -> tuple[int, Any]:
    server, ctx = webhook
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(f"https://localhost:{server.bound_port}{path}", data=data, method="POST",
                                 headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


MUTATE = "/mutate-samplecontroller-k8s-io-v1alpha1-foo"
VALIDATE = "/validate-samplecontroller-k8s-io-v1alpha1-foo"


def test_defaulter_answers_a_json_patch(webhook: Any) -> None:
    original = foo_json(replicas=None)
    code, review = post(webhook, MUTATE, admission_review("CREATE", original))
    assert code == 200
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    resp = review["response"]
    assert resp["uid"] == "1234-abcd" and resp["allowed"] is True and resp["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(resp["patch"]))
    assert all(op["op"] != "remove" for op in ops)  # unknown fields (futureField) survive
    patched = apply_patch(original, ops)
    assert patched["spec"]["replicas"] == 1
    assert patched["futureField"] == {"keep": True}


class RaisingDefaulter:
    def __init__(self, err: Exception) -> None:
        self.err = err

    def default(self, obj: Foo) -> Foo:
        raise self.err


def test_a_defaulter_raising_denies_with_403_or_its_status() -> None:
    """controller-runtime's defaulterForType: ``Denied(err.Error())`` (403 Forbidden, the error's
    text) for any error, an APIStatus error's own Status (``validationResponseFromStatus``)."""
    request = admission_review("CREATE", foo_json())["request"]
    response = DefaultingHandler(Foo, RaisingDefaulter(ValueError("no defaults today"))).handle(request)
    assert response == {"uid": "1234-abcd", "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden", "message": "no defaults today"}}
    conflict = errors.from_status(errors.new_status(409, "Conflict", "try again"))
    response = DefaultingHandler(Foo, RaisingDefaulter(conflict)).handle(request)
    assert response["allowed"] is False and response["status"]["code"] == 409, response
    assert response["status"]["reason"] == "Conflict" and response["status"]["message"] == "try again", response


def test_defaulter_no_change_means_no_patch(webhook: Any) -> None:
    _, review = post(webhook, MUTATE, admission_review("CREATE", foo_json(replicas=3)))
    assert review["response"]["allowed"] is True and "patch" not in review["response"]


def test_validator_warnings_and_denials(webhook: Any) -> None:
    _, review = post(webhook, VALIDATE, admission_review("CREATE", foo_json(replicas=9)))
    assert review["response"]["allowed"] is True
    assert review["response"]["warnings"] == ["replicas above 5 are expensive"]
    _, review = post(webhook, VALIDATE, admission_review("CREATE", foo_json(deployment_name=None)))
    resp = review["response"]
    assert resp["allowed"] is False and resp["status"]["code"] == 403
    assert resp["status"]["reason"] == "Forbidden" and "deploymentName is required" in resp["status"]["message"]
    _, review = post(webhook, VALIDATE, admission_review("UPDATE", foo_json(deployment_name="other"), foo_json()))
    assert review["response"]["status"]["code"] == 422 and review["response"]["status"]["reason"] == "Invalid"
    _, review = post(webhook, VALIDATE, admission_review("DELETE", None, foo_json()))
    assert review["response"]["allowed"] is True


def test_a_denial_carries_the_whole_status_the_validator_raised(webhook: Any) -> None:
    """As controller-runtime's validationResponseFromStatus: details (causes, retryAfterSeconds)
    travel with code, reason and message (they were dropped: issue 40)."""
    _, review = post(webhook, VALIDATE, admission_review("CREATE", foo_json(deployment_name="Bad_Name")))
    status = review["response"]["status"]
    assert status["code"] == 422 and status["reason"] == "Invalid" and status["status"] == "Failure"
    assert status["message"] == ('Foo.samplecontroller.k8s.io "f" is invalid: [spec.deploymentName: Invalid '
                                 'value: "Bad_Name": must be a DNS label, spec.replicas: Required value]')
    assert status["details"] == {"name": "f", "group": "samplecontroller.k8s.io", "kind": "Foo", "causes": [
        {"field": "spec.deploymentName", "message": 'Invalid value: "Bad_Name": must be a DNS label'},
        {"field": "spec.replicas", "message": "Required value"}]}
    assert "kind" not in status and "apiVersion" not in status
    _, review = post(webhook, VALIDATE, admission_review("CREATE", foo_json(deployment_name="busy")))
    assert review["response"]["status"]["details"] == {"retryAfterSeconds": 7}


def test_bad_requests_are_answered_not_crashed(webhook: Any) -> None:
    _, review = post(webhook, VALIDATE, {"kind": "Pod"})
    assert review["response"]["allowed"] is False and review["response"]["status"]["code"] == 400
    _, review = post(webhook, VALIDATE, admission_review("CREATE", {**foo_json(), "spec": {"replicas": "many"}}))
    assert review["response"]["status"]["code"] == 400 and review["response"]["uid"] == "1234-abcd"
    code, _ = post(webhook, VALIDATE, b"{}", content_type="text/plain")
    assert code == 400
    code, _ = post(webhook, "/nowhere", admission_review("CREATE", foo_json()))
    assert code == 404


def test_registration_rules(tmp_path: Path) -> None:
    s = Server(port=0, cert_dir=tmp_path)
    s.register("/a", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duplicate"):
        s.register("/a", object())  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"tls\.crt"):
        s.start(threading.Event())
    assert path_for(Foo, "validate") == VALIDATE


def test_webhook_options_are_declared_where_the_webhook_is_registered(tmp_path: Path) -> None:
    """kubebuilder's +kubebuilder:webhook marker in Python: what make manifests writes (issue 40)."""
    from samplecontroller.manifests import render_webhooks
    from samplecontroller.runtime.webhook import WebhookOptions, declarations

    server = Server(port=0, cert_dir=tmp_path)
    exact = WebhookOptions(match_policy="Exact", timeout_seconds=5, failure_policy="Ignore",
                           verbs=("create", "update", "delete"), object_selector={"matchLabels": {"a": "b"}})
    webhook_managed_by(WebhookHost(server)).for_(Foo).with_defaulter(FooDefaulter()).with_validator(
        FooValidator(), options=exact).complete()
    got = declarations(server)
    assert [(d.type, d.group, d.version, d.plural, d.path, d.options.name if d.options else "") for d in got] == [
        ("mutating", "samplecontroller.k8s.io", "v1alpha1", "foos", MUTATE, "mfoo-v1alpha1.samplecontroller.k8s.io"),
        ("validating", "samplecontroller.k8s.io", "v1alpha1", "foos", VALIDATE,
         "vfoo-v1alpha1.samplecontroller.k8s.io")]
    mutating, validating = (doc.split("webhooks:\n", 1)[1] for doc in render_webhooks(got, "op", "op-system")
                            .split("---\n"))
    assert "failurePolicy: Fail\n" in mutating and "matchPolicy" not in mutating and "timeoutSeconds" not in mutating
    assert validating == (
        "  - name: vfoo-v1alpha1.samplecontroller.k8s.io\n    admissionReviewVersions: [v1]\n"
        "    clientConfig:\n      service:\n        name: op-webhook\n        namespace: op-system\n"
        f"        path: {VALIDATE}\n    failurePolicy: Ignore\n    matchPolicy: Exact\n"
        '    objectSelector: {"matchLabels": {"a": "b"}}\n    rules:\n'
        "      - apiGroups: [samplecontroller.k8s.io]\n        apiVersions: [v1alpha1]\n"
        "        operations: [CREATE, UPDATE, DELETE]\n        resources: [foos]\n    sideEffects: None\n"
        "    timeoutSeconds: 5\n")
    for bad, message in [(WebhookOptions(match_policy="exact"), "match_policy='exact' is not one of"),
                         (WebhookOptions(timeout_seconds=31), "timeout_seconds=31 is not between 1 and 30"),
                         (WebhookOptions(verbs=("get",)), "verbs ['get']"),
                         (WebhookOptions(reinvocation_policy="IfNeeded"), "reinvocation_policy applies to defaulters")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            webhook_managed_by(WebhookHost(server)).for_(Foo).with_validator(FooValidator(), options=bad)


def test_create_patch_round_trips() -> None:
    a = {"a": 1, "b": {"c": [1, 2], "d": "x/y~"}, "gone": True}
    b = {"a": 2, "b": {"c": [1, 2, 3], "d": "x/y~", "e/f": None}, "new": {"k": "v"}}
    assert apply_patch(a, create_patch(a, b)) == b
    assert create_patch(a, a) == []


def test_stop_closes_every_connection_even_one_that_does_not_answer(tmp_path: Path) -> None:
    """Kept-alive TLS connections whose clients stopped reading do not survive the server: none is
    left to the garbage collector (``unclosed transport``; on Python 3.13 an unraisable TypeError
    from asyncio.Server._detach)."""
    ca = write_self_signed(tmp_path)
    server = Server(host="127.0.0.1", port=0, cert_dir=tmp_path)
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.started.wait(10)
    port = server.bound_port
    ctx = ssl.create_default_context(cadata=ca.decode())
    clients = []
    for _ in range(2):
        conn = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
        conn.sendall(b"POST /nowhere HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 2\r\n\r\n{}")
        assert conn.recv(4096).startswith(b"HTTP/1.1 404")
        clients.append(conn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        stop.set()
        thread.join(15)
        assert not thread.is_alive()
        left = [c for c in psutil.Process().net_connections(kind="tcp") if c.laddr and c.laddr.port == port]
        assert left == [], left
        gc.collect()
    for conn in clients:
        conn.close()
    assert [str(w.message) for w in caught if "unclosed transport" in str(w.message)] == []
