"""HorizontalPodAutoscaler validation as kube-apiserver's HPA strategy runs
pkg/apis/autoscaling/validation (``strategies.autoscaling``): each rule's field path, error type
and message, through the kind's strategy (defaulting, then its validation at an emulated
version), as the server runs them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies import apply_defaults, for_kind

_RES = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
_OBJECT: dict[str, Any] = {"type": "Object", "object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
                                         "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}}}


def _hpa(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": dict(_REF), "maxReplicas": 3, **spec}}


def _errors(obj: dict[str, Any], old: dict[str, Any] | None = None, minor: int = 37) -> list[str]:
    obj = copy.deepcopy(obj)
    apply_defaults("autoscaling", "HorizontalPodAutoscaler", obj, old is None)
    strategy = for_kind("autoscaling", "HorizontalPodAutoscaler")
    return [str(e) for e in strategy.validate(_RES, obj, None) + strategy.validate_gated(_RES, obj, old, minor)]


def _metric(**fields: Any) -> dict[str, Any]:
    return _hpa(metrics=[fields])


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("valid", _hpa(minReplicas=2, metrics=[_OBJECT], behavior={"scaleUp": {"tolerance": "50m"}}), []),
    ("negative minReplicas", _hpa(minReplicas=-1),
     ["spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("maxReplicas 0", _hpa(maxReplicas=0, minReplicas=1),
     ["spec.maxReplicas: Invalid value: 0: must be greater than 0",
      "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]),
    ("max below min", _hpa(minReplicas=5),
     ["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]),
    ("scale to zero without an Object or External metric", _hpa(minReplicas=0),
     ["spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to "
      "zero replicas"]),
    ("scale to zero with an Object metric", _hpa(minReplicas=0, metrics=[_OBJECT]), []),
    ("scaleTargetRef without a group", _hpa(scaleTargetRef={"kind": "Deployment", "name": "web", "apiVersion": "v1"}),
     ['spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group']),
    ("a ReplicationController needs no group",
     _hpa(scaleTargetRef={"kind": "ReplicationController", "name": "rc", "apiVersion": "v1"}), []),
    ("scaleTargetRef bad", _hpa(scaleTargetRef={"kind": "", "name": "a/b", "apiVersion": "a/b/c"}),
     ["spec.scaleTargetRef.kind: Required value",
      "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
      'spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']),
    # twice, as validateMetricSpec lists it (the message's aggregate shows it once)
    # the schema's Required values are not repeated
    ("scaleTargetRef empty", _hpa(scaleTargetRef={}),
     ["spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value",
      'spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group']),
    ("metric type unknown", _metric(type="Bogus"),
     ['spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", '
      '"Object", "Pods", "Resource"'] * 2),
    ("metric source missing", _metric(type="Pods"),
     ["spec.metrics[0].pods: Required value: must populate information for the given metric source"]),
    ("two metric sources", _metric(type="Resource", resource={
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
        pods={"metric": {"name": "q"}, "target": {"type": "AverageValue", "averageValue": "1"}}),
     ["spec.metrics[0].pods: Forbidden: must populate the given metric source only"]),
    ("resource target", _metric(type="Resource", resource={"name": "cpu", "target": {
        "type": "Bogus", "averageUtilization": 0, "averageValue": "-1"}}),
     ['spec.metrics[0].resource.target.type: Invalid value: "Bogus": must be either Utilization, Value, or '
      "AverageValue",
      'spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive',
      "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
      "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a "
      "target utilization"]),
    ("resource without a target value", _metric(type="Resource", resource={"name": "", "target": {
        "type": "Utilization"}}),
     ["spec.metrics[0].resource.name: Required value: must specify a resource name",
      "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value "
      "or a target utilization"]),
    ("pods metric", _metric(type="Pods", pods={"metric": {"name": ""}, "target": {"type": "Value", "value": "1"}}),
     ["spec.metrics[0].pods.metric.name: Required value: must specify a metric name",
      "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue"]),
    ("external metric", _metric(type="External", external={"metric": {"name": "q"}, "target": {
        "type": "Value", "value": "1", "averageValue": "2"}}),
     ["spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a "
      "per-pod target"]),
    ("object metric", _metric(type="Object", object={"describedObject": {"kind": "Service", "name": "s"},
                                                     "metric": {"name": "q"}, "target": {"type": "Value"}}),
     ["spec.metrics[0].object.target.averageValue: Required value: must set either a target value or "
      "averageValue"]),
    ("container resource", _metric(type="ContainerResource", containerResource={
        "name": "pods", "container": "Bad_Name", "target": {"type": "Utilization", "averageUtilization": 50}}),
     ['spec.metrics[0].containerResource.name: Invalid value: "pods": must be a standard resource for '
      "containers",
      'spec.metrics[0].containerResource.container: Invalid value: "Bad_Name": a lowercase RFC 1123 label must '
      "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
      "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ("container resource names", _hpa(metrics=[
        {"type": "ContainerResource", "containerResource": {
            "name": name, "container": "app", "target": {"type": "Utilization", "averageUtilization": 50}}}
        for name in ("hugepages-2Mi", "example.com/gpu", "foo", "requests.example.com/x")]),
     ['spec.metrics[2].containerResource.name: Invalid value: "foo": must be a standard resource type or fully '
      "qualified",
      'spec.metrics[2].containerResource.name: Invalid value: "foo": must be a standard resource for containers',
      'spec.metrics[3].containerResource.name: Invalid value: "requests.example.com/x": doesn\'t follow '
      "extended resource name standard"]),
    ("behavior defaults fill the policies", _hpa(behavior={"scaleUp": {"stabilizationWindowSeconds": 10}}), []),
    ("behavior rules", _hpa(behavior={"scaleDown": {
        "stabilizationWindowSeconds": 3601, "selectPolicy": "Most", "policies": [],
        "tolerance": "-0.1"}}),
     ["spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
      'spec.behavior.scaleDown.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", '
      '"Min"',
      "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
      'spec.behavior.scaleDown.tolerance: Invalid value: "-0.1": must be greater than or equal to 0']),
    ("behavior policies", _hpa(behavior={"scaleUp": {"stabilizationWindowSeconds": -1, "policies": [
        {"type": "Nodes", "value": 0, "periodSeconds": 1801}]}}),
     ["spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
      'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"',
      "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
      "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hpa_validation(obj: dict[str, Any], expected: list[str]) -> None:
    assert _errors(obj) == expected


def test_min_replicas_zero_follows_the_scale_to_zero_gate() -> None:
    """HPAScaleToZero is beta (on) from 1.37: before, minReplicas 0 is refused unless the stored
    object already has it."""
    zero = _hpa(minReplicas=0, metrics=[_OBJECT])
    assert _errors(zero, minor=36) == ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
    assert _errors(zero, old=zero, minor=36) == []
    assert _errors(zero, minor=37) == []


def test_update_options() -> None:
    """An update that keeps scaleTargetRef's apiVersion and kind does not check its apiVersion;
    Object metrics' versions are not checked once the stored object has an invalid one."""
    legacy = _hpa(scaleTargetRef={"kind": "Deployment", "name": "web", "apiVersion": "extensions/v1/x"})
    assert _errors(legacy, old=legacy) == []
    bad = copy.deepcopy(_OBJECT)
    bad["object"]["describedObject"]["apiVersion"] = "a/b/c"
    stored = _hpa(metrics=[bad])
    assert _errors(stored, old=stored) == []
    assert _errors(stored) == [
        'spec.metrics[0].object.describedObject.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion '
        "string: a/b/c"]


def test_behavior_defaults() -> None:
    """SetDefaults_HorizontalPodAutoscalerBehavior: a behavior's unset rules and fields are the
    defaults (scale-down's stabilization window left unset); set ones, an empty policy list too, stay."""
    obj = _hpa(behavior={"scaleDown": {"policies": []}})
    apply_defaults("autoscaling", "HorizontalPodAutoscaler", obj, True)
    assert obj["spec"]["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"selectPolicy": "Max", "policies": []}}
