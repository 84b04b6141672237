"""RBAC in the embedded API server over raw HTTPS: ServiceAccount tokens are authorized by their
Roles/ClusterRoles/bindings (kube's Forbidden messages), the admin token is ``system:masters``, the
bootstrap policy exists, aggregation, access and rules reviews, impersonation, escalation."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.apiserver.conftest import Raw

_ns = itertools.count()
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture
def ns(raw: Raw) -> str:
    name = f"rbac-{next(_ns)}"
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name}})
    assert code == 201, body
    return name


def ok(result: tuple[int, dict[str, str], Any], *codes: int) -> Any:
    code, _, body = result
    assert code in (codes or (200, 201)), (code, body)
    return body


def service_account(raw: Raw, ns: str, name: str) -> str:
    """Create ServiceAccount ``ns/name`` and return a token of it (TokenRequest)."""
    ok(raw.call("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}))
    body = ok(raw.call("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}))
    return str(body["status"]["token"])


def role(raw: Raw, ns: str, name: str, rules: list[dict[str, Any]], kind: str = "Role") -> None:
    path = f"{RBAC}/namespaces/{ns}/roles" if kind == "Role" else f"{RBAC}/clusterroles"
    meta: dict[str, Any] = {"name": name}
    ok(raw.call("POST", path, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
                               "rules": rules}))


def bind(raw: Raw, ns: str | None, name: str, role_kind: str, role_name: str, sa_ns: str, sa: str,
         token: str = "") -> tuple[int, dict[str, str], Any]:
    kind = "RoleBinding" if ns else "ClusterRoleBinding"
    path = f"{RBAC}/namespaces/{ns}/rolebindings" if ns else f"{RBAC}/clusterrolebindings"
    return raw.call("POST", path, {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}]}, token=token)


def configmap_reader(raw: Raw, ns: str, sa: str = "reader") -> str:
    """A token of ServiceAccount ``ns/sa`` bound to a Role allowing only ``get configmaps`` in ``ns``."""
    token = service_account(raw, ns, sa)
    role(raw, ns, "cm-get", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
    ok(bind(raw, ns, "cm-get", "Role", "cm-get", ns, sa))
    return token


# ---------------------------------------------------------------------------- the reported defect

def test_a_configmap_reader_cannot_read_secrets_escalate_or_delete_namespaces(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)
    user = f"system:serviceaccount:{ns}:reader"
    ok(raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}))
    assert ok(raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps/c", token=token))["data"] == {"a": "b"}

    code, _, body = raw.call("GET", "/api/v1/namespaces/kube-system/secrets", token=token)
    assert code == 403, body
    assert body["reason"] == "Forbidden"
    assert body["message"] == (f'secrets is forbidden: User "{user}" cannot list resource "secrets" in API group "" '
                               'in the namespace "kube-system"')
    assert body["details"] == {"kind": "secrets"}

    code, _, body = raw.call("GET", "/api/v1/namespaces/kube-system/secrets/x", token=token)
    assert code == 403 and body["details"] == {"name": "x", "kind": "secrets"}
    assert body["message"].startswith('secrets "x" is forbidden: ')

    code, _, body = bind(raw, None, f"{ns}-pwn", "ClusterRole", "cluster-admin", ns, "reader", token=token)
    assert code == 403, body
    assert body["message"] == (
        f'clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "{user}" cannot create resource '
        '"clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope')
    assert body["details"] == {"group": "rbac.authorization.k8s.io", "kind": "clusterrolebindings"}

    code, _, body = raw.call("DELETE", f"/api/v1/namespaces/{ns}", token=token)
    assert code == 403, body
    assert body["message"] == (f'namespaces "{ns}" is forbidden: User "{user}" cannot delete resource "namespaces" '
                               f'in API group "" in the namespace "{ns}"')
    code, _, body = raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps", token=token)
    assert code == 403 and "cannot list resource" in body["message"]
    code, _, body = raw.call("GET", "/metrics", token=token)
    assert code == 403 and body["message"] == f'forbidden: User "{user}" cannot get path "/metrics"'
    assert body["details"] == {}
    ok(raw.call("GET", f"/api/v1/namespaces/{ns}", token=""))  # the admin token is still allowed everything


def test_self_subject_access_review_of_everything_is_denied(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)

    def can(attrs: dict[str, Any]) -> Any:
        return ok(raw.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs}}, token=token))["status"]

    assert can({"verb": "*", "group": "*", "resource": "*"}) == {"allowed": False}
    allowed = can({"verb": "get", "resource": "configmaps", "namespace": ns, "name": "x"})
    assert allowed == {"allowed": True, "reason": f'RBAC: allowed by RoleBinding "cm-get/{ns}" of Role "cm-get" '
                                                  f'to ServiceAccount "reader/{ns}"'}
    assert can({"verb": "get", "resource": "configmaps", "namespace": "default"}) == {"allowed": False}


def test_impersonation_needs_the_impersonate_verb(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)
    conn = raw.conn()
    conn.request("GET", "/api/v1/namespaces/kube-system/secrets",
                 headers={"Authorization": f"Bearer {token}", "Impersonate-User": "admin",
                          "Impersonate-Group": "system:masters"})
    resp = conn.getresponse()
    import json
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 403, body
    assert body["message"] == (f'users "admin" is forbidden: User "system:serviceaccount:{ns}:reader" cannot '
                               'impersonate resource "users" in API group "" at the cluster scope')
