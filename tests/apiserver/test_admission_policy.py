"""ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding over HTTP and with kubectl."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl
from tests.apiserver.conftest import Raw

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICIES = f"{ADMISSION}/validatingadmissionpolicies"
BINDINGS = f"{ADMISSION}/validatingadmissionpolicybindings"
TESTDATA = Path(__file__).parent / "testdata" / "gateway-api"
_n = itertools.count()


@pytest.fixture
def ns(raw: Raw) -> str:
    name = f"vap-{next(_n)}"
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                            "metadata": {"name": name, "labels": {"env": "prod"}}})
    assert code == 201, body
    return name


@pytest.fixture
def policy(raw: Raw) -> Iterator[Any]:
    """``policy(spec, binding_spec)`` creates a policy and its binding, both removed afterwards."""
    made: list[str] = []

    def make(spec: dict[str, Any], binding: dict[str, Any] | None = None) -> str:
        name = f"p{next(_n)}"
        spec = {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE", "UPDATE"],
                                                         "resources": ["deployments"]}]}, **spec}
        code, _, body = raw.call("POST", POLICIES, {"apiVersion": "admissionregistration.k8s.io/v1",
                                                    "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
                                                    "spec": spec})
        assert code == 201, body
        code, _, body = raw.call("POST", BINDINGS, {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": f"{name}-binding"},
            "spec": {"policyName": name, "validationActions": ["Deny"], **(binding or {})}})
        assert code == 201, body
        made.append(name)
        return name

    yield make
    for name in made:
        raw.call("DELETE", f"{BINDINGS}/{name}-binding")
        raw.call("DELETE", f"{POLICIES}/{name}")


def deployment(name: str, replicas: int = 1, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_deny_with_kubes_status(raw: Raw, ns: str, policy: Any) -> None:
    name = policy({"validations": [{"expression": "object.spec.replicas <= 5"}]})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, body = raw.call("POST", path, deployment("d1", replicas=6))
    message = (f'deployments.apps "d1" is forbidden: ValidatingAdmissionPolicy \'{name}\' with binding '
               f"'{name}-binding' denied request: failed expression: object.spec.replicas <= 5")
    assert (code, body["reason"], body["message"]) == (422, "Invalid", message), body
    assert body["details"] == {"name": "d1", "group": "apps", "kind": "deployments",
                               "causes": [{"message": message.split(" is forbidden: ", 1)[1]}]}
    assert raw.call("POST", path, deployment("d1", replicas=5))[0] == 201
    code, _, body = raw.call("PATCH", f"{path}/d1", {"spec": {"replicas": 9}}, ctype="application/merge-patch+json")
    assert code == 422, body
    assert raw.call("GET", f"{path}/d1")[2]["spec"]["replicas"] == 5


def test_message_expression_reason_variables_and_old_object(raw: Raw, ns: str, policy: Any) -> None:
    policy({"variables": [{"name": "limit", "expression": "namespaceObject.metadata.labels.env == 'prod' ? 3 : 10"}],
            "validations": [
                {"expression": "object.spec.replicas <= variables.limit", "reason": "Forbidden",
                 "messageExpression": "'at most ' + string(variables.limit) + ' replicas in ' + request.namespace"},
                {"expression": "request.operation != 'UPDATE' || object.spec.replicas >= oldObject.spec.replicas",
                 "message": "no scaling down"}]})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, body = raw.call("POST", path, deployment("d2", replicas=4))
    assert (code, body["reason"]) == (403, "Forbidden"), body
    assert body["message"].endswith(f"denied request: at most 3 replicas in {ns}")
    assert raw.call("POST", path, deployment("d2", replicas=2))[0] == 201
    code, _, body = raw.call("PATCH", f"{path}/d2", {"spec": {"replicas": 1}}, ctype="application/merge-patch+json")
    assert code == 422 and body["message"].endswith("denied request: no scaling down"), body


def test_warn_action_and_selectors(raw: Raw, ns: str, policy: Any) -> None:
    name = policy({"validations": [{"expression": "has(object.metadata.labels.team)", "message": "needs a team"}],
                   "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                           "operations": ["CREATE"], "resources": ["deployments"]}],
                                        "namespaceSelector": {"matchLabels": {"env": "prod"}}}},
                  {"validationActions": ["Warn"], "matchResources": {"objectSelector": {
                      "matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}}})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, headers, body = raw.call("POST", path, deployment("d3"))
    assert code == 201, body
    assert headers["warning"] == (f"299 - \"Validation failed for ValidatingAdmissionPolicy '{name}' with binding "
                                  f"'{name}-binding': needs a team\"")
    code, headers, _ = raw.call("POST", path, deployment("d4", skip="yes"))
    assert code == 201 and "warning" not in headers
    code, headers, _ = raw.call("POST", "/apis/apps/v1/namespaces/default/deployments", deployment(f"d5-{ns}"))
    assert code == 201 and "warning" not in headers


def test_failure_policy_and_match_conditions(raw: Raw, ns: str, policy: Any) -> None:
    policy({"failurePolicy": "Ignore", "validations": [{"expression": "object.spec.nope == 1"}]})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    assert raw.call("POST", path, deployment("d6"))[0] == 201
    name = policy({"validations": [{"expression": "object.spec.nope == 1"}],
                   "matchConditions": [{"name": "only-big", "expression": "object.spec.replicas > 1"}]})
    assert raw.call("POST", path, deployment("d7"))[0] == 201
    code, _, body = raw.call("POST", path, deployment("d8", replicas=2))
    assert code == 422 and body["message"].endswith(
        f"'{name}-binding' denied request: expression 'object.spec.nope == 1' resulted in error: no such key: nope"), body


def test_params_from_a_configmap(raw: Raw, ns: str, policy: Any) -> None:
    code, _, body = raw.call("POST", f"/api/v1/namespaces/{ns}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits"}, "data": {"max": "2"}})
    assert code == 201, body
    policy({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                             "messageExpression": "'replicas must be at most ' + params.data.max"}]},
           {"paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, body = raw.call("POST", path, deployment("d9", replicas=3))
    assert code == 422 and body["message"].endswith("denied request: replicas must be at most 2"), body
    assert raw.call("POST", path, deployment("d9", replicas=2))[0] == 201
    code, _, body = raw.call("POST", "/apis/apps/v1/namespaces/default/deployments", deployment(f"d10-{ns}"))
    assert code == 422 and body["message"].endswith(
        "denied request: failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"), body


def test_gateway_api_safe_upgrades_policy(raw: Raw, server: LocalAPIServer, tmp_path: Path) -> None:
    """The real policy Gateway API ships (vendored): CRDs of an old bundle version are refused."""
    kubectl = make_kubectl(tmp_path, server)
    proc = kubectl("apply", "-f", str(TESTDATA / "gateway.networking.k8s.io_vap_safeupgrades.yaml"))
    assert proc.returncode == 0, proc.stderr
    try:
        crd: dict[str, Any] = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "oldroutes.gateway.networking.k8s.io", "annotations": {
                   "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/2466",
                   "gateway.networking.k8s.io/bundle-version": "v1.2.0",
                   "gateway.networking.k8s.io/channel": "standard"}},
               "spec": {"group": "gateway.networking.k8s.io", "scope": "Namespaced",
                        "names": {"plural": "oldroutes", "kind": "OldRoute"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
        proc = kubectl("apply", "-f", "-", stdin=json.dumps(crd))
        assert proc.returncode == 1
        assert ("ValidatingAdmissionPolicy 'safe-upgrades.gateway.networking.k8s.io' with binding "
                "'safe-upgrades.gateway.networking.k8s.io' denied request: Installing CRDs with version before "
                "v1.5.0 is prohibited by default.") in proc.stderr, proc.stderr
        crd["metadata"]["annotations"]["gateway.networking.k8s.io/bundle-version"] = "v1.5.1"
        proc = kubectl("apply", "-f", "-", stdin=json.dumps(crd))
        assert proc.returncode == 0, proc.stderr
    finally:
        kubectl("delete", "-f", str(TESTDATA / "gateway.networking.k8s.io_vap_safeupgrades.yaml"))


def test_a_policy_whose_expression_does_not_compile_is_rejected(raw: Raw) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "bad"},
              "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                               "operations": ["CREATE"], "resources": ["deployments"]}]},
                       "validations": [{"expression": "object.spec.replicas <="},
                                       {"expression": "1", "messageExpression": "2"}],
                       "variables": [{"name": "v", "expression": "authorizer != null"}]}}
    code, _, body = raw.call("POST", POLICIES, policy)
    assert (code, body["reason"]) == (422, "Invalid"), body
    assert body["message"].startswith(
        'ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad" is invalid: [spec.validations[0].expression: '
        'Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24: Syntax error: '), body
    assert [c["field"] for c in body["details"]["causes"]] == [
        "spec.validations[0].expression", "spec.validations[1].expression", "spec.validations[1].messageExpression"]
    assert body["details"]["causes"][1]["message"] == 'Invalid value: "1": must evaluate to bool'
    assert raw.call("GET", f"{POLICIES}/bad")[0] == 404


def test_policies_and_bindings_are_defaulted_and_validated(raw: Raw) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "checked"},
              "spec": {"validations": [{"expression": "params.x == 1"}],
                       "matchConditions": [{"name": "a", "expression": "true"}, {"name": "a", "expression": "true"}]}}
    code, _, body = raw.call("POST", POLICIES, policy)
    assert code == 422, body
    causes = [(c["field"], c["message"]) for c in body["details"]["causes"]]
    assert causes[:2] == [("spec.matchConstraints", "Required value"),
                          ("spec.matchConditions[1].name", 'Duplicate value: "a"')]
    assert causes[2][0] == "spec.validations[0].expression"
    assert causes[2][1].startswith('Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:')
    assert "undeclared reference to 'params" in causes[2][1]  # no paramKind: no params
    policy["spec"] = {"validations": [{"expression": "true"}], "matchConstraints": {"resourceRules": [
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]}}
    code, _, body = raw.call("POST", POLICIES, policy)
    assert code == 201, body
    assert body["spec"]["failurePolicy"] == "Fail"
    assert body["spec"]["matchConstraints"] == {
        "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"],
             "scope": "*"}]}
    raw.call("DELETE", f"{POLICIES}/checked")
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "checked"}, "spec": {"validationActions": ["Deny", "Warn", "Deny", "Nope"],
                                                         "paramRef": {"name": "x", "selector": {}}}}
    code, _, body = raw.call("POST", BINDINGS, binding)
    assert code == 422, body
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.policyName", "Required value"),
        ("spec.validationActions[2]", 'Duplicate value: "Deny"'),
        ("spec.validationActions[3]", 'Unsupported value: "Nope": supported values: "Audit", "Deny", "Warn"'),
        ("spec.validationActions", 'Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", '
                                   '"Nope"}: must not contain both Deny and Warn (repeating the same validation '
                                   "failure information in the API response and headers serves no purpose)"),
        ("spec.paramRef.name", "Forbidden: name and selector are mutually exclusive"),
        ("spec.paramRef.selector", "Forbidden: name and selector are mutually exclusive"),
        ("spec.paramRef.parameterNotFoundAction", "Required value")]


def test_match_resources_of_policies_and_bindings_are_validated(raw: Raw) -> None:
    """validateMatchResources on a policy's matchConstraints and a binding's matchResources, as
    kube's ValidatingAdmissionPolicy validation does (a bad matchPolicy, selector or rule scope
    was accepted)."""
    rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "matched"},
              "spec": {"validations": [{"expression": "true"}], "matchConstraints": {
                  "resourceRules": rules, "matchPolicy": "Bogus",
                  "objectSelector": {"matchLabels": {"bad key!": "x"}},
                  "excludeResourceRules": [{**rules[0], "scope": "Galaxy"}]}}}
    code, _, body = raw.call("POST", POLICIES, policy)
    assert code == 422, body
    fields = {c["field"]: c["reason"] for c in body["details"]["causes"]}
    assert fields["spec.matchConstraints.matchPolicy"] == "FieldValueNotSupported", body
    assert fields["spec.matchConstraints.excludeResourceRules[0].scope"] == "FieldValueNotSupported", body
    assert any(f.startswith("spec.matchConstraints.objectSelector") for f in fields), body
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "matched"},
               "spec": {"policyName": "matched", "validationActions": ["Deny"],
                        "matchResources": {"namespaceSelector": {"matchExpressions": [
                            {"key": "a", "operator": "Sometimes"}]}}}}
    code, _, body = raw.call("POST", BINDINGS, binding)
    assert code == 422, body
    assert all(c["field"].startswith("spec.matchResources.namespaceSelector") for c in body["details"]["causes"]), body


@pytest.mark.kubectl
def test_kubectl_get_lists_policies_and_bindings_as_kubectl_does(raw: Raw, server: LocalAPIServer, tmp_path: Path,
                                                                 policy: Any) -> None:
    name = policy({"validations": [{"expression": "true"}, {"expression": "true"}]})
    kubectl = make_kubectl(tmp_path, server)
    proc = kubectl("get", "validatingadmissionpolicy", name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert proc.stdout.split("\n")[1].split()[:3] == [name, "2", "<unset>"]
    proc = kubectl("get", "validatingadmissionpolicybinding", f"{name}-binding")
    assert proc.stdout.split("\n")[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"], proc.stderr
    assert proc.stdout.split("\n")[1].split()[:3] == [f"{name}-binding", name, "<unset>"]


GADGETS_GROUP = "vap-gadgets.example.com"


@pytest.fixture(scope="module")
def gadget_versions(server: LocalAPIServer) -> Iterator[str]:
    """Gadgets served in v1 (storage) and v2, same schema, conversion strategy None."""
    raw = Raw(server)
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}}}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{GADGETS_GROUP}"},
           "spec": {"group": GADGETS_GROUP, "scope": "Namespaced",
                    "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                                 {"name": "v2", "served": True, "storage": False, "schema": schema}]}}
    code, _, body = raw.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    yield GADGETS_GROUP
    raw.call("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{GADGETS_GROUP}")


@pytest.mark.parametrize("match_policy", [None, "Equivalent", "Exact"])
def test_match_policy_equivalent_sees_another_version_converted(raw: Raw, ns: str, policy: Any,
                                                                gadget_versions: str, match_policy: str | None) -> None:
    """A policy whose rule lists only v1 of a CRD is applied to a request made in v2 under
    ``matchPolicy: Equivalent`` (the default), with the object (and old object) converted to v1 and
    ``request.kind``/``resource`` naming v1 while ``requestKind``/``requestResource`` name v2, as
    kube's policy dispatcher does; ``Exact`` lets the v2 request pass."""
    group = gadget_versions
    constraints: dict[str, Any] = {"resourceRules": [{"apiGroups": [group], "apiVersions": ["v1"],
                                                      "operations": ["CREATE", "UPDATE"], "resources": ["gadgets"]}]}
    if match_policy is not None:
        constraints["matchPolicy"] = match_policy
    seen = ("object.apiVersion + ' ' + request.kind.version + '/' + request.resource.version + ' asked ' + "
            "request.requestKind.version + '/' + request.requestResource.version + "
            "(oldObject == null ? '' : ' old ' + oldObject.apiVersion)")
    name = policy({"matchConstraints": constraints,
                   "validations": [{"expression": "object.spec.size <= 5", "messageExpression": seen}]})
    path = f"/apis/{group}/v2/namespaces/{ns}/gadgets"

    def gadget(size: int) -> dict[str, Any]:
        return {"apiVersion": f"{group}/v2", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": size}}

    code, _, body = raw.call("POST", path, gadget(9))
    if match_policy == "Exact":
        assert code == 201, body  # the rule lists v1 only: a v2 request is not matched
        return
    assert code == 422, body
    assert body["message"] == (f'gadgets.{group} "g" is forbidden: ValidatingAdmissionPolicy \'{name}\' with '
                               f"binding '{name}-binding' denied request: {group}/v1 v1/v1 asked v2/v2"), body
    assert raw.call("POST", path, gadget(1))[0] == 201
    code, _, body = raw.call("PATCH", f"{path}/g", {"spec": {"size": 7}}, ctype="application/merge-patch+json")
    assert code == 422, body
    assert body["message"].endswith(f"denied request: {group}/v1 v1/v1 asked v2/v2 old {group}/v1"), body
    # a request in the listed version is matched as itself
    code, _, body = raw.call("POST", f"/apis/{group}/v1/namespaces/{ns}/gadgets",
                             {**gadget(8), "apiVersion": f"{group}/v1", "metadata": {"name": "g1"}})
    assert code == 422 and body["message"].endswith(f"denied request: {group}/v1 v1/v1 asked v1/v1"), body


def test_an_authorizer_check_denies_a_user_lacking_the_permission(raw: Raw, ns: str, policy: Any) -> None:
    """kube's CEL authorizer library (library/authz.go) in a policy's validations and
    matchConditions: the check runs against RBAC for the requesting user (or a named
    service account); ``authorizer.requestResource`` is the request's own resource."""
    from tests.apiserver.test_rbac import bind, ok, role, service_account

    role(raw, ns, "deploy", [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}])
    role(raw, ns, "scale", [{"apiGroups": ["apps"], "resources": ["deployments", "deployments/scale"],
                             "verbs": ["create", "update"]}])
    plain, scaler = service_account(raw, ns, "plain"), service_account(raw, ns, "scaler")
    ok(bind(raw, ns, "plain", "Role", "deploy", ns, "plain"))
    ok(bind(raw, ns, "scaler", "Role", "scale", ns, "scaler"))
    scale = ("authorizer.group('apps').resource('deployments').subresource('scale')"
             ".namespace(object.metadata.namespace).check('update')")
    name = policy({
        "matchConditions": [{"name": "big", "expression": "object.spec.replicas > 1"},
                            {"name": "own", "expression": "authorizer.requestResource.check('create').allowed()"}],
        "validations": [{"expression": f"{scale}.allowed()", "message": "may not scale"},
                        {"expression": f"!{scale}.errored() && authorizer.path('/healthz').check('get').allowed()"},
                        {"expression": f"authorizer.serviceAccount('{ns}', 'scaler').group('apps')"
                                       ".resource('deployments').subresource('scale').namespace('" + ns + "')"
                                       ".check('update').reason().startsWith('RBAC: allowed by RoleBinding')"}]})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    code, _, body = raw.call("POST", path, deployment("small"), token=plain)
    assert code == 201, body  # a false matchCondition: not validated
    code, _, body = raw.call("POST", path, deployment("big", replicas=3), token=plain)
    assert code == 422 and body["message"].endswith(f"'{name}-binding' denied request: may not scale"), body
    code, _, body = raw.call("POST", path, deployment("big", replicas=3), token=scaler)
    assert code == 201, body


def test_a_message_expression_has_no_authorizer(raw: Raw) -> None:
    """kube compiles messageExpressions without the ``authorizer`` variable (HasAuthorizer false)."""
    code, _, body = raw.call("POST", POLICIES, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "authz-message"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["deployments"]}]},
                 "validations": [{"expression": "authorizer.requestResource.check('create').allowed()",
                                  "messageExpression": "authorizer.path('/x').check('get').reason()"}]}})
    assert code == 422, body
    (cause,) = body["details"]["causes"]
    assert cause["field"] == "spec.validations[0].messageExpression", body
    assert "undeclared reference to 'authorizer'" in cause["message"], body


def test_a_mutating_policy_is_defaulted_and_validated(raw: Raw) -> None:
    """A MutatingAdmissionPolicy is stored (not run) after kube's validation: an invalid one is a
    422 naming each rule, a valid one is defaulted and its update checked again."""
    path = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
    rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "DELETE"],
              "resources": ["deployments"]}]
    policy: dict[str, Any] = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
                              "metadata": {"name": "mutating"},
                              "spec": {"matchConstraints": {"resourceRules": rules}, "mutations": [
                                  {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: x}]"}}]}}
    code, _, body = raw.call("POST", path, policy)
    assert code == 422, body
    assert [(c["field"], c["message"].split("\n")[0]) for c in body["details"]["causes"]] == [
        ("spec.matchConstraints.resourceRules.operations",
         'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"'),
        ("spec.mutations[0].jsonPatch.expression", 'Invalid value: "[JSONPatch{op: x}]": compilation failed: '
                                                   "ERROR: <input>:1:16: undeclared reference to 'x' (in container '')"),
        ("spec.reinvocationPolicy", "Required value")]
    rules[0]["operations"] = ["CREATE"]
    policy["spec"]["mutations"][0]["jsonPatch"]["expression"] = '[JSONPatch{op: "test", path: "/spec", value: 1}]'
    policy["spec"]["reinvocationPolicy"] = "IfNeeded"
    code, _, body = raw.call("POST", path, policy)
    assert code == 201, body
    assert body["spec"]["failurePolicy"] == "Fail"
    assert body["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    body["spec"]["reinvocationPolicy"] = "Sometimes"
    code, _, answer = raw.call("PUT", f"{path}/mutating", body)
    assert (code, answer["details"]["causes"][0]["field"]) == (422, "spec.reinvocationPolicy"), answer
    assert raw.call("DELETE", f"{path}/mutating")[0] == 200
