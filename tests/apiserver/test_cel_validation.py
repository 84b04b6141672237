"""CRD validation rules (x-kubernetes-validations, CEL) enforced over HTTP as kube-apiserver does."""

from __future__ import annotations

import copy
import itertools
import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import k8syaml
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import make_kubectl
from tests.apiserver.conftest import Raw

GROUP = "cel.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets"
_names = itertools.count()

SCHEMA: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w')", "message": "name must start with w"}],
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.minReplicas <= self.maxReplicas"},
                {"rule": "!has(self.mode) || self.mode != 'off' || !has(self.url)",
                 "messageExpression": "'url ' + self.url + ' needs a mode'", "fieldPath": ".url"},
                {"rule": "self.minReplicas == oldSelf.minReplicas || (has(self.mode) && self.mode == 'scalable')",
                 "message": "minReplicas is immutable", "reason": "FieldValueForbidden", "fieldPath": ".minReplicas"},
            ],
            "properties": {
                "minReplicas": {"type": "integer"},
                "maxReplicas": {"type": "integer"},
                "mode": {"type": "string", "x-kubernetes-validations": [{"rule": "self in ['on', 'off', 'scalable']"}]},
                "url": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "isURL(self) && url(self).getScheme() == 'https'", "message": "must be an https URL"}]},
                "memory": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "quantity(self).isLessThan(quantity('1Gi'))", "message": "at most 1Gi"}]},
                "cidrs": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 64,
                                                                     "x-kubernetes-validations": [
                    {"rule": "isCIDR(self) && cidr(self).prefixLength() >= 8"}]},
                    "x-kubernetes-validations": [{"rule": "self.isSorted()", "message": "must be sorted"}]},
                "labels": {"type": "object", "maxProperties": 64, "additionalProperties": {
                    "type": "string", "x-kubernetes-validations": [{"rule": "self.size() <= 5"}]}},
                "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.5"}]},
                # the semver library (kube 1.33+)
                "version": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                    {"rule": "semver(self, true).isGreaterThan(semver('1.0.0'))"}]},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"], "properties": {
                              "name": {"type": "string"}, "port": {"type": "integer"}},
                              "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port",
                                                            "message": "port is immutable"}]}},
                "once": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "!oldSelf.hasValue() || oldSelf.value() == self", "optionalOldSelf": True,
                     "message": "once set, never changed"}]},
                # ext lists' sortBy (1.34), two-variable comprehensions (1.32)
                "tiers": {"type": "array", "maxItems": 8, "items": {"type": "object", "properties": {
                    "name": {"type": "string", "maxLength": 16}, "priority": {"type": "integer"}}},
                    "x-kubernetes-validations": [
                        {"rule": "self.sortBy(t, t.priority) == self", "message": "tiers must be sorted by priority"},
                        {"rule": "self.all(i, t, t.priority >= i)", "message": "a tier's priority is its index or more"}]},
            },
        },
    },
}


def crd(schema: dict[str, Any], kind: str = "Widget", plural: str = "widgets") -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": kind, "listKind": kind + "List"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


@pytest.fixture(scope="module")
def widgets(raw: Raw) -> str:
    code, _, body = raw.call("POST", CRDS, crd(SCHEMA))
    assert code == 201, body
    for _ in range(200):
        if raw.call("GET", WIDGETS)[0] == 200:
            break
    return WIDGETS


def widget(name: str = "", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget",
            "metadata": {"name": name or f"w{next(_names)}"},
            "spec": {"minReplicas": 1, "maxReplicas": 3, **spec}}


def rejected(raw: Raw, path: str, obj: dict[str, Any], method: str = "POST") -> dict[str, Any]:
    code, _, body = raw.call(method, path, obj)
    assert code == 422, body
    assert body["reason"] == "Invalid" and body["kind"] == "Status"
    return dict(body)


def test_violating_object_is_rejected_with_kubes_message(raw: Raw, widgets: str) -> None:
    obj = widget(minReplicas=5, maxReplicas=2)
    body = rejected(raw, widgets, obj)
    name = obj["metadata"]["name"]
    assert body["message"] == (f'Widget.{GROUP} "{name}" is invalid: spec: Invalid value: "object": '
                               "failed rule: self.minReplicas <= self.maxReplicas")
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec", "message":
                                          'Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas'}]
    assert raw.call("GET", f"{widgets}/{name}")[0] == 404


def test_valid_object_is_stored(raw: Raw, widgets: str) -> None:
    obj = widget(mode="on", url="https://example.com", memory="512Mi", cidrs=["10.0.0.0/8", "192.168.0.0/16"],
                 labels={"a": "b"}, ratio=1, version="v1.2",
                 tiers=[{"name": "a", "priority": 1}, {"name": "b", "priority": 1}, {"name": "c", "priority": 7}])
    code, _, body = raw.call("POST", widgets, obj)
    assert code == 201, body


@pytest.mark.parametrize(("spec", "expected"), [
    ({"mode": "sideways"}, "spec.mode: Invalid value: \"string\": failed rule: self in ['on', 'off', 'scalable']"),
    ({"url": "http://example.com"}, 'spec.url: Invalid value: "string": must be an https URL'),
    ({"memory": "2Gi"}, 'spec.memory: Invalid value: "string": at most 1Gi'),
    ({"cidrs": ["10.0.0.0/4"]}, 'spec.cidrs[0]: Invalid value: "string": failed rule: isCIDR(self) && cidr(self).prefixLength() >= 8'),
    ({"cidrs": ["b/8", "10.0.0.0/8"]}, 'spec.cidrs: Invalid value: "array": must be sorted'),
    ({"labels": {"k": "toolong"}}, 'spec.labels[k]: Invalid value: "string": failed rule: self.size() <= 5'),
    ({"ratio": 2}, 'spec.ratio: Invalid value: "number": failed rule: self < 1.5'),
    ({"version": "1.0.0-rc.1"},
     'spec.version: Invalid value: "string": failed rule: semver(self, true).isGreaterThan(semver(\'1.0.0\'))'),
    ({"version": "1.0.0+x_y"}, 'spec.version: Invalid value: "string": Invalid character(s) found in build meta '
                               'data "x_y" evaluating rule: semver(self, true).isGreaterThan(semver(\'1.0.0\'))'),
    ({"mode": "off", "url": "https://x"}, 'spec.url: Invalid value: "object": url https://x needs a mode'),
    ({"tiers": [{"name": "b", "priority": 5}, {"name": "a", "priority": 2}]},
     'spec.tiers: Invalid value: "array": tiers must be sorted by priority'),
    ({"tiers": [{"name": "a", "priority": 0}, {"name": "b", "priority": 0}]},
     'spec.tiers: Invalid value: "array": a tier\'s priority is its index or more'),
])
def test_rules_at_every_level(raw: Raw, widgets: str, spec: dict[str, Any], expected: str) -> None:
    body = rejected(raw, widgets, widget(**spec))
    assert body["message"].endswith(f" is invalid: {expected}") or expected in body["message"], body["message"]


def test_root_rule_and_several_errors(raw: Raw, widgets: str) -> None:
    body = rejected(raw, widgets, widget("bad", minReplicas=9, mode="nope"))
    assert body["message"] == (
        f'Widget.{GROUP} "bad" is invalid: [<nil>: Invalid value: "object": name must start with w, '
        'spec: Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas, '
        "spec.mode: Invalid value: \"string\": failed rule: self in ['on', 'off', 'scalable']]")
    assert body["details"]["causes"][0]["field"] == "<nil>"


def test_schema_errors_block_the_rules(raw: Raw, widgets: str) -> None:
    obj = widget(minReplicas="x", maxReplicas=1)
    body = rejected(raw, widgets, obj)
    assert body["details"]["causes"][-1] == {
        "reason": "FieldValueInvalid", "field": "<nil>",
        "message": 'Invalid value: "null": some validation rules were not checked because the object was invalid; '
                   "correct the existing errors to complete validation"}


def test_transition_rules_on_update_and_patch(raw: Raw, widgets: str) -> None:
    obj = widget(ports=[{"name": "http", "port": 80}], once="first")
    name = obj["metadata"]["name"]
    code, _, stored = raw.call("POST", widgets, obj)
    assert code == 201, stored
    changed = copy.deepcopy(stored)
    changed["spec"]["minReplicas"] = 2
    body = rejected(raw, f"{widgets}/{name}", changed, method="PUT")
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "spec.minReplicas",
                                          "message": "Forbidden: minReplicas is immutable"}]
    code, _, body = raw.call("PATCH", f"{widgets}/{name}", {"spec": {"ports": [{"name": "http", "port": 81}]}},
                             ctype="application/merge-patch+json")
    assert code == 422 and 'spec.ports[0]: Invalid value: "object": port is immutable' in body["message"], body
    code, _, body = raw.call("PATCH", f"{widgets}/{name}", {"spec": {"once": "second"}},
                             ctype="application/merge-patch+json")
    assert code == 422 and 'spec.once: Invalid value: "string": once set, never changed' in body["message"], body
    code, _, body = raw.call("PATCH", f"{widgets}/{name}", {"spec": {"ports": [{"name": "https", "port": 443}],
                                                                     "mode": "scalable", "minReplicas": 2}},
                             ctype="application/merge-patch+json")
    assert code == 200, body


def test_ratcheting_keeps_unchanged_invalid_values(raw: Raw, widgets: str) -> None:
    """A value stored before a rule existed may stay (CRDValidationRatcheting): a warning, not an error."""
    obj = widget(labels={"a": "b"})
    name = obj["metadata"]["name"]
    assert raw.call("POST", widgets, obj)[0] == 201
    tightened = copy.deepcopy(SCHEMA)
    tightened["properties"]["spec"]["properties"]["labels"]["additionalProperties"]["x-kubernetes-validations"] = [
        {"rule": "self.size() <= 0"}]
    code, _, stored_crd = raw.call("GET", f"{CRDS}/widgets.{GROUP}")
    stored_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = tightened
    code, _, body = raw.call("PUT", f"{CRDS}/widgets.{GROUP}", stored_crd)
    assert code == 200, body
    try:
        code, headers, body = raw.call("PATCH", f"{widgets}/{name}", {"spec": {"maxReplicas": 4}},
                                       ctype="application/merge-patch+json")
        assert code == 200, body
        assert headers.get("warning") == ('299 - "spec.labels[a]: Invalid value: \\"string\\": '
                                          'failed rule: self.size() <= 0"')
        code, _, body = raw.call("PATCH", f"{widgets}/{name}", {"spec": {"labels": {"a": "c"}}},
                                 ctype="application/merge-patch+json")
        assert code == 422, body
    finally:
        code, _, stored_crd = raw.call("GET", f"{CRDS}/widgets.{GROUP}")
        stored_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = SCHEMA
        assert raw.call("PUT", f"{CRDS}/widgets.{GROUP}", stored_crd)[0] == 200


def test_a_rule_that_does_not_compile_rejects_the_crd(raw: Raw) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.x =="}, {"rule": "self.x", "messageExpression": "1 + 1"}]}}}
    code, _, body = raw.call("POST", CRDS, crd(schema, "Broken", "brokens"))
    assert code == 422, body
    assert body["message"].startswith(
        f'CustomResourceDefinition.apiextensions.k8s.io "brokens.{GROUP}" is invalid: '
        "[spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
        'apiextensions.ValidationRule{Rule:"self.x ==", Message:"", MessageExpression:"", '
        "Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: "
        "compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting"), body["message"]
    fields = [c["field"] for c in body["details"]["causes"]]
    assert fields == ["spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
                      "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].messageExpression"]
    assert "must evaluate to a string" in body["details"]["causes"][1]["message"]
    assert raw.call("GET", f"{CRDS}/brokens.{GROUP}")[0] == 404


def test_rules_kube_1_37_refuses_reject_the_crd(raw: Raw) -> None:
    """kube-apiserver 1.37 compiles a new rule for compatibility version 1.36: ``includes``
    (1.37's lists library v1) is undeclared; its environment has no ``cel.bind``, and a list
    literal mixing types does not check."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.x.includes('a')"}, {"rule": "cel.bind(v, self.x, v != '')"},
        {"rule": "[1, 'a'].size() == 2"}], "properties": {"x": {"type": "string", "maxLength": 8}}}}}
    code, _, body = raw.call("POST", CRDS, crd(schema, "Refused", "refuseds"))
    assert code == 422, body
    causes = [(c["field"].split("properties[spec].")[-1], c["message"].split(": compilation failed: ")[-1].splitlines()[0])
              for c in body["details"]["causes"]]
    assert causes == [
        ("x-kubernetes-validations[0].rule",
         "ERROR: <input>:1:16: undeclared reference to 'includes' (in container '')"),
        ("x-kubernetes-validations[1].rule", "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')"),
        ("x-kubernetes-validations[2].rule", "ERROR: <input>:1:5: expected type 'int' but found 'string'")], body
    assert raw.call("GET", f"{CRDS}/refuseds.{GROUP}")[0] == 404


def test_a_rule_that_does_not_evaluate_to_a_bool_rejects_the_crd(raw: Raw) -> None:
    """Issue 28 item 6: ``self.replicas`` (an integer field) is kube's 422 "must evaluate to a bool"
    (the engine sees ``self`` as dynamic; the schema's scalar types decide), so the objects of
    the CRD are never all refused later; comparisons of the same fields still compile."""
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"},
                                         "at": {"type": "string", "format": "date-time"}},
        "x-kubernetes-validations": [{"rule": "self.replicas"}, {"rule": "self.replicas > 1"},
                                     {"rule": "self.name.size()"}, {"rule": "has(self.name) && self.name != ''"},
                                     {"rule": "self.at < timestamp('2030-01-01T00:00:00Z')"},
                                     {"rule": "true", "messageExpression": "self.replicas"}]}}}
    code, _, body = raw.call("POST", CRDS, crd(schema, "NotBool", "notbools"))
    assert code == 422, body
    assert body["message"].startswith(
        f'CustomResourceDefinition.apiextensions.k8s.io "notbools.{GROUP}" is invalid: '
        "[spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
        'apiextensions.ValidationRule{Rule:"self.replicas", Message:"", MessageExpression:"", '
        "Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: "
        "cel expression must evaluate to a bool, "), body["message"]
    causes = [(c["field"].rsplit(".", 2)[-2:], c["message"].rsplit(": ", 1)[-1]) for c in body["details"]["causes"]]
    assert causes == [(["x-kubernetes-validations[0]", "rule"], "cel expression must evaluate to a bool"),
                      (["x-kubernetes-validations[2]", "rule"], "cel expression must evaluate to a bool"),
                      (["x-kubernetes-validations[5]", "messageExpression"], "must evaluate to a string")]
    assert raw.call("GET", f"{CRDS}/notbools.{GROUP}")[0] == 404


def pairs_schema(max_items: int) -> dict[str, Any]:
    """``spec.list`` (numbers, ``maxItems``) with an O(n^2) rule: estimated cost 3n^2 + 5n + 2 (kube's
    "O(n^2) loop with numbers", 352 for n = 10)."""
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"list": {
        "type": "array", "maxItems": max_items, "items": {"type": "number"},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, true))"}]}}}}}


LIST_RULE = "spec.validation.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[0].rule"
HINT = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
        "strings are declared)")


def test_a_rule_over_the_cost_budget_rejects_the_crd(raw: Raw) -> None:
    """Issue 28 item 6: the rule's estimated cost (cel-go's estimator, the schema's maxItems) is
    25,001,420 for 2886 items, 2.5 times kube's per-rule limit: 422 with kube's message. Unbounded
    lists and strings also exceed the CRD's total budget; with a bound the CRD is created."""
    code, _, body = raw.call("POST", CRDS, crd(pairs_schema(2886), "Pair", "pairs"))
    assert code == 422, body
    assert body["message"] == (f'CustomResourceDefinition.apiextensions.k8s.io "pairs.{GROUP}" is invalid: '
                               f"{LIST_RULE}: Forbidden: estimated rule cost exceeds budget by factor of 2.5x {HINT}")
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": LIST_RULE, "message": (
        f"Forbidden: estimated rule cost exceeds budget by factor of 2.5x {HINT}")}]
    unbounded = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"names": {
        "type": "array", "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.all(x, x.startsWith('a') && x.contains('b'))"}]}}}}}
    code, _, body = raw.call("POST", CRDS, crd(unbounded, "Pair", "pairs"))
    assert code == 422, body
    names_rule = "spec.validation.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule"
    assert [(c["field"], c["message"].split(" (try")[0]) for c in body["details"]["causes"]] == [
        (names_rule, "Forbidden: estimated rule cost exceeds budget by factor of more than 100x"),
        (names_rule, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
                     "OpenAPIv3 schema"),
        ("spec.validation.openAPIV3Schema", "Forbidden: x-kubernetes-validations estimated rule cost total for "
                                            "entire OpenAPIv3 schema exceeds budget by factor of more than 100x")]
    assert raw.call("GET", f"{CRDS}/pairs.{GROUP}")[0] == 404
    code, _, body = raw.call("POST", CRDS, crd(pairs_schema(1000), "Pair", "pairs"))
    assert code == 201, body
    raw.call("DELETE", f"{CRDS}/pairs.{GROUP}")


PATTERN = "^(" + "|".join(f"x{i:03d}" for i in range(80)) + "|a)*$"  # 406 characters: regex cost 102
MATCHES = f"self.matches('{PATTERN}')"


def matched_schema(fields: int) -> dict[str, Any]:
    """``spec.f0``..``f<n-1>``: strings of up to 100,000 characters matched against a 406-character
    regex, each rule estimated at 4,080,103 (under the per-rule limit: the CRD is accepted). One
    evaluation costs ceil((1 + length) / 10) * 102 + 1, as cel-go's runtime tracker counts it."""
    strings = {f"f{i}": {"type": "string", "maxLength": 100000, "x-kubernetes-validations": [{"rule": MATCHES}]}
               for i in range(fields)}
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": strings}}}


def test_runtime_cost_limits(raw: Raw) -> None:
    """Issue 28 item 6, runtime: one evaluation may cost at most 1,000,000 (PerCallLimit) and all
    the rules of one object 10,000,000 (RuntimeCELCostBudget); past either, kube's error and no
    further rule runs. 99,999 characters cost 1,020,001; eleven strings of 92,000 characters
    938,503 each, 10.3 million in all (ten: 9.4 million)."""
    code, _, body = raw.call("POST", CRDS, crd(matched_schema(11), "Matched", "matcheds"))
    assert code == 201, body
    path = f"/apis/{GROUP}/v1/namespaces/default/matcheds"

    def matched(name: str, **strings: int) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/v1", "kind": "Matched", "metadata": {"name": name},
                "spec": {field: "a" * n for field, n in strings.items()}}

    try:
        code, _, body = raw.call("POST", path, matched("small", f0=1000, f1=50000))
        assert code == 201, body
        code, _, body = raw.call("POST", path, matched("big", f0=99999))
        assert code == 422, body
        assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [(
            "spec.f0", "Invalid value: \"string\": 'operation cancelled: actual cost limit exceeded': no further "
            f"validation rules will be run due to call cost exceeds limit for rule: {MATCHES}")]
        code, _, body = raw.call("POST", path, matched("many", **{f"f{i}": 92000 for i in range(11)}))
        assert code == 422, body
        (cause,) = body["details"]["causes"]
        assert cause["field"].startswith("spec.f") and cause["message"] == (
            'Invalid value: "string": validation failed due to running out of cost budget, no further validation '
            "rules will be run"), body
        code, _, body = raw.call("POST", path, matched("fewer", **{f"f{i}": 92000 for i in range(10)}))
        assert code == 201, body
    finally:
        raw.call("DELETE", f"{CRDS}/matcheds.{GROUP}")


@pytest.mark.kubectl
def test_kubectl_apply_of_a_crd_kube_refuses(raw: Raw, server: LocalAPIServer, tmp_path: Path) -> None:
    """``kubectl apply`` of a CRD whose rule costs 1.08 times the budget, and of one whose rule is
    not a bool, fails with kube's messages; the bounded CRD applies."""
    kubectl = make_kubectl(tmp_path, server)
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(crd(pairs_schema(1900), "Duo", "duos")))
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.strip() == (
        f'The CustomResourceDefinition "duos.{GROUP}" is invalid: {LIST_RULE}: Forbidden: estimated rule cost '
        f"exceeds budget by factor of 1.083950x {HINT}"), proc.stderr
    not_bool = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.replicas"}]}}}
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(crd(not_bool, "Duo", "duos")))
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.strip().startswith(
        f'The CustomResourceDefinition "duos.{GROUP}" is invalid: spec.validation.openAPIV3Schema.properties[spec].'
        "x-kubernetes-validations[0].rule: Invalid value: "), proc.stderr
    assert proc.stderr.strip().endswith(": cel expression must evaluate to a bool"), proc.stderr
    proc = kubectl("apply", "-f", "-", stdin=json.dumps(crd(pairs_schema(1000), "Duo", "duos")))
    assert proc.returncode == 0, proc.stderr
    assert raw.call("DELETE", f"{CRDS}/duos.{GROUP}")[0] == 200


# ---------------------------------------------------------------------------- a real CRD: Gateway API HTTPRoute

TESTDATA = Path(__file__).parent / "testdata" / "gateway-api"
ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes"


@pytest.fixture(scope="module")
def httproutes(raw: Raw) -> str:
    text = lzma.decompress((TESTDATA / "gateway.networking.k8s.io_httproutes.yaml.xz").read_bytes())
    code, _, body = raw.call("POST", CRDS, k8syaml.load(text))
    assert code == 201, body
    return ROUTES


def route(name: str, **rule: Any) -> dict[str, Any]:
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": name},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": [rule]}}


def test_gateway_api_httproute_rules(raw: Raw, httproutes: str) -> None:
    ok = route("ok", matches=[{"path": {"type": "PathPrefix", "value": "/api"}}],
               backendRefs=[{"name": "svc", "port": 80}], timeouts={"request": "10s", "backendRequest": "5s"})
    code, _, body = raw.call("POST", httproutes, ok)
    assert code == 201, body
    assert body["spec"]["rules"][0]["matches"][0]["path"] == {"type": "PathPrefix", "value": "/api"}

    body = rejected(raw, httproutes, route("relative", matches=[{"path": {"type": "PathPrefix", "value": "api"}}]))
    assert body["message"] == (
        'HTTPRoute.gateway.networking.k8s.io "relative" is invalid: spec.rules[0].matches[0].path: Invalid value: '
        "\"object\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']")

    redirect = route("redirect", backendRefs=[{"name": "svc", "port": 80}],
                     filters=[{"type": "RequestRedirect", "requestRedirect": {"scheme": "https"}}])
    body = rejected(raw, httproutes, redirect)
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.rules[0]", "message":
                                          'Invalid value: "object": RequestRedirect filter must not be used '
                                          "together with backendRefs"}]

    slow = route("slow", backendRefs=[{"name": "svc", "port": 80}], timeouts={"request": "1s", "backendRequest": "5s"})
    body = rejected(raw, httproutes, slow)
    assert body["details"]["causes"][0]["field"] == "spec.rules[0].timeouts"
    assert body["details"]["causes"][0]["message"].endswith("backendRequest timeout cannot be longer than request timeout")


def test_a_rule_selecting_an_undeclared_field_rejects_the_crd(raw: Raw) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}},
                                                        "x-kubernetes-validations": [{"rule": "self.replica > 0"}]}}}
    code, _, body = raw.call("POST", CRDS, crd(schema, "Typo", "typos"))
    assert code == 422, body
    assert body["details"]["causes"][0]["message"].endswith(
        "compilation failed: ERROR: <input>:1:5: undefined field 'replica'\n | self.replica > 0\n | ....^")


def test_server_side_apply_is_validated(raw: Raw, widgets: str) -> None:
    name = f"w{next(_names)}"
    body: dict[str, Any] = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"minReplicas": 4, "maxReplicas": 3}}
    code, _, status = raw.call("PATCH", f"{widgets}/{name}?fieldManager=test", body,
                               ctype="application/apply-patch+yaml")
    assert code == 422 and status["message"].endswith(
        'spec: Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas'), status
    body["spec"]["maxReplicas"] = 5
    code, _, status = raw.call("PATCH", f"{widgets}/{name}?fieldManager=test", body,
                               ctype="application/apply-patch+yaml")
    assert code == 201, status
    body["spec"]["minReplicas"] = 2
    code, _, status = raw.call("PATCH", f"{widgets}/{name}?fieldManager=test", body,
                               ctype="application/apply-patch+yaml")
    assert code == 422 and "spec.minReplicas: Forbidden: minReplicas is immutable" in status["message"], status
