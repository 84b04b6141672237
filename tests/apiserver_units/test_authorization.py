"""Units of the authorization package: request attributes as kube's RequestInfoFactory derives
them (cases from requestinfo_test.go), rule matching and covering, Go quoting."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver.authentication import ADMIN, service_account_user, split_service_account
from samplecontroller.apiserver.authorization import bootstrappolicy
from samplecontroller.apiserver.authorization.attributes import Attributes, forbidden, from_request, go_quote
from samplecontroller.apiserver.authorization.rules import Rule, compact_string, covers, rule_allows

U = service_account_user("ns", "sa")


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/namespaces", {}, ("list", "", "", "namespaces", "", "")),
    ("GET", "/api/v1/namespaces/other", {}, ("get", "other", "", "namespaces", "", "other")),
    ("GET", "/api/v1/namespaces/other/pods", {}, ("list", "other", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/other/pods/foo", {}, ("get", "other", "", "pods", "", "foo")),
    ("GET", "/api/v1/namespaces/other/pods/foo/status", {}, ("get", "other", "", "pods", "status", "foo")),
    ("GET", "/api/v1/pods", {}, ("list", "", "", "pods", "", "")),
    ("GET", "/api/v1/pods", {"watch": "true"}, ("watch", "", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/other/pods", {}, ("watch", "other", "", "pods", "", "")),
    ("POST", "/api/v1/namespaces/other/pods", {}, ("create", "other", "", "pods", "", "")),
    ("PUT", "/api/v1/namespaces/other/finalize", {}, ("update", "other", "", "namespaces", "finalize", "other")),
    ("PATCH", "/apis/apps/v1/namespaces/o/deployments/d/scale", {},
     ("patch", "o", "apps", "deployments", "scale", "d")),
    ("DELETE", "/api/v1/namespaces/other/pods", {}, ("deletecollection", "other", "", "pods", "", "")),
    ("DELETE", "/api/v1/namespaces/other", {}, ("delete", "other", "", "namespaces", "", "other")),
    ("GET", "/api/v1/namespaces/other/pods", {"fieldSelector": "metadata.name=foo"},
     ("list", "other", "", "pods", "", "foo")),
    ("POST", "/api/v1/namespaces/other/pods/p/exec", {}, ("create", "other", "", "pods", "exec", "p")),
])
def test_resource_request_attributes(method: str, path: str, query: dict[str, str],
                                     expected: tuple[str, str, str, str, str, str]) -> None:
    attrs = from_request(U, method, path, query)
    assert attrs.resource_request
    assert (attrs.verb, attrs.namespace, attrs.api_group, attrs.resource, attrs.subresource, attrs.name) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz", "/metrics"])
def test_non_resource_request_attributes(path: str) -> None:
    attrs = from_request(U, "GET", path, {})
    assert not attrs.resource_request and attrs.verb == "get" and attrs.path == path


def test_non_resource_verbs_are_the_lower_case_method() -> None:
    assert from_request(U, "HEAD", "/healthz", {}).verb == "head"
    assert from_request(U, "POST", "/logs", {}).verb == "post"
    assert from_request(U, "HEAD", "/api/v1/namespaces/n/pods/x", {}).verb == "get"  # a resource request


def test_rule_matching() -> None:
    def allows(rule: Rule, verb: str = "get", resource_request: bool = True, **kw: str) -> bool:
        return rule_allows(Attributes(U, verb, resource_request, **kw), rule)

    pods = Rule(("get",), ("",), ("pods",))
    assert allows(pods, resource="pods") and not allows(pods, resource="pods", subresource="log")
    assert not allows(pods, resource="pods", verb="list") and not allows(pods, resource="pods", api_group="apps")
    assert allows(Rule(("*",), ("*",), ("*",)), verb="escalate", api_group="rbac.authorization.k8s.io",
                  resource="roles")
    assert allows(Rule(("get",), ("apps",), ("*/scale",)), api_group="apps", resource="deployments",
                  subresource="scale")
    named = Rule(("get",), ("",), ("configmaps",), ("a",))
    assert allows(named, resource="configmaps", name="a") and not allows(named, resource="configmaps")
    urls = Rule(("get",), non_resource_urls=("/healthz", "/logs/*"))
    assert allows(urls, resource_request=False, path="/healthz")
    assert allows(urls, resource_request=False, path="/logs/x/y")
    assert not allows(urls, resource_request=False, path="/healthz/ping")
    assert not allows(urls, resource="healthz")


def test_covers_and_compact_strings() -> None:
    owned = [Rule(("get", "list"), ("",), ("pods", "*/status")), Rule(("get",), non_resource_urls=("/logs/*",))]
    assert covers(owned, [Rule(("get",), ("",), ("pods", "services/status"))]) == []
    assert covers(owned, [Rule(("get",), non_resource_urls=("/logs/a",))]) == []
    missing = covers(owned, [Rule(("get", "delete"), ("",), ("pods", "secrets"))])
    assert sorted(compact_string(r) for r in missing) == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}']
    assert covers([Rule(("get",), ("",), ("cm",), ("a",))], [Rule(("get",), ("",), ("cm",))]) != []


def test_go_quote_and_forbidden_status() -> None:
    assert go_quote('a"b\\c\n\udcff<') == '"a\\"b\\\\c\\n\\xff<"'
    err = forbidden(Attributes(ADMIN, "get", True, "ns", "apps", "v1", "deployments", "scale", "d"), "RBAC: x")
    assert err.code == 403 and err.status["reason"] == "Forbidden"
    assert err.status["message"] == ('deployments.apps "d" is forbidden: User "admin" cannot get resource '
                                     '"deployments/scale" in API group "apps" in the namespace "ns": RBAC: x')
    assert err.status["details"] == {"name": "d", "group": "apps", "kind": "deployments"}


def test_service_account_names() -> None:
    assert split_service_account("system:serviceaccount:ns:sa") == ("ns", "sa")
    for bad in ("system:serviceaccount:ns", "system:serviceaccount::sa", "jane", "system:serviceaccount:a:b:c"):
        assert split_service_account(bad) is None
    assert U.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")


def _groups(role: dict[str, Any]) -> set[str]:
    return {str(g) for rule in role.get("rules") or () for g in rule.get("apiGroups", ())}


@pytest.mark.parametrize("minor", [33, 34, 35, 36, 37])
def test_bootstrap_policy_follows_the_emulated_versions_gates(minor: int) -> None:
    """The 1.37 policy with the gates of ``1.<minor>``: DRA's rules and controllers from 1.34
    (DynamicResourceAllocation GA), the device-taint eviction controller, DRA extended resources
    and the claims' binding status from 1.36, /flagz and /statusz from 1.36, trust bundles, pod
    certificates and the storage version migrator from 1.37; the bindings follow the roles."""
    roles = {r["metadata"]["name"]: r for r in bootstrappolicy.cluster_roles(minor)}
    bindings = {b["metadata"]["name"] for b in bootstrappolicy.cluster_role_bindings(minor)}
    controllers = {n for n in roles if n.startswith("system:controller:")}
    assert controllers <= bindings
    assert ("resource.k8s.io" in _groups(roles["system:aggregate-to-view"])) == (minor >= 34)
    assert ("resource.k8s.io" in _groups(roles["system:node"])) == (minor >= 34)
    assert ("system:controller:resource-claim-controller" in roles) == (minor >= 34)
    assert ("system:controller:volumeattributesclass-protection-controller" in roles) == (minor >= 34)
    assert ("system:controller:device-taint-eviction-controller" in roles) == (minor >= 36)
    scheduler = [r["resources"] for r in roles["system:kube-scheduler"]["rules"]]
    assert (["resourceclaims/binding"] in scheduler) == (minor >= 36)
    urls = roles["system:monitoring"]["rules"][0]["nonResourceURLs"]
    assert urls == sorted(urls) and ({"/flagz", "/statusz"} <= set(urls)) == (minor >= 36)
    assert ("system:cluster-trust-bundle-discovery" in bindings) == (minor >= 37)
    assert ("system:controller:podcertificaterequestcleaner" in roles) == (minor >= 37)
    assert ("system:controller:storage-version-migrator-controller" in roles) == (minor >= 37)
    # always on from 1.33: MultiCIDRServiceAllocator (GA 1.33), SELinuxChangePolicy (beta on 1.33)
    assert {"system:controller:service-cidrs-controller", "system:controller:selinux-warning-controller"} <= controllers
