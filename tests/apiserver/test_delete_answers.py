"""Every served kind's DELETE answer as kube-apiserver's registry gives it (issue 43 item 14),
driven through the official Python client: the kinds whose storage sets ``ReturnDeletedObject``
answer with the deleted object (the client parses it as the kind's model), every other kind with
a ``Status`` naming what was deleted (custom resources included)."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from kubernetes import client

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.builtins import builtin_resources
from tests.apiserver.conftest import Raw, official_client
from tests.apiserver.test_cluster_certificates import pem_request
from tests.apiserver_units.test_trust_bundle_validation import CA

STUB_REQUEST = ("MH8wMwIBADAAMCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbigADAFBgMrZXADQQD+T6LD/tC3dgs1QpD"
                "Kx4kUxYQE7xZe9aBnQUcZw2xzeoWgFx/pD/xHAMYHE4CCTNhwz2GdgvzsSlQWl8KwMroI")
"""An empty PKCS#10 request signed by an Ed25519 key (a PodCertificateRequest's stubPKCS10Request)."""

NS = "deletes"

RETURNS_DELETED = {("", "Namespace"), ("", "Pod"), ("", "PodTemplate"), ("", "Service"), ("", "ServiceAccount"),
                   ("", "PersistentVolume"), ("", "PersistentVolumeClaim"), ("", "ResourceQuota"),
                   ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"),
                   ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "VolumeAttachment"),
                   ("storage.k8s.io", "VolumeAttributesClass"), ("resource.k8s.io", "DeviceClass"),
                   ("resource.k8s.io", "ResourceClaim"), ("resource.k8s.io", "ResourceClaimTemplate"),
                   ("resource.k8s.io", "ResourceSlice")}
"""kube-apiserver's registries with ``ReturnDeletedObject: true`` among the served kinds
(pkg/registry/**/storage/storage.go; its OpenAPI, which the official client is generated from,
gives their delete the kind's type, every other one ``Status``; Namespace's own Delete always
answers with the namespace, which its finalizer keeps)."""

_POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
_TEMPLATE = {"metadata": {"labels": {"app": "x"}},
             "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
_WORKLOAD = {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _TEMPLATE}}

BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("", "ConfigMap"): {},
    ("", "Endpoints"): {},
    ("", "Event"): {"involvedObject": {"kind": "Pod", "name": "x", "namespace": NS}},
    ("", "LimitRange"): {"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}},
    ("", "Namespace"): {},
    ("", "Node"): {},
    ("", "PersistentVolume"): {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                        "hostPath": {"path": "/tmp"}}},
    ("", "PersistentVolumeClaim"): {"spec": {"accessModes": ["ReadWriteOnce"],
                                             "resources": {"requests": {"storage": "1Gi"}}}},
    ("", "Pod"): {"spec": _POD_SPEC},
    ("", "PodTemplate"): {"template": _TEMPLATE},
    ("", "ReplicationController"): {"spec": {"selector": {"app": "x"}, "template": _TEMPLATE}},
    ("", "ResourceQuota"): {"spec": {"hard": {"pods": "10"}}},
    ("", "Secret"): {},
    ("", "ServiceAccount"): {},
    ("", "Service"): {"spec": {"ports": [{"port": 80}]}},
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): {},
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): {},
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): {
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["nothings"]}]},
                 "validations": [{"expression": "true"}]}},
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): {
        "spec": {"policyName": "none", "validationActions": ["Deny"]}},
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {},  # filled in by _crd
    ("apiregistration.k8s.io", "APIService"): {},  # filled in by _apiservice
    ("apps", "ControllerRevision"): {"revision": 1, "data": {}},
    ("apps", "DaemonSet"): _WORKLOAD,
    ("apps", "Deployment"): _WORKLOAD,
    ("apps", "ReplicaSet"): _WORKLOAD,
    ("apps", "StatefulSet"): {"spec": {**_WORKLOAD["spec"], "serviceName": "x"}},
    ("autoscaling", "HorizontalPodAutoscaler"): {
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "maxReplicas": 3}},
    ("batch", "Job"): {"spec": {"template": {"spec": _POD_SPEC}}},
    ("batch", "CronJob"): {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": _POD_SPEC}}}}},
    ("certificates.k8s.io", "CertificateSigningRequest"): {},  # filled in by _csr
    ("coordination.k8s.io", "Lease"): {},
    ("discovery.k8s.io", "EndpointSlice"): {"addressType": "IPv4", "endpoints": []},
    ("events.k8s.io", "Event"): {"eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/x",
                                 "reportingInstance": "i", "action": "Do", "reason": "Done", "type": "Normal",
                                 "regarding": {"kind": "Pod", "name": "x", "namespace": NS}},
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): {
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 5000}},
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): {
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                                                "limitResponse": {"type": "Reject"}}}},
    ("networking.k8s.io", "IngressClass"): {"spec": {"controller": "example.com/x"}},
    ("networking.k8s.io", "Ingress"): {
        "spec": {"defaultBackend": {"service": {"name": "x", "port": {"number": 80}}}}},
    ("networking.k8s.io", "NetworkPolicy"): {"spec": {"podSelector": {}}},
    ("node.k8s.io", "RuntimeClass"): {"handler": "runc"},
    ("policy", "PodDisruptionBudget"): {"spec": {"minAvailable": 1}},
    ("rbac.authorization.k8s.io", "ClusterRole"): {"rules": []},
    ("rbac.authorization.k8s.io", "Role"): {"rules": []},
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}},
    ("rbac.authorization.k8s.io", "RoleBinding"): {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}},
    ("scheduling.k8s.io", "PriorityClass"): {"value": 1000},
    ("storage.k8s.io", "CSIDriver"): {"spec": {}},
    ("storage.k8s.io", "CSINode"): {"spec": {"drivers": []}},
    ("storage.k8s.io", "CSIStorageCapacity"): {"storageClassName": "x"},
    ("storage.k8s.io", "StorageClass"): {"provisioner": "example.com/x"},
    ("storage.k8s.io", "VolumeAttributesClass"): {"driverName": "example.com/x", "parameters": {"iops": "3000"}},
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): {
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["nothings"]}]},
                 "mutations": [{"patchType": "ApplyConfiguration",
                                "applyConfiguration": {"expression": "Object{}"}}],
                 "reinvocationPolicy": "Never"}},
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): {"spec": {"policyName": "none"}},
    ("certificates.k8s.io", "ClusterTrustBundle"): {"spec": {"trustBundle": CA}},
    ("certificates.k8s.io", "PodCertificateRequest"): {
        "spec": {"signerName": "example.com/x", "podName": "p", "podUID": "u", "serviceAccountName": "s",
                 "serviceAccountUID": "su", "nodeName": "n", "nodeUID": "nu", "stubPKCS10Request": STUB_REQUEST}},
    ("networking.k8s.io", "IPAddress"): {"spec": {"parentRef": {"resource": "services", "name": "x",
                                                                "namespace": NS}}},
    ("networking.k8s.io", "ServiceCIDR"): {"spec": {"cidrs": ["10.200.0.0/16"]}},
    ("resource.k8s.io", "DeviceClass"): {"spec": {}},
    ("resource.k8s.io", "DeviceTaintRule"): {"spec": {"taint": {"key": "example.com/x", "effect": "NoSchedule"}}},
    ("resource.k8s.io", "ResourceClaim"): {
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}}},
    ("resource.k8s.io", "ResourceClaimTemplate"): {
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}}}},
    ("resource.k8s.io", "ResourceSlice"): {
        "spec": {"driver": "example.com", "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
                 "nodeName": "n"}},
    ("storagemigration.k8s.io", "StorageVersionMigration"): {
        "spec": {"resource": {"group": "", "resource": "configmaps"}}},
    ("storage.k8s.io", "VolumeAttachment"): {
        "spec": {"attacher": "example.com/x", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}},
}
"""A valid object of every served kind with a delete verb (a test checks none is missing)."""


def _served() -> dict[tuple[str, str], tuple[str, str, bool]]:
    """(group, kind) -> (the version the official client has an API for, plural, namespaced), for
    the served kinds that can be deleted."""
    out: dict[tuple[str, str], tuple[str, str, bool]] = {}
    for group, version, plural, kind, namespaced, *_rest, verbs in builtin_resources():
        if "delete" in verbs and (group, kind) not in out and _api_class(group, version) is not None:
            out[(group, kind)] = (version, plural, namespaced)
    return out


def _api_class(group: str, version: str) -> Any:
    name = "".join(part.capitalize() for part in group.removesuffix(".k8s.io").split(".")) if group else "Core"
    return getattr(client, f"{name}{version.capitalize()}Api", None)


def _snake(kind: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", kind).lower()


def _delete_method(kind: str, namespaced: bool) -> str:
    return f"delete_namespaced_{_snake(kind)}" if namespaced else f"delete_{_snake(kind)}"


def _body(group: str, kind: str, name: str) -> dict[str, Any]:
    if kind == "CustomResourceDefinition":
        return {"metadata": {"name": "gadgets.deletes.example.com"},
                "spec": {"group": "deletes.example.com", "scope": "Namespaced",
                         "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                         "versions": [{"name": "v1", "served": True, "storage": True,
                                       "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    if kind == "APIService":
        return {"metadata": {"name": "v1.deletes.example.com"},
                "spec": {"group": "deletes.example.com", "version": "v1", "groupPriorityMinimum": 100,
                         "versionPriority": 10}}
    if kind == "CertificateSigningRequest":
        return {"metadata": {"name": name},
                "spec": {"request": pem_request(), "signerName": "example.com/x", "usages": ["digital signature"]}}
    if kind == "IPAddress":  # named after its address
        return {"metadata": {"name": "10.0.0.99"}, **BODIES[(group, kind)]}
    return {"metadata": {"name": name}, **BODIES[(group, kind)]}


def test_every_deletable_kind_has_a_body_and_the_clients_answer_type() -> None:
    served = _served()
    assert set(served) == set(BODIES)
    typed = set()
    for (group, kind), (version, _, namespaced) in served.items():
        method = getattr(_api_class(group, version), _delete_method(kind, namespaced))
        if inspect.signature(method).return_annotation.__name__ not in ("object", "V1Status"):
            typed.add((group, kind))
    assert typed == RETURNS_DELETED - {("", "Namespace")}


@pytest.mark.parametrize("group, kind", sorted(BODIES))
def test_delete_answers_as_kubes_registry(server: LocalAPIServer, raw: Raw, group: str, kind: str) -> None:
    if raw.call("GET", f"/api/v1/namespaces/{NS}")[0] == 404:
        assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
    version, plural, namespaced = _served()[(group, kind)]
    name = f"del-{_snake(kind).replace('_', '-')}"
    body = _body(group, kind, name)
    name = body["metadata"]["name"]
    prefix = f"/apis/{group}/{version}" if group else "/api/v1"
    collection = f"{prefix}/namespaces/{NS}/{plural}" if namespaced else f"{prefix}/{plural}"
    code, _, created = raw.call("POST", collection, body)
    if kind == "MutatingAdmissionPolicyBinding":  # refused, naming what is missing: the server runs no such policy
        assert code == 422 and created["reason"] == "Invalid", created
        assert created["details"]["causes"][0]["field"] == "spec", created
        assert "MutatingAdmissionPolicy" in created["details"]["causes"][0]["message"], created
        return
    assert code == 201, created
    with official_client(server) as api_client:
        api = _api_class(group, version)(api_client)
        method = getattr(api, _delete_method(kind, namespaced))
        answer = method(name, NS) if namespaced else method(name)  # parsed by the client: must not raise
    got = answer if isinstance(answer, dict) else api_client.sanitize_for_serialization(answer)
    if (group, kind) in RETURNS_DELETED:
        assert got["kind"] == kind and got["metadata"]["name"] == name, got
    elif kind == "CustomResourceDefinition":  # its finalizer keeps it: the object, as kube answers
        assert got["kind"] == kind and got["metadata"]["deletionTimestamp"], got
    else:
        assert got["kind"] == "Status" and got["status"] == "Success", got
        details = {"name": name, "group": group, "kind": plural, "uid": created["metadata"]["uid"]}
        if not group:
            del details["group"]  # omitempty: the core group has none
        assert got["details"] == details, got


def test_a_custom_resource_delete_answers_a_status(server: LocalAPIServer, raw: Raw) -> None:
    if raw.call("GET", f"/api/v1/namespaces/{NS}")[0] == 404:
        assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
    code, _, created = raw.call("POST", f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos", {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "gone"},
        "spec": {"deploymentName": "gone", "replicas": 1}})
    assert code == 201, created
    with official_client(server) as api_client:
        got = client.CustomObjectsApi(api_client).delete_namespaced_custom_object(
            "samplecontroller.k8s.io", "v1alpha1", NS, "foos", "gone")
    assert got == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                   "details": {"name": "gone", "group": "samplecontroller.k8s.io", "kind": "foos",
                               "uid": created["metadata"]["uid"]}}


def test_a_dry_run_delete_answers_as_the_delete_would(raw: Raw) -> None:
    if raw.call("GET", f"/api/v1/namespaces/{NS}")[0] == 404:
        assert raw.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
    assert raw.call("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "dry"}})[0] == 201
    code, _, got = raw.call("DELETE", f"/api/v1/namespaces/{NS}/configmaps/dry?dryRun=All")
    assert code == 200 and got["kind"] == "Status" and got["details"]["name"] == "dry", got
    assert raw.call("GET", f"/api/v1/namespaces/{NS}/configmaps/dry")[0] == 200
