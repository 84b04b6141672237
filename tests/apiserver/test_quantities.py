"""Quantities of built-in kinds are written back in kube's canonical form; custom resources'
are kept as sent (one embedded server for the module)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from tests.apiserver.conftest import Raw, checked_kubectl

PODS = "/api/v1/namespaces/default/pods"
REGEX = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _pod(name: str, requests: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": requests, "limits": limits}}],
                     "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "0.5Gi"}}]}}


def test_pod_quantities_are_canonical_on_every_write(raw: Raw) -> None:
    code, _, pod = raw.call("POST", PODS, _pod("q", {"cpu": "0.5", "memory": 1073741824},
                                               {"cpu": "1000m", "memory": "1.5Gi"}))
    assert code == 201, pod
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "500m", "memory": "1073741824"},
                         "limits": {"cpu": "1", "memory": "1536Mi"}}
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "512Mi"
    code, _, stored = raw.call("GET", f"{PODS}/q")
    assert stored["spec"]["containers"][0]["resources"] == resources

    # a merge patch of the limits (kube allows resizing only through the resize subresource:
    # patch what the server accepts on a Pod, a new value for an unchanged quantity is refused
    # as the same value, so the canonical text must not count as a change)
    code, _, patched = raw.call("PATCH", f"{PODS}/q", {"spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1.0", "memory": "1536Mi"}}}]}},
        ctype="application/strategic-merge-patch+json")
    assert code == 200, patched
    assert patched["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "1536Mi"}

    # invalid quantities: the Go decoder's 400, before any validation
    code, _, status = raw.call("POST", PODS, _pod("bad", {"cpu": "1 cpu"}, {}))
    assert code == 400 and status["reason"] == "BadRequest"
    assert status["message"] == f'Pod in version "v1" cannot be handled as a Pod: quantities must match ' \
        f"the regular expression {REGEX}"
    code, _, status = raw.call("POST", PODS, _pod("bad", {"memory": "32MMi"}, {}))
    assert code == 400 and status["message"].endswith(": unable to parse quantity's suffix")
    code, _, status = raw.call("POST", PODS, _pod("bad", {"memory": True}, {}))
    assert code == 400 and status["message"].endswith(f"quantities must match the regular expression {REGEX}")


def test_other_kinds_status_and_apply(raw: Raw) -> None:
    code, _, lr = raw.call("POST", "/api/v1/namespaces/default/limitranges", {
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "2000m"}, "default": {"memory": "0.25Gi"}}]}})
    assert code == 201, lr
    assert lr["spec"]["limits"][0]["max"] == {"cpu": "2"}
    assert lr["spec"]["limits"][0]["default"] == {"memory": "256Mi"}

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "qnode"}}
    code, _, created = raw.call("POST", "/api/v1/nodes", node)
    assert code == 201, created
    created["status"] = {"capacity": {"cpu": "4000m", "memory": "8192Mi", "pods": "110"}}
    code, _, updated = raw.call("PUT", "/api/v1/nodes/qnode/status", created)
    assert code == 200, updated
    assert updated["status"]["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}

    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rq"},
             "spec": {"hard": {"requests.memory": "2048Mi", "pods": "10"}}}
    code, _, applied = raw.call("PATCH", "/api/v1/namespaces/default/resourcequotas/rq?fieldManager=t", quota,
                                ctype="application/apply-patch+yaml")
    assert code == 201, applied
    assert applied["spec"]["hard"] == {"requests.memory": "2Gi", "pods": "10"}
    code, _, again = raw.call("PATCH", "/api/v1/namespaces/default/resourcequotas/rq?fieldManager=t", quota,
                              ctype="application/apply-patch+yaml")
    assert code == 200 and again["metadata"]["resourceVersion"] == applied["metadata"]["resourceVersion"]


def test_custom_resources_keep_their_quantities(raw: Raw) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.quantity.example.com"},
           "spec": {"group": "quantity.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "memory": {"x-kubernetes-int-or-string": True, "anyOf": [
                                {"type": "integer"}, {"type": "string"}]}}}}}}}]}}
    code, _, body = raw.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    code, _, gadget = raw.call("POST", "/apis/quantity.example.com/v1/namespaces/default/gadgets", {
        "apiVersion": "quantity.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
        "spec": {"memory": "1.5Gi"}})
    assert code == 201, gadget
    assert gadget["spec"]["memory"] == "1.5Gi"


def test_patches_and_the_typed_client(raw: Raw, server: LocalAPIServer) -> None:
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    template = {"metadata": {"labels": {"app": "q"}}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "resources": {"limits": {"memory": "1024Mi"}}}]}}
    code, _, created = raw.call("POST", deployments, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "qd"},
        "spec": {"selector": {"matchLabels": {"app": "q"}}, "template": template}})
    assert code == 201, created
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"memory": "1Gi"}
    code, _, patched = raw.call("PATCH", f"{deployments}/qd", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox", "resources": {"limits": {"memory": "0.5Gi", "cpu": 0.25}}}]}}}},
        ctype="application/merge-patch+json")
    assert code == 200, patched
    assert patched["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
        "memory": "512Mi", "cpu": "250m"}

    # the typed models hold quantities as str | int | float: they read back what the server wrote
    from samplecontroller.kubernetes.clientset import Clientset
    from samplecontroller.rest import load_rest_client

    pods = Clientset(load_rest_client(kubeconfig=str(server.kubeconfig_path))).core_v1().pods("default")
    pod = pods.create(_pod("typed", {"cpu": 0.1}, {"memory": "2048Ki"}))  # requests default to limits
    container = pod.spec.containers[0]  # type: ignore[union-attr,index]
    assert container.resources.requests == {"cpu": "100m", "memory": "2Mi"}  # type: ignore[union-attr]
    assert container.resources.limits == {"memory": "2Mi"}  # type: ignore[union-attr]


def test_qos_class_compares_quantities_by_value(raw: Raw) -> None:
    """ComputePodQOS compares each request with its limit as quantities: 1e9 is 1G (both kept as
    written, being canonical), a zero one is no request at all; pod-level resources decide."""
    def qos(name: str, requests: dict[str, Any], limits: dict[str, Any], **spec: Any) -> str:
        pod = _pod(name, requests, limits)
        pod["spec"].update(spec)
        code, _, created = raw.call("POST", PODS, pod)
        assert code == 201, created
        return str(created["status"]["qosClass"])

    assert qos("g", {"memory": "1e9", "cpu": "1"}, {"memory": "1G", "cpu": "1"}) == "Guaranteed"
    assert qos("z", {}, {"memory": "0", "cpu": "0"}) == "BestEffort"
    assert qos("b", {"cpu": "500m"}, {"memory": "1Gi", "cpu": "1"}) == "Burstable"
    assert qos("p", {}, {}, resources={"requests": {"cpu": "1", "memory": "1Gi"},
                                       "limits": {"cpu": "1", "memory": "1Gi"}}) == "Guaranteed"


POD_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: kq}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      requests: {cpu: 0.5}
      limits: {cpu: 1000m, memory: 1.5Gi}
"""


def test_kubectl_apply_reads_back_canonical(server: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    """kubectl's three-way patch sets the quantities written as sent again each time (the live
    ones differ in text): it says "configured", as against kube-apiserver (kubernetes/kubernetes
    issue 116135), and the server finds nothing changed (no new resourceVersion)."""
    kubectl = checked_kubectl(tmp_path_factory.mktemp("home"), server)
    assert "created" in kubectl("apply", "-f", "-", stdin=POD_YAML).stdout
    path = "jsonpath={.metadata.resourceVersion} {.spec.containers[0].resources}"
    version, resources = kubectl("get", "pod", "kq", "-o", path).stdout.split(" ", 1)
    assert json.loads(resources) == {"requests": {"cpu": "500m", "memory": "1536Mi"},
                                     "limits": {"cpu": "1", "memory": "1536Mi"}}
    assert "configured" in kubectl("apply", "-f", "-", stdin=POD_YAML).stdout
    assert kubectl("get", "pod", "kq", "-o", "jsonpath={.metadata.resourceVersion}").stdout == version


def test_requests_above_limits_are_refused(raw: Raw) -> None:
    """ValidateResourceRequirements compares the decoded quantities: a request above its limit,
    a negative quantity, an extended resource whose request is not its limit are 422s."""
    code, _, status = raw.call("POST", PODS, _pod("over", {"cpu": "2"}, {"cpu": "1000m"}))
    assert code == 422, status
    assert status["message"] == ('Pod "over" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
                                 "must be less than or equal to cpu limit of 1")
    code, _, status = raw.call("POST", PODS, _pod("neg", {}, {"memory": "-0.5Gi"}))
    assert code == 422 and 'spec.containers[0].resources.limits[memory]: Invalid value: "-512Mi": must be ' \
        "greater than or equal to 0" in status["message"], status
    code, _, status = raw.call("POST", PODS, _pod("gpu", {"example.com/gpu": "1"}, {"example.com/gpu": "2"}))
    assert code == 422 and status["message"].endswith(
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2')
    code, _, status = raw.call("POST", PODS, _pod("nolimit", {"example.com/gpu": "1"}, {}))
    assert code == 422 and status["message"].endswith(
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources")
    code, _, ok = raw.call("POST", PODS, _pod("equal", {"cpu": "0.5", "example.com/gpu": 1},
                                              {"cpu": "500m", "example.com/gpu": "1"}))
    assert code == 201, ok
    code, _, status = raw.call("POST", "/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "over"},
        "spec": {"selector": {"matchLabels": {"app": "o"}}, "template": {
            "metadata": {"labels": {"app": "o"}},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}]}}}})
    assert code == 422 and status["message"].endswith(
        'spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": '
        "must be less than or equal to memory limit of 1Gi"), status


def test_a_patch_whose_result_does_not_decode_is_invalid(raw: Raw) -> None:
    """kube's patch handler (apiserver patch.go): a merge or JSON patch whose result does not
    decode is a 422 naming ``patch`` and the patched object, with no kind or name (a create's or
    update's undecodable body is the decoder's 400)."""
    code, _, created = raw.call("POST", PODS, _pod("patched", {"cpu": "100m"}, {}))
    assert code == 201, created
    for ctype, patch in [("application/merge-patch+json", {"spec": {"containers": [
                             {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1 cpu"}}}]}}),
                         ("application/json-patch+json", [{"op": "replace", "value": "1 cpu",
                                                           "path": "/spec/containers/0/resources/requests/cpu"}])]:
        code, _, status = raw.call("PATCH", f"{PODS}/patched", patch, ctype=ctype)
        assert code == 422 and status["reason"] == "Invalid", status
        assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{'), status
        assert status["message"].endswith(f"quantities must match the regular expression {REGEX}"), status
        assert status["details"] == {"causes": [{"reason": "FieldValueInvalid", "field": "patch",
                                                 "message": status["message"].split("patch: ", 1)[1]}]}, status
