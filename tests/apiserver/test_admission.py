"""Admission webhooks end to end: the embedded API server calls the runtime layer's webhook
server (samplecontroller.runtime.webhook) over HTTPS with AdmissionReview v1, and kubectl sees
the defaults, denials and warnings."""

from __future__ import annotations

import base64
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from samplecontroller.apimachinery import errors
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl
from samplecontroller.runtime.webhook import Server, webhook_managed_by, write_self_signed
from tests.live import WebhookHost

from .conftest import FOOS, Raw, foo

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
_names = itertools.count()


class Defaulter:
    """replicas defaults to 2 and every Foo gets the label defaulted=yes. ``side_write`` (set by
    a test) is called first with the Foo, to act as another writer while admission is under way."""

    side_write: Callable[[Foo], None] | None = None

    def default(self, obj: Foo) -> Foo:
        if self.side_write is not None:
            self.side_write(obj)
        spec = obj.spec if obj.spec is not msgspec.UNSET else FooSpec()
        if spec.replicas is msgspec.UNSET:
            spec = msgspec.structs.replace(spec, replicas=2)
        labels = dict(obj.metadata.labels or {}) if obj.metadata.labels is not msgspec.UNSET else {}
        labels["defaulted"] = "yes"
        return msgspec.structs.replace(obj, spec=spec, metadata=msgspec.structs.replace(obj.metadata, labels=labels))


DEFAULTER = Defaulter()


class Validator:
    def validate_create(self, obj: Foo) -> Sequence[str]:
        if obj.spec is msgspec.UNSET or not obj.spec.deployment_name:
            raise ValueError("spec.deploymentName is required")
        if obj.spec.deployment_name == "Bad_Name":  # the kubebuilder book's validator: one cause per field
            raise errors.new_invalid("samplecontroller.k8s.io", "Foo", str(obj.metadata.name), [
                ("spec.deploymentName", 'Invalid value: "Bad_Name": must be a DNS label'),
                ("spec.replicas", "Required value")])
        if obj.spec.deployment_name == "busy":
            raise errors.from_status(errors.new_status(429, "TooManyRequests", "come back later",
                                                       {"retryAfterSeconds": 3}))
        return ["replicas above 5 are expensive"] if (obj.spec.replicas or 0) > 5 else []

    def validate_update(self, old: Foo, new: Foo) -> Sequence[str]:
        if old.spec.deployment_name != new.spec.deployment_name:  # type: ignore[union-attr]
            raise errors.from_status(errors.new_status(422, "Invalid", "spec.deploymentName is immutable"))
        return self.validate_create(new)

    def validate_delete(self, obj: Foo) -> Sequence[str]:
        if (obj.metadata.labels or {}).get("protected") == "true":  # type: ignore[union-attr]
            raise ValueError("this Foo is protected")
        return []


@pytest.fixture(scope="module")
def hooks(server: LocalAPIServer, raw: Raw, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The webhook server running, and configurations registered for Foos in namespaces
    labelled ``admission=on``; yields that namespace's name."""
    cert_dir = tmp_path_factory.mktemp("certs")
    ca = base64.b64encode(write_self_signed(cert_dir)).decode()
    webhook = Server(host="127.0.0.1", port=0, cert_dir=cert_dir)
    webhook_managed_by(WebhookHost(webhook)).for_(Foo).with_defaulter(DEFAULTER).with_validator(Validator()).complete()
    stop = threading.Event()
    thread = threading.Thread(target=webhook.start, args=(stop,), daemon=True)
    thread.start()
    assert webhook.started.wait(5)
    base = f"https://127.0.0.1:{webhook.bound_port}"
    rule = {"apiGroups": ["samplecontroller.k8s.io"], "apiVersions": ["v1alpha1"], "resources": ["foos"],
            "operations": ["CREATE", "UPDATE"], "scope": "Namespaced"}
    selector = {"matchLabels": {"admission": "on"}}
    mutating = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": "foo-defaults"},
                "webhooks": [{"name": "mfoo.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                              "namespaceSelector": selector, "rules": [rule],
                              "clientConfig": {"url": base + "/mutate-samplecontroller-k8s-io-v1alpha1-foo",
                                               "caBundle": ca}}]}
    validating = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                  "metadata": {"name": "foo-checks"},
                  "webhooks": [{"name": "vfoo.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                                "namespaceSelector": selector,
                                "objectSelector": {"matchExpressions": [{"key": "skip-checks", "operator": "DoesNotExist"}]},
                                "rules": [{**rule, "operations": ["CREATE", "UPDATE", "DELETE"]}],
                                "clientConfig": {"url": base + "/validate-samplecontroller-k8s-io-v1alpha1-foo",
                                                 "caBundle": ca}}]}
    assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": "adm", "labels": {"admission": "on"}}})[0] == 201
    assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": "plain"}})[0] == 201
    assert raw.call("POST", MUTATING, mutating)[0] == 201
    assert raw.call("POST", VALIDATING, validating)[0] == 201
    yield "adm"
    raw.call("DELETE", MUTATING + "/foo-defaults")
    raw.call("DELETE", VALIDATING + "/foo-checks")
    stop.set()
    thread.join(5)


def _name() -> str:
    return f"a{next(_names)}"


def test_create_is_defaulted_by_the_mutating_webhook(raw: Raw, hooks: str) -> None:
    name = _name()
    code, _, obj = raw.call("POST", FOOS.format(ns=hooks), foo(name, replicas=None))
    assert code == 201, obj
    assert obj["spec"]["replicas"] == 2 and obj["metadata"]["labels"] == {"defaulted": "yes"}
    code, _, stored = raw.call("GET", FOOS.format(ns=hooks) + "/" + name)
    assert stored["spec"]["replicas"] == 2 and stored["metadata"]["uid"] == obj["metadata"]["uid"]


def test_namespace_selector_limits_the_webhooks(raw: Raw, hooks: str) -> None:
    code, _, obj = raw.call("POST", FOOS.format(ns="plain"), foo(_name(), replicas=None))
    assert code == 201 and "replicas" not in obj["spec"] and "labels" not in obj["metadata"]


def test_denial_carries_the_webhook_message(raw: Raw, hooks: str) -> None:
    bad = foo(_name())
    del bad["spec"]["deploymentName"]
    code, _, status = raw.call("POST", FOOS.format(ns=hooks), bad)
    assert code == 403 and status["reason"] == "Forbidden"
    assert status["message"] == 'admission webhook "vfoo.example.com" denied the request: spec.deploymentName is required'
    assert raw.call("GET", FOOS.format(ns=hooks) + "/" + bad["metadata"]["name"])[0] == 404


def test_object_selector_skips_the_validating_webhook(raw: Raw, hooks: str) -> None:
    skipped = foo(_name(), labels={"skip-checks": "1"})
    del skipped["spec"]["deploymentName"]
    code, _, obj = raw.call("POST", FOOS.format(ns=hooks), skipped)
    assert code == 201 and obj["metadata"]["labels"] == {"skip-checks": "1", "defaulted": "yes"}


def test_update_and_patch_go_through_admission(raw: Raw, hooks: str) -> None:
    name = _name()
    url = FOOS.format(ns=hooks) + "/" + name
    assert raw.call("POST", FOOS.format(ns=hooks), foo(name, replicas=3))[0] == 201
    code, headers, obj = raw.call("PATCH", url, {"spec": {"replicas": None}}, ctype="application/merge-patch+json")
    assert code == 200 and obj["spec"]["replicas"] == 2  # removed by the patch, defaulted again
    code, headers, obj = raw.call("PATCH", url, {"spec": {"replicas": 7}}, ctype="application/merge-patch+json")
    assert code == 200 and obj["spec"]["replicas"] == 7
    assert "replicas above 5 are expensive" in headers.get("warning", "")
    code, _, status = raw.call("PATCH", url, {"spec": {"deploymentName": "other"}},
                               ctype="application/merge-patch+json")
    assert code == 422 and "spec.deploymentName is immutable" in status["message"]
    current = raw.call("GET", url)[2]
    current["spec"]["deploymentName"] = "other"
    code, _, status = raw.call("PUT", url, current)
    assert code == 422 and status["message"].startswith('admission webhook "vfoo.example.com" denied the request')
    assert raw.call("GET", url)[2]["spec"]["deploymentName"] == name


def test_a_write_during_admission_makes_the_patch_start_over(raw: Raw, hooks: str) -> None:
    """Another writer changes the Foo while the mutating webhook is being called for a patch: the
    server must not store the object it admitted from the older version (that would lose the
    other write) but patch the new version and admit it again."""
    name = _name()
    url = FOOS.format(ns=hooks) + "/" + name
    assert raw.call("POST", FOOS.format(ns=hooks), foo(name, replicas=3))[0] == 201
    side_codes: list[int] = []

    def other_writer(obj: Foo) -> None:
        if obj.metadata.name == name and not side_codes:
            side_codes.append(0)  # the nested write below is admitted too: do it once
            side_codes[0] = raw.call("PATCH", url, {"metadata": {"annotations": {"other-writer": "yes"}}},
                                     ctype="application/merge-patch+json")[0]

    DEFAULTER.side_write = other_writer
    try:
        code, _, obj = raw.call("PATCH", url, {"spec": {"replicas": 4}}, ctype="application/merge-patch+json")
    finally:
        DEFAULTER.side_write = None
    assert side_codes == [200] and code == 200, (side_codes, obj)
    assert obj["spec"]["replicas"] == 4 and obj["metadata"]["annotations"] == {"other-writer": "yes"}
    assert obj["metadata"]["labels"] == {"defaulted": "yes"}
    assert raw.call("GET", url)[2] == obj


def test_status_updates_do_not_match_a_foos_rule(raw: Raw, hooks: str) -> None:
    name = _name()
    url = FOOS.format(ns=hooks) + "/" + name
    assert raw.call("POST", FOOS.format(ns=hooks), foo(name))[0] == 201
    code, _, obj = raw.call("PATCH", url + "/status", {"status": {"availableReplicas": 1}},
                            ctype="application/merge-patch+json")
    assert code == 200 and obj["status"] == {"availableReplicas": 1}


def test_delete_is_validated(raw: Raw, hooks: str) -> None:
    name = _name()
    url = FOOS.format(ns=hooks) + "/" + name
    assert raw.call("POST", FOOS.format(ns=hooks), foo(name, labels={"protected": "true"}))[0] == 201
    code, _, status = raw.call("DELETE", url)
    assert code == 403 and "this Foo is protected" in status["message"]
    raw.call("PATCH", url, {"metadata": {"labels": {"protected": None}}}, ctype="application/merge-patch+json")
    assert raw.call("DELETE", url)[0] == 200


def test_failure_policy(raw: Raw, hooks: str) -> None:
    dead: dict[str, Any] = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "dead"},
            "webhooks": [{"name": "dead.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "timeoutSeconds": 2, "failurePolicy": "Fail",
                          "objectSelector": {"matchLabels": {"dead": "yes"}},
                          "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["configmaps"],
                                     "operations": ["CREATE"]}],
                          "clientConfig": {"url": "https://127.0.0.1:1/validate"}}]}
    assert raw.call("POST", VALIDATING, dead)[0] == 201
    try:
        cm: dict[str, Any] = {"metadata": {"name": "c1", "labels": {"dead": "yes"}}, "data": {"a": "b"}}
        code, _, status = raw.call("POST", "/api/v1/namespaces/plain/configmaps", cm)
        assert code == 500 and status["reason"] == "InternalError"
        assert 'failed calling webhook "dead.example.com"' in status["message"]
        cm["metadata"]["labels"] = {}
        assert raw.call("POST", "/api/v1/namespaces/plain/configmaps", cm)[0] == 201  # not selected
        dead["webhooks"][0]["failurePolicy"] = "Ignore"
        current = raw.call("GET", VALIDATING + "/dead")[2]
        current["webhooks"][0]["failurePolicy"] = "Ignore"
        assert raw.call("PUT", VALIDATING + "/dead", current)[0] == 200
        cm = {"metadata": {"name": "c2", "labels": {"dead": "yes"}}}
        assert raw.call("POST", "/api/v1/namespaces/plain/configmaps", cm)[0] == 201
    finally:
        raw.call("DELETE", VALIDATING + "/dead")


@pytest.mark.kubectl
def test_kubectl_sees_defaults_denials_and_warnings(server: LocalAPIServer, hooks: str, tmp_path: Path) -> None:
    kubectl = make_kubectl(tmp_path, server)
    manifest = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                "metadata": {"name": "kfoo", "namespace": hooks}, "spec": {"deploymentName": "kfoo"}}
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    assert proc.returncode == 0, proc.stderr
    got = kubectl("-n", hooks, "get", "foo", "kfoo", "-o", "jsonpath={.spec.replicas} {.metadata.labels.defaulted}")
    assert got.stdout == "2 yes"
    manifest["spec"] = {"deploymentName": "kfoo", "replicas": 9}
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    assert proc.returncode == 0 and "Warning: replicas above 5 are expensive" in proc.stderr
    manifest["spec"] = {"deploymentName": "changed"}
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    assert proc.returncode != 0
    assert 'admission webhook "vfoo.example.com" denied the request: spec.deploymentName is immutable' in proc.stderr


INVALID_MESSAGE = ('admission webhook "vfoo.example.com" denied the request: Foo.samplecontroller.k8s.io "{name}" '
                   'is invalid: [spec.deploymentName: Invalid value: "Bad_Name": must be a DNS label, '
                   'spec.replicas: Required value]')


def test_a_webhook_denial_keeps_its_whole_status(raw: Raw, hooks: str) -> None:
    """As kube-apiserver's webhookerrors.ToStatusErr: the webhook's Status goes to the client with
    only the message prefixed (details, causes, retryAfterSeconds kept; a Retry-After header as
    kube's responsewriters write for a Status with retryAfterSeconds)."""
    name = _name()
    code, _, status = raw.call("POST", FOOS.format(ns=hooks), {**foo(name), "spec": {"deploymentName": "Bad_Name"}})
    assert code == 422, status
    assert status["reason"] == "Invalid" and status["message"] == INVALID_MESSAGE.format(name=name)
    assert status["details"] == {"name": name, "group": "samplecontroller.k8s.io", "kind": "Foo", "causes": [
        {"field": "spec.deploymentName", "message": 'Invalid value: "Bad_Name": must be a DNS label'},
        {"field": "spec.replicas", "message": "Required value"}]}
    code, headers, status = raw.call("POST", FOOS.format(ns=hooks), {**foo(_name()), "spec": {"deploymentName": "busy"}})
    assert code == 429 and status["details"] == {"retryAfterSeconds": 3}
    assert status["message"] == 'admission webhook "vfoo.example.com" denied the request: come back later'
    assert {k.lower(): v for k, v in headers.items()}.get("retry-after") == "3"


@pytest.mark.kubectl
def test_kubectl_prints_an_invalid_denial_as_against_kube_apiserver(
        server: LocalAPIServer, hooks: str, tmp_path: Path) -> None:
    """kubectl's checkErr names the object and each field of an Invalid Status with details (it
    printed "The request is invalid: admission webhook ..." when the webhook dropped them)."""
    kubectl = make_kubectl(tmp_path, server)
    manifest = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                "metadata": {"name": "invalid-foo", "namespace": hooks}, "spec": {"deploymentName": "Bad_Name"}}
    proc = kubectl("create", "-f", "-", stdin=json.dumps(manifest))
    assert proc.returncode == 1
    assert proc.stderr == ('The Foo "invalid-foo" is invalid: \n'
                           '* spec.deploymentName: Invalid value: "Bad_Name": must be a DNS label\n'
                           '* spec.replicas: Required value\n')


def test_match_conditions_choose_whether_a_webhook_is_called(raw: Raw, hooks: str) -> None:
    """matchConditions (CEL): false skips the webhook, true calls it (here: an unreachable one, so
    the create fails), a failed evaluation is a 403 under failurePolicy Fail."""
    dead = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "conditional"},
            "webhooks": [{"name": "conditional.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "timeoutSeconds": 2, "failurePolicy": "Fail",
                          "matchConditions": [
                              {"name": "called", "expression": "object.metadata.name.startsWith('call-')"},
                              {"name": "data", "expression": "request.operation != 'CREATE' || object.data.x != ''"}],
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                                     "operations": ["CREATE"]}],
                          "clientConfig": {"url": "https://127.0.0.1:1/validate"}}]}
    assert raw.call("POST", VALIDATING, dead)[0] == 201
    path = "/api/v1/namespaces/plain/configmaps"
    try:
        assert raw.call("POST", path, {"metadata": {"name": "skip-1"}})[0] == 201
        code, _, status = raw.call("POST", path, {"metadata": {"name": "call-1"}, "data": {"x": "y"}})
        assert code == 500 and 'failed calling webhook "conditional.example.com"' in status["message"], status
        code, _, status = raw.call("POST", path, {"metadata": {"name": "call-2"}})
        assert (code, status["reason"], status["message"]) == (
            403, "Forbidden", "configmaps \"call-2\" is forbidden: expression "
            "'request.operation != 'CREATE' || object.data.x != ''' resulted in error: no such key: data"), status
    finally:
        raw.call("DELETE", VALIDATING + "/conditional")


def test_match_conditions_see_the_requesters_authorizer(raw: Raw, hooks: str) -> None:
    """A webhook's matchConditions have kube's ``authorizer`` (the requester's RBAC permissions):
    here the (unreachable) webhook is called only for users who cannot list secrets."""
    from tests.apiserver.test_rbac import bind, ok, role, service_account

    ns = "plain"
    token = service_account(raw, ns, "cm-writer")
    role(raw, ns, "cm-writer", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}])
    ok(bind(raw, ns, "cm-writer", "Role", "cm-writer", ns, "cm-writer"))
    hook = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "authorized"},
            "webhooks": [{"name": "authorized.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "timeoutSeconds": 2, "failurePolicy": "Fail",
                          "matchConditions": [{"name": "untrusted", "expression":
                                               "!authorizer.group('').resource('secrets').namespace('plain')"
                                               ".check('list').allowed()"}],
                          "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                                     "operations": ["CREATE"]}],
                          "clientConfig": {"url": "https://127.0.0.1:1/validate"}}]}
    assert raw.call("POST", VALIDATING, hook)[0] == 201
    path = f"/api/v1/namespaces/{ns}/configmaps"
    try:
        code, _, status = raw.call("POST", path, {"metadata": {"name": "trusted-1"}})
        assert code == 201, status
        code, _, status = raw.call("POST", path, {"metadata": {"name": "untrusted-1"}}, token=token)
        assert code == 500 and 'failed calling webhook "authorized.example.com"' in status["message"], status
    finally:
        raw.call("DELETE", VALIDATING + "/authorized")
