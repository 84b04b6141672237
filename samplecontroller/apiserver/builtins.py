"""The built-in resources of the pinned Kubernetes version, generated from the upstream OpenAPI
definitions (``openapi_schemas``), as kube-apiserver's discovery lists them.

A kind is a served resource when its group/version is GA (``v1``, ``v2``: beta and alpha
versions are off by default) and the definitions also hold its ``<Kind>List`` (what a
storage-backed REST endpoint has), plus the create-only reviews. What the OpenAPI does not say
(scope, short names, categories, verbs, the ``scale`` subresource, irregular plurals) comes from
the small tables below, as upstream's per-resource REST storage declares them. A ``status``
subresource is served when the kind's schema has a ``status`` property. A kind in several GA
versions (HorizontalPodAutoscaler) is stored in one (see ``conversion``).

``builtin_resources(emulated_minor)`` leaves out the kinds that became GA after that minor
version (``version.GA_SINCE``: kube-apiserver's ``--emulated-version``).

Contract: ``builtin_resources()`` is computed once per emulated version (it reads the
definitions, ~40 ms) and returns the same tuple afterwards; callers must not rely on more than the
order: core first, then groups in kube-apiserver's order.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apiserver.version import BINARY_MINOR, served_since

__all__ = ["ResourceMeta", "builtin_resources", "empty_status", "guess_plural", "required_errors"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_NO_COLLECTION_DELETE = ("create", "delete", "get", "list", "patch", "update", "watch")
_CREATE_ONLY = ("create",)

# kube-apiserver's group order in discovery (legacy core first).
_GROUP_ORDER = (
    "", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
    "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
    "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
    "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
    "storagemigration.k8s.io",
)

_CLUSTER_SCOPED = {
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "TokenReview"), ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"), ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("scheduling.k8s.io", "PriorityClass"), ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"), ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "DeviceTaintRule"), ("resource.k8s.io", "ResourceSlice"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
}
_SHORT_NAMES = {
    ("", "ComponentStatus"): ("cs",), ("", "ConfigMap"): ("cm",), ("", "Endpoints"): ("ep",),
    ("", "Event"): ("ev",), ("", "LimitRange"): ("limits",), ("", "Namespace"): ("ns",), ("", "Node"): ("no",),
    ("", "PersistentVolumeClaim"): ("pvc",), ("", "PersistentVolume"): ("pv",), ("", "Pod"): ("po",),
    ("", "ReplicationController"): ("rc",), ("", "ResourceQuota"): ("quota",), ("", "ServiceAccount"): ("sa",),
    ("", "Service"): ("svc",), ("apiextensions.k8s.io", "CustomResourceDefinition"): ("crd", "crds"),
    ("apps", "DaemonSet"): ("ds",), ("apps", "Deployment"): ("deploy",), ("apps", "ReplicaSet"): ("rs",),
    ("apps", "StatefulSet"): ("sts",), ("autoscaling", "HorizontalPodAutoscaler"): ("hpa",),
    ("batch", "CronJob"): ("cj",), ("certificates.k8s.io", "CertificateSigningRequest"): ("csr",),
    ("events.k8s.io", "Event"): ("ev",), ("networking.k8s.io", "Ingress"): ("ing",),
    ("networking.k8s.io", "NetworkPolicy"): ("netpol",), ("policy", "PodDisruptionBudget"): ("pdb",),
    ("scheduling.k8s.io", "PriorityClass"): ("pc",), ("storage.k8s.io", "StorageClass"): ("sc",),
    ("storage.k8s.io", "VolumeAttributesClass"): ("vac",),
}
_CATEGORIES = {
    ("", "Pod"): ("all",), ("", "Service"): ("all",), ("", "ReplicationController"): ("all",),
    ("apps", "DaemonSet"): ("all",), ("apps", "Deployment"): ("all",), ("apps", "ReplicaSet"): ("all",),
    ("apps", "StatefulSet"): ("all",), ("autoscaling", "HorizontalPodAutoscaler"): ("all",),
    ("batch", "CronJob"): ("all",), ("batch", "Job"): ("all",),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("api-extensions",),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ("api-extensions",),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): ("api-extensions",),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): ("api-extensions",),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): ("api-extensions",),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): ("api-extensions",),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("api-extensions",),
    ("apiregistration.k8s.io", "APIService"): ("api-extensions",),
}
_VERBS = {
    ("", "Namespace"): _NO_COLLECTION_DELETE, ("", "Service"): _NO_COLLECTION_DELETE,
    ("", "ComponentStatus"): ("get", "list"),
}
_PLURALS = {("", "Endpoints"): "endpoints"}
_EXTRA_SUBRESOURCES = {
    ("", "Namespace"): ("finalize",), ("", "ServiceAccount"): ("token",), ("", "Pod"): ("binding", "eviction", "ephemeralcontainers", "log", "exec", "attach", "portforward"),
    ("apps", "Deployment"): ("scale",), ("apps", "ReplicaSet"): ("scale",), ("apps", "StatefulSet"): ("scale",),
    ("", "ReplicationController"): ("scale",), ("certificates.k8s.io", "CertificateSigningRequest"): ("approval",),
}
# Kinds with a status property that kube-apiserver does not serve as a subresource.
_NO_STATUS = {("", "ComponentStatus"), ("networking.k8s.io", "NetworkPolicy")}
# Create-only resources that are answered and never stored.
REVIEW_KINDS = {
    ("authentication.k8s.io", "TokenReview"), ("authentication.k8s.io", "SelfSubjectReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"), ("authorization.k8s.io", "LocalSubjectAccessReview"),
}
# Create-only resources without a list kind (``bindings``: what a scheduler posts).
CREATE_ONLY_KINDS = REVIEW_KINDS | {("", "Binding")}
_GA = re.compile(r"v\d+")


ResourceMeta = tuple[str, str, str, str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""(group, version, plural, kind, namespaced, short names, categories, subresources, verbs)."""


def guess_plural(kind: str) -> str:
    """apimachinery's ``UnsafeGuessKindToResource``: ``Ingress`` -> ``ingresses``,
    ``NetworkPolicy`` -> ``networkpolicies``, ``Pod`` -> ``pods``."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def _served_kinds() -> list[tuple[str, str, str]]:
    gvks = set()
    for name, schema in openapi_schemas.definitions().items():
        if ".apimachinery." in name:
            continue
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            gvks.add((str(gvk.get("group", "")), str(gvk.get("version", "")), str(gvk.get("kind", ""))))
    served = [(g, v, k) for g, v, k in gvks
              if _GA.fullmatch(v) and ((g, v, k + "List") in gvks or (g, k) in CREATE_ONLY_KINDS)]
    order = {g: i for i, g in enumerate(_GROUP_ORDER)}
    return sorted(served, key=lambda gvk: (order.get(gvk[0], len(order)), gvk[0], gvk[1], guess_plural(gvk[2])))


def _subresources(group: str, version: str, kind: str) -> tuple[str, ...]:
    subs: list[str] = []
    name = openapi_schemas.definition_name_for_gvk(group, version, kind)
    props = openapi_schemas.definition(name).get("properties") or {} if name else {}
    if "status" in props and (group, kind) not in _NO_STATUS and (group, kind) not in REVIEW_KINDS:
        subs.append("status")
    subs.extend(_EXTRA_SUBRESOURCES.get((group, kind), ()))
    return tuple(subs)


@functools.cache
def builtin_resources(emulated_minor: int = BINARY_MINOR) -> tuple[ResourceMeta, ...]:
    """Every built-in resource kube-apiserver of the pinned version serves by default, or, with
    ``emulated_minor``, kube-apiserver with ``--emulated-version 1.<emulated_minor>`` (the kinds GA
    after it are left out: ``version.GA_SINCE``)."""
    out: list[ResourceMeta] = []
    for group, version, kind in _served_kinds():
        key = (group, kind)
        if served_since(group, kind) > emulated_minor:
            continue
        verbs = _CREATE_ONLY if key in CREATE_ONLY_KINDS else _VERBS.get(key, ALL_VERBS)
        out.append((group, version, _PLURALS.get(key) or guess_plural(kind), kind, key not in _CLUSTER_SCOPED,
                    _SHORT_NAMES.get(key, ()), _CATEGORIES.get(key, ()), _subresources(group, version, kind), verbs))
    return tuple(out)


# ---------------------------------------------------------------------------- schema rules


def _zero(schema: Any) -> Any:
    resolved = openapi_schemas.resolve_static(schema)
    typ = resolved.get("type")
    typ = next((t for t in typ if t != "null"), None) if isinstance(typ, list) else typ
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(str(typ))


# Status fields Go always encodes (no omitempty) that the definitions do not mark required (1.37's
# PodDisruptionBudgetStatus lost its required list with declarative validation; the JSON did not change).
_NON_OMITEMPTY_STATUS = {
    ("policy", "PodDisruptionBudget"): ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"),
}


def empty_status(group: str, version: str, kind: str) -> dict[str, Any]:
    """The JSON of the kind's zero status as Go encodes it: the required (non-omitempty)
    scalar fields with their zero values (ReplicaSet: ``{"replicas": 0}``), else ``{}``."""
    name = openapi_schemas.definition_name_for_gvk(group, version, kind)
    if name is None:
        return {}
    status = openapi_schemas.resolve_static((openapi_schemas.definition(name).get("properties") or {}).get("status"))
    props = status.get("properties") or {}
    out: dict[str, Any] = {}
    for field in (*(status.get("required") or ()), *_NON_OMITEMPTY_STATUS.get((group, kind), ())):
        zero = _zero(props.get(field))
        if zero is not None:
            out[str(field)] = zero
    return out


def required_errors(group: str, version: str, kind: str, obj: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, "Required value")`` pairs for the schema's required fields missing in
    ``obj`` (metadata and status are not checked: the server owns them)."""
    name = openapi_schemas.definition_name_for_gvk(group, version, kind)
    if name is None:
        return []
    found: list[tuple[str, str]] = []
    _required(obj, openapi_schemas.definition(name), "", found, root=True)
    return found


def _required(value: Any, schema: Any, path: str, found: list[tuple[str, str]], root: bool = False) -> None:
    resolved = openapi_schemas.resolve_static(schema)
    if isinstance(value, list):
        items = resolved.get("items")
        for i, item in enumerate(value):
            _required(item, items, f"{path}[{i}]", found)
        return
    if not isinstance(value, dict):
        return
    props = resolved.get("properties")
    if not isinstance(props, dict):
        return
    for field in resolved.get("required") or ():
        if field not in value and field not in ("apiVersion", "kind"):
            found.append((f"{path}.{field}" if path else str(field), "Required value"))
    for key, child in value.items():
        if key in props and not (root and key in ("metadata", "status")):
            _required(child, props[key], f"{path}.{key}" if path else key, found)
