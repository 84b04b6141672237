"""kube's CEL authorizer library (k8s.io/apiserver v0.37.0-beta.0 pkg/cel/library/authz.go and
cost.go) as the policies' environment runs it: the attributes each check asks the authorizer,
the users, the decisions' accessors, the errors, the selectors and the costs."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver import admission_policy
from samplecontroller.apiserver.authorization.attributes import Attributes
from samplecontroller.apiserver.cel import authz, checked, cost
from samplecontroller.apiserver.cel.engine import EvalError
from samplecontroller.apiserver.restmapper import Resource

USER = {"username": "jane", "uid": "u-1", "groups": ["dev", "system:authenticated"], "extra": {"k": ["v"]}}
DEPLOYMENTS = Resource(group="apps", version="v1", plural="deployments", kind="Deployment", namespaced=True)


class Recorder:
    """An authorizer that allows what ``allow`` says and records every question."""

    def __init__(self, verdict: authz.Verdict = authz.Verdict(True, "yes")) -> None:
        self.asked: list[Attributes] = []
        self.verdict = verdict

    def __call__(self, attrs: Attributes) -> authz.Verdict:
        self.asked.append(attrs)
        return self.verdict


def run(source: str, recorder: Recorder | None = None) -> Any:
    recorder = recorder or Recorder()
    variables = admission_policy.authorizer_variable(recorder, USER, DEPLOYMENTS, "scale", "ns1", "web")
    with authz.bind(recorder):
        authz.fresh()
        return admission_policy.ENV.compile(source).evaluate(variables)


def test_a_resource_check_asks_kubes_attributes_for_the_requester() -> None:
    recorder = Recorder()
    assert run("authorizer.group('apps').resource('deployments').subresource('status').namespace('ns2')"
               ".name('api').check('patch').allowed()", recorder) is True
    (attrs,) = recorder.asked
    assert attrs == Attributes(authz.user_from_wire(USER), "patch", True, "ns2", "apps", "*", "deployments",
                               "status", "api")
    assert attrs.user.name == "jane" and attrs.user.groups == ("dev", "system:authenticated")


def test_unset_parts_are_empty_and_an_empty_subresource_or_name_unsets_them() -> None:
    recorder = Recorder()
    run("authorizer.group('').resource('pods').subresource('').name('').check('list').allowed()", recorder)
    assert recorder.asked[0] == Attributes(authz.user_from_wire(USER), "list", True, "", "", "*", "pods")


def test_a_path_check_is_a_non_resource_request_with_the_path_as_given() -> None:
    recorder = Recorder()
    run("authorizer.path('/healthz').check('get').allowed()", recorder)
    assert recorder.asked[0] == Attributes(authz.user_from_wire(USER), "get", False, path="/healthz")


def test_request_resource_is_the_requests_own_resource() -> None:
    recorder = Recorder()
    run("authorizer.requestResource.check('update').allowed()", recorder)
    assert recorder.asked[0] == Attributes(authz.user_from_wire(USER), "update", True, "ns1", "apps", "*",
                                           "deployments", "scale", "web")


def test_service_account_checks_as_that_service_account() -> None:
    recorder = Recorder()
    run("authorizer.serviceAccount('kube-system', 'builder').group('').resource('secrets').check('get')"
        ".allowed()", recorder)
    user = recorder.asked[0].user
    assert (user.name, user.uid, user.groups) == (
        "system:serviceaccount:kube-system:builder", "",
        ("system:serviceaccounts", "system:serviceaccounts:kube-system"))


@pytest.mark.parametrize(("source", "error"), [
    ("authorizer.path('').check('get')", "path must not be empty"),
    ("authorizer.path('  ').check('get')", "path must not be empty"),
    ("authorizer.group('apps').resource(' ').check('get')", "resource must not be empty"),
    ("authorizer.serviceAccount('default', 'invalid@*name').path('/x').check('get')",
     "Invalid service account name"),
    ("authorizer.serviceAccount('not@a#valid!namespace', 'validname').path('/x').check('get')",
     "Invalid service account namespace"),
    ("authorizer.serviceAccount('bad ns', 'bad name').path('/x').check('get')", "Invalid service account name"),
    ("authorizer.check('get')", "no such overload"),
    ("authorizer.path('/x').allowed()", "no such overload"),
])
def test_kubes_evaluation_errors(source: str, error: str) -> None:
    with pytest.raises(EvalError, match=error):
        run(source)


def test_a_forged_value_is_no_such_overload() -> None:
    """Values of the library's types are sealed: a map shaped like one (from a request's object)
    is not one, whoever it names."""
    recorder = Recorder()
    forged = {"@PathCheck": '0:{"path":"/x","user":{"extra":{},"groups":["system:masters"],"name":"a","uid":""}}'}
    with authz.bind(recorder), pytest.raises(EvalError, match="no such overload"):
        admission_policy.ENV.compile("object.check('get').allowed()").evaluate({"object": forged})
    assert recorder.asked == []


def test_decision_accessors() -> None:
    allowed = "authorizer.path('/x').check('get')"
    assert run(f"{allowed}.allowed()") is True
    assert run(f"{allowed}.reason()") == "yes"
    assert run(f"{allowed}.errored()") is False
    assert run(f"{allowed}.error()") == ""
    no_opinion = Recorder(authz.Verdict(False, "RBAC: role missing"))
    assert run(f"{allowed}.allowed()", no_opinion) is False
    assert run(f"{allowed}.reason()", no_opinion) == "RBAC: role missing"
    failed = Recorder(authz.Verdict(False, "", "webhook unreachable"))
    assert run(f"{allowed}.errored()", failed) is True
    assert run(f"{allowed}.error()", failed) == "webhook unreachable"


def test_selectors_are_parsed_into_the_attributes_or_dropped_with_their_error() -> None:
    recorder = Recorder()
    run("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app in (a, b)')"
        ".check('list').allowed()", recorder)
    attrs = recorder.asked[0]
    assert (attrs.field_selector, attrs.label_selector) == ("spec.nodeName=n1", "app in (a,b)")
    assert not attrs.field_selector_error and not attrs.label_selector_error
    run("authorizer.group('').resource('pods').fieldSelector('a=b=c\\\\').labelSelector('x in (')"
        ".check('list').allowed()", recorder)
    attrs = recorder.asked[1]
    assert (attrs.field_selector, attrs.label_selector) == ("", "")
    assert attrs.field_selector_error and attrs.label_selector_error


def test_a_third_check_in_one_expression_exceeds_the_runtime_cost_limit() -> None:
    check = "authorizer.path('/x').check('get').allowed()"
    assert run(f"{check} && {check}") is True
    with pytest.raises(EvalError, match="operation cancelled: actual cost limit exceeded"):
        run(f"{check} && {check} && {check}")


def test_policies_accept_kubes_examples_and_refuse_a_decision_as_a_validation() -> None:
    for source in ("authorizer.group('apps').resource('deployments').namespace('test').name('backend')"
                   ".check('delete').allowed()",
                   "authorizer.requestResource.subresource('status').check('update').allowed()",
                   "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=mynode')"
                   ".check('list').allowed()"):
        assert admission_policy.compile_error(source, "BOOL", "must evaluate to bool") == ""
    assert admission_policy.compile_error("authorizer.path('/healthz').check('get')", "BOOL",
                                          "must evaluate to bool") == "must evaluate to bool"
    # kube's messageExpressions have no authorizer
    assert "undeclared reference to 'authorizer'" in admission_policy.compile_error(
        "authorizer.path('/healthz').check('get').reason()", "STRING", "must evaluate to string",
        authorizer=False)


@pytest.mark.parametrize(("source", "column", "signature"), [
    ("authorizer.check('get')", 17, "'check' applied to 'kubernetes.authorization.Authorizer.(string)'"),
    ("authorizer.requestResource.allowed()", 35, "'allowed' applied to 'kubernetes.authorization.ResourceCheck.()'"),
    ("authorizer.path('/x').resource('y').check('get').allowed()", 31,
     "'resource' applied to 'kubernetes.authorization.PathCheck.(string)'"),
    ("authorizer.serviceAccount('a', 'b').resource('pods')", 45,
     "'resource' applied to 'kubernetes.authorization.Authorizer.(string)'"),
])
def test_a_call_the_library_does_not_declare_for_the_type_is_refused_as_kube_does(
        source: str, column: int, signature: str) -> None:
    detail = admission_policy.compile_error(source)
    assert detail.splitlines()[0] == f"compilation failed: ERROR: <input>:1:{column}: found no matching overload for "\
        + signature, detail


def test_a_comprehension_variable_named_authorizer_is_not_the_authorizer() -> None:
    assert admission_policy.compile_error("[1].all(authorizer, authorizer > 0)", "BOOL", "must evaluate to bool") == ""


def test_the_selectors_are_not_in_the_1_30_environment() -> None:
    source = "authorizer.group('').resource('pods').labelSelector('a=b').check('list').allowed()"
    assert "undeclared reference to 'labelSelector'" in admission_policy.compatibility_error(source, 30)
    assert admission_policy.compatibility_error(source, 31) == ""


@pytest.mark.parametrize(("source", "expected"), [
    # the variable 1, a check 350,000, each builder and accessor 1
    ("authorizer.path('/healthz').check('get').allowed()", 1 + 1 + 350_000 + 1),
    ("authorizer.group('apps').resource('deployments').namespace('x').check('get').allowed()",
     1 + 3 + 350_000 + 1),
    # a selector's parse: 10 + ceil(0.1 * 12) + ceil(0.5 * 12) * 50 for its 12 characters
    ("authorizer.group('').resource('pods').labelSelector('app=example1').check('list').allowed()",
     1 + 2 + (10 + 2 + 300) + 350_000 + 1),
])
def test_estimated_costs_are_kubes(source: str, expected: int) -> None:
    ast = checked.parse(admission_policy.ENV.compile(source).serialized())
    assert cost.estimate(ast, None).max == expected
