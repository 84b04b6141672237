"""RBAC in the embedded API server over raw HTTPS: ServiceAccount tokens are authorized by their
Roles/ClusterRoles/bindings (kube's Forbidden messages), the admin token is ``system:masters``, the
bootstrap policy exists, aggregation, access and rules reviews, impersonation, escalation."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from samplecontroller.apiserver.testing import require_kubectl
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
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 403, body
    assert body["message"] == (f'users "admin" is forbidden: User "system:serviceaccount:{ns}:reader" cannot '
                               'impersonate resource "users" in API group "" at the cluster scope')


# ---------------------------------------------------------------------------- identities and policy

def test_who_am_i_for_the_admin_and_a_service_account(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "me")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    admin = ok(raw.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review))["status"]["userInfo"]
    assert admin["username"] == "admin" and "system:masters" in admin["groups"]
    me = ok(raw.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review, token=token))
    info = me["status"]["userInfo"]
    assert info["username"] == f"system:serviceaccount:{ns}:me"
    assert info["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]
    assert info["uid"]


def test_the_bootstrap_policy_exists(raw: Raw) -> None:
    roles = {r["metadata"]["name"]: r for r in ok(raw.call("GET", f"{RBAC}/clusterroles"))["items"]}
    for name in ("cluster-admin", "admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
                 "system:aggregate-to-view", "system:discovery", "system:basic-user", "system:public-info-viewer",
                 "system:auth-delegator", "system:node", "system:kube-scheduler", "system:monitoring",
                 "system:controller:deployment-controller", "system:controller:namespace-controller"):
        assert name in roles, name
        assert roles[name]["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    bindings = {b["metadata"]["name"]: b for b in ok(raw.call("GET", f"{RBAC}/clusterrolebindings"))["items"]}
    assert bindings["cluster-admin"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]
    assert bindings["system:controller:deployment-controller"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "deployment-controller", "namespace": "kube-system"}]
    assert {s["name"] for s in bindings["system:public-info-viewer"]["subjects"]} == {
        "system:authenticated", "system:unauthenticated"}
    roles_in_system = {r["metadata"]["name"] for r in ok(raw.call("GET", f"{RBAC}/namespaces/kube-system/roles"))["items"]}
    assert {"extension-apiserver-authentication-reader", "system::leader-locking-kube-scheduler"} <= roles_in_system
    # aggregation: view's rules are system:aggregate-to-view's, edit holds view's, admin holds edit's
    view, edit, admin = (roles[n]["rules"] for n in ("view", "edit", "admin"))
    assert view == roles["system:aggregate-to-view"]["rules"]
    assert all(rule in edit for rule in view) and all(rule in admin for rule in edit)


def _rule(verbs: str, groups: list[str], resources: str, names: str = "") -> dict[str, Any]:
    rule: dict[str, Any] = {"apiGroups": groups, "resources": resources.split(), "verbs": verbs.split()}
    if names:
        rule["resourceNames"] = names.split()
    return rule


# kube-apiserver 1.37's NodeRules() with 1.37's default gates (bootstrappolicy/policy.go: DRA, the
# ClusterTrustBundle and PodCertificateRequest GA in 1.37, KubeletServiceAccountTokenFor-
# CredentialProviders beta since 1.34), in kube's order.
NODE_137 = [
    _rule("create", ["authentication.k8s.io"], "tokenreviews"),
    _rule("create", ["authorization.k8s.io"], "localsubjectaccessreviews subjectaccessreviews"),
    _rule("get list watch", [""], "services"),
    _rule("create get list watch", [""], "nodes"),
    _rule("patch update", [""], "nodes/status"),
    _rule("patch update", [""], "nodes"),
    _rule("create patch update", ["", "events.k8s.io"], "events"),
    _rule("get list watch", [""], "pods"),
    _rule("create delete", [""], "pods"),
    _rule("patch update", [""], "pods/status"),
    _rule("create", [""], "pods/eviction"),
    _rule("get list watch", [""], "configmaps secrets"),
    _rule("get", [""], "persistentvolumeclaims persistentvolumes"),
    _rule("get", [""], "endpoints"),
    _rule("create get list watch", ["certificates.k8s.io"], "certificatesigningrequests"),
    _rule("create delete get patch update", ["coordination.k8s.io"], "leases"),
    _rule("get", ["storage.k8s.io"], "volumeattachments"),
    _rule("create", [""], "serviceaccounts/token"),
    _rule("get patch update", [""], "persistentvolumeclaims/status"),
    _rule("get list watch", ["storage.k8s.io"], "csidrivers"),
    _rule("create delete get patch update", ["storage.k8s.io"], "csinodes"),
    _rule("get list watch", ["node.k8s.io"], "runtimeclasses"),
    _rule("get", ["resource.k8s.io"], "resourceclaims"),
    _rule("deletecollection", ["resource.k8s.io"], "resourceslices"),
    _rule("get list watch", ["certificates.k8s.io"], "clustertrustbundles"),
    _rule("get", [""], "serviceaccounts"),
    _rule("create get list watch", ["certificates.k8s.io"], "podcertificaterequests"),
]


def test_the_bootstrap_policy_is_kubernetes_1_37s(raw: Raw) -> None:
    """The roles kube-apiserver 1.37 creates with its default gates (policy.go and
    controller_policy.go of 1.37; the controller roles as bootstrappolicy/testdata/controller-
    roles.yaml lists them)."""
    roles = {r["metadata"]["name"]: r for r in ok(raw.call("GET", f"{RBAC}/clusterroles"))["items"]}
    assert roles["system:node"]["rules"] == NODE_137
    assert roles["system:controller:node-controller"]["rules"] == [
        _rule("delete get list patch update watch", [""], "nodes"),
        _rule("patch update", [""], "nodes/status"),
        _rule("patch update", [""], "pods/status"),
        _rule("delete get list watch", [""], "pods"),
        _rule("get list watch", ["coordination.k8s.io"], "leases"),
        _rule("create patch update", ["", "events.k8s.io"], "events")]
    scheduler = roles["system:kube-scheduler"]["rules"]
    assert scheduler[-3:] == [_rule("get list watch", ["resource.k8s.io"], "resourceslices"),
                              _rule("create delete", ["resource.k8s.io"], "resourceclaims"),
                              _rule("patch update", ["resource.k8s.io"], "resourceclaims/binding")]
    assert _rule("patch update", ["resource.k8s.io"], "resourceclaims/binding") in \
        roles["system:controller:resource-claim-controller"]["rules"]
    assert roles["system:controller:podcertificaterequestcleaner"]["rules"] == [
        _rule("delete get list watch", ["certificates.k8s.io"], "podcertificaterequests")]
    assert roles["system:controller:storage-version-migrator-controller"]["rules"][-1] == _rule(
        "update", ["storagemigration.k8s.io"], "storageversionmigrations/status")
    assert roles["system:monitoring"]["rules"] == [
        {"nonResourceURLs": ["/flagz", "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis",
                             "/readyz", "/readyz/*", "/statusz"], "verbs": ["get"]},
        _rule("get", [""], "nodes/metrics")]
    assert roles["system:cluster-trust-bundle-discovery"]["rules"] == [
        _rule("get list watch", ["certificates.k8s.io"], "clustertrustbundles")]
    controllers = {n.removeprefix("system:controller:") for n in roles if n.startswith("system:controller:")}
    assert {"device-taint-eviction-controller", "kube-apiserver-serving-clustertrustbundle-publisher",
            "selinux-warning-controller", "service-cidrs-controller",
            "volumeattributesclass-protection-controller"} <= controllers
    assert "podgroup-protection-controller" not in controllers  # GenericWorkload: beta, off in 1.37
    bindings = {b["metadata"]["name"]: b for b in ok(raw.call("GET", f"{RBAC}/clusterrolebindings"))["items"]}
    assert bindings["system:cluster-trust-bundle-discovery"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts"}]
    assert bindings["system:controller:service-cidrs-controller"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "service-cidrs-controller", "namespace": "kube-system"}]


def test_cluster_role_aggregation_follows_labelled_roles(raw: Raw, ns: str) -> None:
    name = f"{ns}-widgets-view"
    rule = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}
    ok(raw.call("POST", f"{RBAC}/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "rules": [rule],
        "metadata": {"name": name, "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}}))
    deadline = time.monotonic() + 30
    while rule not in ok(raw.call("GET", f"{RBAC}/clusterroles/admin"))["rules"]:
        assert time.monotonic() < deadline, "the rule never reached admin"
        time.sleep(0.02)
    assert rule in ok(raw.call("GET", f"{RBAC}/clusterroles/view"))["rules"]
    ok(raw.call("DELETE", f"{RBAC}/clusterroles/{name}"))
    deadline = time.monotonic() + 30
    while rule in ok(raw.call("GET", f"{RBAC}/clusterroles/view"))["rules"]:
        assert time.monotonic() < deadline, "the rule stayed in view"
        time.sleep(0.02)


def test_rule_matching_names_subresources_and_urls(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "matcher")
    role(raw, ns, "matching", [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["allowed"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["get"]}])
    ok(bind(raw, ns, "matching", "Role", "matching", ns, "matcher"))
    cluster_name = f"{ns}-urls"
    role(raw, ns, cluster_name, [{"nonResourceURLs": ["/logs/*", "/version"], "verbs": ["get"]}],
         kind="ClusterRole")
    ok(bind(raw, None, cluster_name, "ClusterRole", cluster_name, ns, "matcher"))
    for name in ("allowed", "denied"):
        ok(raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
    ok(raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps/allowed", token=token))
    assert raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps/denied", token=token)[0] == 403
    assert raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps", token=token)[0] == 403  # a list has no name
    # a list narrowed to one name by a metadata.name field selector is authorized with that name
    listed = ok(raw.call("GET", f"/api/v1/namespaces/{ns}/configmaps?fieldSelector=metadata.name%3Dallowed",
                         token=token))
    assert [i["metadata"]["name"] for i in listed["items"]] == ["allowed"]
    assert raw.call("GET", f"/api/v1/namespaces/{ns}/pods", token=token)[0] == 403
    code, _, body = raw.call("GET", f"/api/v1/namespaces/{ns}/pods/nope/log", token=token)
    assert code == 404, body  # allowed: the pod just does not exist
    code, _, body = raw.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/nope/scale", token=token)
    assert code == 404, body
    code, _, body = raw.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/nope", token=token)
    assert code == 403 and 'cannot get resource "deployments" in API group "apps"' in body["message"]
    code, _, body = raw.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/nope/status", token=token)
    assert code == 403 and 'cannot get resource "deployments/status"' in body["message"]
    assert raw.call("GET", "/logs/x", token=token)[0] == 404  # allowed; not served
    ok(raw.call("GET", "/version", token=token))
    ok(raw.call("GET", "/api", token=token))  # system:discovery for every authenticated user
    assert raw.call("GET", "/metrics", token=token)[0] == 403


def test_a_binding_to_a_missing_role_says_so(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "orphan")
    ok(bind(raw, ns, "dangling", "Role", "no-such-role", ns, "orphan"))
    code, _, body = raw.call("GET", f"/api/v1/namespaces/{ns}/secrets", token=token)
    assert code == 403
    assert body["message"].endswith(': RBAC: role.rbac.authorization.k8s.io "no-such-role" not found')


def test_anonymous_requests(raw: Raw) -> None:
    assert raw.call("GET", "/healthz", token=None)[0] == 200
    assert raw.call("GET", "/version", token=None)[0] == 200
    assert raw.call("GET", "/api/v1/namespaces", token=None)[0] == 401


# ---------------------------------------------------------------------------- reviews

def test_subject_access_review_and_local_review(raw: Raw, ns: str) -> None:
    configmap_reader(raw, ns)
    user = f"system:serviceaccount:{ns}:reader"

    def sar(attrs: dict[str, Any], **spec: Any) -> Any:
        return ok(raw.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"resourceAttributes": attrs, **spec}}))

    body = sar({"verb": "get", "resource": "configmaps", "namespace": ns}, user=user)
    assert body["status"]["allowed"] is True and body["spec"]["user"] == user
    assert sar({"verb": "get", "resource": "secrets", "namespace": ns}, user=user)["status"] == {"allowed": False}
    assert sar({"verb": "delete", "resource": "nodes"}, user="someone", groups=["system:masters"])["status"] == {
        "allowed": True}
    code, _, body = raw.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert code == 422 and "at least one of user or group must be specified" in body["message"]
    code, _, body = raw.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": "x"}})
    assert code == 422 and "exactly one of nonResourceAttributes or resourceAttributes" in body["message"]
    nonres = ok(raw.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}, "user": "nobody",
                 "groups": ["system:unauthenticated"]}}))
    assert nonres["status"]["allowed"] is True
    assert "system:public-info-viewer" in nonres["status"]["reason"]
    local = ok(raw.call("POST", f"/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": ns}, "user": user}}))
    assert local["status"]["allowed"] is True and local["metadata"]["namespace"] == ns


def test_self_subject_rules_review(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)
    status = ok(raw.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}},
        token=token))["status"]
    assert {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]} in status["resourceRules"]
    assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in status["resourceRules"]
    assert any("/api/*" in r["nonResourceURLs"] for r in status["nonResourceRules"])
    assert status["incomplete"] is False
    admin = ok(raw.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}}))
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in admin["status"]["resourceRules"]


# ---------------------------------------------------------------------------- impersonation

def _as(raw: Raw, token: str, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    conn = raw.conn()
    conn.request("POST", path, body=json.dumps({"apiVersion": "authentication.k8s.io/v1",
                                                "kind": "SelfSubjectReview"}).encode(),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


def test_impersonation_when_allowed_runs_as_the_impersonated_user(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "impersonator")
    name = f"{ns}-impersonator"
    role(raw, ns, name, [{"apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"],
                          "verbs": ["impersonate"]},
                         {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"]},
                         {"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/scopes"],
                          "verbs": ["impersonate"]}], kind="ClusterRole")
    ok(bind(raw, None, name, "ClusterRole", name, ns, "impersonator"))
    path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    code, body = _as(raw, token, path, {"Impersonate-User": "jane", "Impersonate-Extra-Scopes": "view"})
    assert code == 201, body
    assert body["status"]["userInfo"] == {"username": "jane", "groups": ["system:authenticated"],
                                          "extra": {"scopes": ["view"]}}
    code, body = _as(raw, token, path, {"Impersonate-User": "jane", "Impersonate-Group": "devs"})
    assert code == 201 and body["status"]["userInfo"]["groups"] == ["devs", "system:authenticated"]
    code, body = _as(raw, token, path, {"Impersonate-User": "bob"})
    assert code == 403 and 'cannot impersonate resource "users"' in body["message"]
    code, body = _as(raw, token, path, {"Impersonate-User": f"system:serviceaccount:{ns}:default"})
    assert code == 403, body
    assert body["message"] == (f'serviceaccounts "default" is forbidden: User "system:serviceaccount:{ns}:impersonator" '
                               f'cannot impersonate resource "serviceaccounts" in API group "" in the namespace "{ns}"')
    code, body = _as(raw, token, path, {"Impersonate-Group": "devs"})
    assert code == 400, body
    # the admin may impersonate anyone; a service account gets its groups
    code, body = _as(raw, raw.server.token, path, {"Impersonate-User": f"system:serviceaccount:{ns}:default"})
    assert code == 201 and body["status"]["userInfo"]["groups"] == [
        "system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]


# ---------------------------------------------------------------------------- escalation

def test_escalation_prevention(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "rbac-manager")
    user = f"system:serviceaccount:{ns}:rbac-manager"
    role(raw, ns, "manager", [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
         "verbs": ["create", "get", "update", "patch"]},  # not "*": that includes escalate and bind
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])
    ok(bind(raw, ns, "manager", "Role", "manager", ns, "rbac-manager"))

    def make_role(name: str, rules: list[dict[str, Any]]) -> tuple[int, dict[str, str], Any]:
        return raw.call("POST", f"{RBAC}/namespaces/{ns}/roles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name},
            "rules": rules}, token=token)

    ok(make_role("subset", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]))
    code, _, body = make_role("more", [{"apiGroups": [""], "resources": ["secrets", "configmaps"],
                                        "verbs": ["get", "delete"]}])
    assert code == 403, body
    assert body["message"] == (
        f'roles.rbac.authorization.k8s.io "more" is forbidden: user "{user}" (groups=["system:serviceaccounts" '
        f'"system:serviceaccounts:{ns}" "system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}')
    # an update that adds a permission is checked too (PUT and patch)
    current = ok(raw.call("GET", f"{RBAC}/namespaces/{ns}/roles/subset", token=token))
    current["rules"][0]["verbs"] = ["get", "delete"]
    assert raw.call("PUT", f"{RBAC}/namespaces/{ns}/roles/subset", current, token=token)[0] == 403
    code, _, body = raw.call("PATCH", f"{RBAC}/namespaces/{ns}/roles/subset",
                             {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]},
                             ctype="application/merge-patch+json", token=token)
    assert code == 403, body
    ok(raw.call("PATCH", f"{RBAC}/namespaces/{ns}/roles/subset", {"metadata": {"labels": {"a": "b"}}},
                ctype="application/merge-patch+json", token=token))
    # bindings: to a role whose rules the user holds, yes; to edit (more than held), no
    code, _, body = bind(raw, ns, "to-subset", "Role", "subset", ns, "default", token=token)
    assert code == 201, body
    code, _, body = bind(raw, ns, "to-edit", "ClusterRole", "edit", ns, "default", token=token)
    assert code == 403 and "is attempting to grant RBAC permissions not currently held" in body["message"]
    # the bind verb on that role lifts the check; escalate lifts the role check
    role(raw, ns, "binder", [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "resourceNames": ["edit"],
         "verbs": ["bind"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}])
    ok(bind(raw, ns, "binder", "Role", "binder", ns, "rbac-manager"))
    ok(bind(raw, ns, "to-edit", "ClusterRole", "edit", ns, "default", token=token))
    ok(make_role("more", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "delete"]}]))
    # the admin (system:masters) may grant anything
    ok(bind(raw, None, f"{ns}-admin", "ClusterRole", "cluster-admin", ns, "default"))


# ---------------------------------------------------------------------------- kubectl with a token kubeconfig

def test_kubectl_with_a_service_account_kubeconfig(raw: Raw, ns: str, tmp_path: Path) -> None:



    binary = require_kubectl()
    token = configmap_reader(raw, ns)
    config = yaml.safe_load(raw.server.kubeconfig_path.read_text())
    config["users"] = [{"name": "reader", "user": {"token": token}}]
    config["contexts"][0]["context"].update(user="reader", namespace=ns)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))

    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)})

    assert (kubectl("auth", "can-i", "*", "*").stdout.strip(), kubectl("auth", "can-i", "*", "*").returncode) == (
        "no", 1)
    yes = kubectl("auth", "can-i", "get", "configmaps")
    assert (yes.stdout.strip(), yes.returncode) == ("yes", 0), yes.stderr
    assert kubectl("auth", "can-i", "list", "configmaps").stdout.strip() == "no"
    assert kubectl("auth", "can-i", "create", "clusterrolebinding").stdout.strip() == "no"
    denied = kubectl("get", "secrets", "-n", "kube-system")
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        f'Error from server (Forbidden): secrets is forbidden: User "system:serviceaccount:{ns}:reader" cannot list '
        'resource "secrets" in API group "" in the namespace "kube-system"')
    missing = kubectl("get", "configmap", "nope")
    assert missing.returncode == 1 and 'configmaps "nope" not found' in missing.stderr  # allowed, then 404
    listed = kubectl("auth", "can-i", "--list")
    assert listed.returncode == 0, listed.stderr
    assert any(line.split()[:1] == ["configmaps"] and line.rstrip().endswith("[get]")
               for line in listed.stdout.splitlines()), listed.stdout
    whoami = kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.stdout == f"system:serviceaccount:{ns}:reader", whoami.stderr


def test_odd_bytes_in_impersonation_headers_and_denied_paths_are_4xx(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)
    conn = raw.conn()
    conn.putrequest("GET", "/api/v1/namespaces")
    conn.putheader("Authorization", f"Bearer {raw.server.token}")
    conn.putheader("Impersonate-User", b"\xff\xfe-not-utf8")
    conn.endheaders()
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 400 and body["reason"] == "BadRequest", body
    code, _, body = raw.call("GET", f"/api/v1/namespaces/{ns}/secrets/%3Cb%3E%22%FF", token=token)
    assert code == 403, body
    assert body["message"].startswith('secrets "<b>\\"'), body  # the name as Go's %q prints it
    assert body["message"].endswith(f'cannot get resource "secrets" in API group "" in the namespace "{ns}"'), body
    code, _, body = raw.call("GET", "/logs/%3Cscript%3E", token=token)
    assert code == 403 and body["message"] == (
        f'forbidden: User "system:serviceaccount:{ns}:reader" cannot get path "/logs/&lt;script&gt;"'), body


def test_an_aggregation_rule_needs_full_authority(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "role-writer")
    name = f"{ns}-role-writer"
    role(raw, ns, name, [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                          "verbs": ["create"]}], kind="ClusterRole")
    ok(bind(raw, None, name, "ClusterRole", name, ns, "role-writer"))
    aggregated = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": f"{ns}-gather"},
                  "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"gather": "me"}}]}}
    code, _, body = raw.call("POST", f"{RBAC}/clusterroles", aggregated, token=token)
    assert code == 403, body
    assert body["message"] == (f'clusterroles.rbac.authorization.k8s.io "{ns}-gather" is forbidden: must have '
                               "cluster-admin privileges to use the aggregationRule")
    ok(raw.call("POST", f"{RBAC}/clusterroles", aggregated))  # the admin may


def test_a_deleted_service_accounts_tokens_stop_working(raw: Raw, ns: str) -> None:
    token = service_account(raw, ns, "short-lived")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    assert ok(raw.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review))["status"]["authenticated"]
    assert raw.call("GET", "/api", token=token)[0] == 200
    ok(raw.call("DELETE", f"/api/v1/namespaces/{ns}/serviceaccounts/short-lived"))
    assert raw.call("GET", "/api", token=token)[0] == 401
    status = ok(raw.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review))["status"]
    assert not status.get("authenticated") and status["error"]
    ok(raw.call("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",  # the same name again: another uid
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "short-lived"}}))
    assert raw.call("GET", "/api", token=token)[0] == 401


def test_the_official_python_client_with_a_service_account_token(raw: Raw, ns: str) -> None:
    token = configmap_reader(raw, ns)
    ok(raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    configuration = client.Configuration()
    configuration.host = raw.server.url
    configuration.ssl_ca_cert = str(raw.server.ca_path)
    configuration.api_key = {"authorization": f"Bearer {token}"}
    with client.ApiClient(configuration) as api:
        core = client.CoreV1Api(api)
        meta = core.read_namespaced_config_map("c", ns).metadata
        assert meta is not None and meta.name == "c"
        with pytest.raises(ApiException) as denied:
            core.list_namespaced_secret("kube-system")
        assert denied.value.status == 403
        status = json.loads(denied.value.body or "{}")
        assert status["reason"] == "Forbidden" and status["details"] == {"kind": "secrets"}
        review = client.AuthorizationV1Api(api).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb="get", resource="configmaps", namespace=ns))))
        assert review.status is not None and review.status.allowed is True


def test_bootstrap_roles_are_reconciled_at_start(tmp_path: Path) -> None:
    from samplecontroller.apiserver import LocalAPIServer

    data = tmp_path / "data"
    with LocalAPIServer(data, kubeconfig_path=tmp_path / "kubeconfig") as server:
        client_ = Raw(server)
        basic = ok(client_.call("GET", f"{RBAC}/clusterroles/system:basic-user"))
        basic["rules"] = [*basic["rules"][:1], {"apiGroups": ["example.com"], "resources": ["x"], "verbs": ["get"]}]
        ok(client_.call("PUT", f"{RBAC}/clusterroles/system:basic-user", basic))
        discovery = ok(client_.call("GET", f"{RBAC}/clusterroles/system:discovery"))
        discovery["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        discovery["rules"] = []
        ok(client_.call("PUT", f"{RBAC}/clusterroles/system:discovery", discovery))
        ok(client_.call("DELETE", f"{RBAC}/clusterrolebindings/system:monitoring"))
    with LocalAPIServer(data, kubeconfig_path=tmp_path / "kubeconfig") as server:
        client_ = Raw(server)
        rules = ok(client_.call("GET", f"{RBAC}/clusterroles/system:basic-user"))["rules"]
        assert len(rules) == 3 and {"apiGroups": ["example.com"], "resources": ["x"], "verbs": ["get"]} in rules
        assert ok(client_.call("GET", f"{RBAC}/clusterroles/system:discovery"))["rules"] == []
        ok(client_.call("GET", f"{RBAC}/clusterrolebindings/system:monitoring"))


def test_cached_decisions_follow_every_rbac_change_at_once(raw: Raw, ns: str) -> None:
    """Decisions are cached per user and request attributes, but an RBAC write applies to the
    very next request: a role's rule removed or added, a binding deleted or re-created."""
    token = configmap_reader(raw, ns, "cached")
    path = f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt"
    for _ in range(3):  # decided once, then served from the cache
        assert raw.call("GET", path, token=token)[0] == 200
    role_path = f"{RBAC}/namespaces/{ns}/roles/cm-get"
    ok(raw.call("PATCH", role_path, {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]},
                ctype="application/merge-patch+json"))
    assert raw.call("GET", path, token=token)[0] == 403
    ok(raw.call("PATCH", role_path, {"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]},
                ctype="application/merge-patch+json"))
    assert raw.call("GET", path, token=token)[0] == 200
    ok(raw.call("DELETE", f"{RBAC}/namespaces/{ns}/rolebindings/cm-get"))
    assert raw.call("GET", path, token=token)[0] == 403
    ok(bind(raw, ns, "cm-get", "Role", "cm-get", ns, "cached"))
    assert raw.call("GET", path, token=token)[0] == 200
    ok(raw.call("DELETE", f"/api/v1/namespaces/{ns}/serviceaccounts/cached"))
    assert raw.call("GET", path, token=token)[0] == 401  # a cached decision never outlives its token
