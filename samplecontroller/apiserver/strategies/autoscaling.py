"""HorizontalPodAutoscaler validation, as kube-apiserver's HPA strategy and
pkg/apis/autoscaling/validation do (``ValidateHorizontalPodAutoscaler`` and its update):

- ``minReplicas`` at least 1, or 0 where the HPAScaleToZero gate is on at the emulated version
  (beta, on by default from 1.37) or the stored object already has 0; ``maxReplicas`` at least 1
  and not below ``minReplicas``; ``minReplicas: 0`` needs an Object or External metric;
- ``scaleTargetRef``: ``kind`` and ``name`` required path segments, ``apiVersion`` naming an API
  group (but for a ReplicationController; not checked on an update that keeps apiVersion and
  kind); an Object metric's ``describedObject`` likewise, its API group optional;
- each metric: a supported ``type``, exactly the matching source, its metric name, target type
  and values (positive quantities, utilization above 0), the source's required target;
- ``behavior.scaleUp/scaleDown``: stabilization window 0-3600, ``selectPolicy``, at least one
  policy (type, value above 0, period 1-1800), ``tolerance`` not negative.

The objects arrive converted to ``autoscaling/v2`` (``conversion``) and defaulted (a behavior's
rules filled in as SetDefaults_HorizontalPodAutoscalerBehavior does), so an ``autoscaling/v1``
object's fields are checked as they convert, at their v2 paths, as kube checks its internal type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery.quantity import parse_quantity
from samplecontroller.apiserver.objects import as_mapping as _dict
from samplecontroller.apiserver.objects import as_str as _str
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError, forbidden, invalid, not_supported, required
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.strategies.recent import gate_enabled
from samplecontroller.apiserver.validation import (
    dns1123_label_errors,
    path_segment_errors,
    qualified_name_errors,
)

__all__ = ["HorizontalPodAutoscalerStrategy", "validate_hpa"]

# pkg/apis/autoscaling/validation: MaxPeriodSeconds, MaxStabilizationWindowSeconds and the
# sorted sets of supported values
_MAX_PERIOD_SECONDS = 1800
_MAX_STABILIZATION_WINDOW_SECONDS = 3600
_METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SELECT_POLICIES = ("Disabled", "Max", "Min")
_POLICY_TYPES = ("Percent", "Pods")
_TARGET_TYPES = ("Utilization", "Value", "AverageValue")
# pkg/apis/core/helper: standardContainerResources and standardResources (IsStandardResourceName
# also takes the quota hugepages names, IsStandardContainerResourceName the hugepages ones)
_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = _CONTAINER_RESOURCES | frozenset({
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage", "pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
    "configmaps", "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers"})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _sign(value: Any) -> int | None:
    """The sign of a quantity (None: not one; decoding refuses those before)."""
    try:
        return parse_quantity(str(value)).sign()
    except ValueError:
        return None


def _api_version_error(api_version: str, allow_empty_group: bool) -> str | None:
    """ValidateAPIVersion: schema.ParseGroupVersion's error, or a missing API group."""
    if api_version in ("", "/") or api_version.count("/") == 0:
        group = ""
    elif api_version.count("/") == 1:
        group = api_version.split("/", 1)[0]
    else:
        return f"unexpected GroupVersion string: {api_version}"
    if not allow_empty_group and not group:
        return "apiVersion must specify API group"
    return None


def _reference(ref: Mapping[str, Any], path: str, allow_empty_group: bool,
               allow_invalid_version: bool) -> list[FieldError]:
    """ValidateCrossVersionObjectReference."""
    errors: list[FieldError] = []
    for key in ("kind", "name"):
        value = _str(ref.get(key))
        if not value:
            errors.append(required(f"{path}.{key}"))
        else:
            errors += [invalid(f"{path}.{key}", value, m) for m in path_segment_errors(value)]
    if not allow_invalid_version:
        version = _str(ref.get("apiVersion"))
        message = _api_version_error(version, allow_empty_group)
        if message is not None:
            errors.append(invalid(f"{path}.apiVersion", version, message))
    return errors


def _target(target: Mapping[str, Any], path: str) -> list[FieldError]:
    """validateMetricTarget."""
    errors: list[FieldError] = []
    kind = _str(target.get("type"))
    if not kind:
        errors.append(required(f"{path}.type", "must specify a metric target type"))
    if kind not in _TARGET_TYPES:
        errors.append(invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        value = target.get(key)
        if value is not None and _sign(value) != 1:
            errors.append(invalid(f"{path}.{key}", value, "must be positive"))
    utilization = _int(target.get("averageUtilization"))
    if utilization is not None and utilization < 1:
        errors.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errors


def _metric_name(metric: Mapping[str, Any], path: str) -> list[FieldError]:
    """validateMetricIdentifier."""
    name = _str(metric.get("name"))
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return [invalid(f"{path}.name", name, m) for m in path_segment_errors(name)]


def _container_resource_name(name: str, path: str) -> list[FieldError]:
    """core/v1 validation validateContainerResourceName (after validateResourceName)."""
    errors = [invalid(path, name, m) for m in qualified_name_errors(name)]
    if not errors and "/" not in name and name not in _STANDARD_RESOURCES and not name.startswith(
            ("hugepages-", "requests.hugepages-")):
        errors.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name:
        if name not in _CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errors.append(invalid(path, name, "must be a standard resource for containers"))
    elif "kubernetes.io/" not in name and (name.startswith("requests.") or qualified_name_errors("requests." + name)):
        # neither IsNativeResource nor IsExtendedResourceName
        errors.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errors


def _source(kind: str, src: Mapping[str, Any], path: str, allow_invalid_version: bool) -> list[FieldError]:
    """validateObjectSource, validateExternalSource, validatePodsSource, validateResourceSource
    and validateContainerResourceSource."""
    errors: list[FieldError] = []
    target = _dict(src.get("target"))
    tpath = f"{path}.target"
    if kind == "object":
        errors += _reference(_dict(src.get("describedObject")), f"{path}.describedObject", True,
                             allow_invalid_version)
    if kind in ("object", "external", "pods"):
        errors += _metric_name(_dict(src.get("metric")), f"{path}.metric")
    else:
        name = _str(src.get("name"))
        if not name:
            errors.append(required(f"{path}.name", "must specify a resource name"))
        elif kind == "containerResource":
            errors += _container_resource_name(name, f"{path}.name")
        if kind == "containerResource":
            container = _str(src.get("container"))
            if not container:
                errors.append(required(f"{path}.container", "must specify a container"))
            else:
                errors += [invalid(f"{path}.container", container, m) for m in dns1123_label_errors(container)]
    errors += _target(target, tpath)
    value, average = target.get("value"), target.get("averageValue")
    if kind == "object" and value is None and average is None:
        errors.append(required(f"{tpath}.averageValue", "must set either a target value or averageValue"))
    elif kind == "external":
        if value is None and average is None:
            errors.append(required(f"{tpath}.averageValue",
                                   "must set either a target value for metric or a per-pod target"))
        if value is not None and average is not None:
            errors.append(forbidden(f"{tpath}.value", "may not set both a target value for metric and a per-pod target"))
    elif kind == "pods" and average is None:
        errors.append(required(f"{tpath}.averageValue", "must specify a positive target averageValue"))
    elif kind in ("resource", "containerResource"):
        utilization = target.get("averageUtilization")
        if utilization is None and average is None:
            errors.append(required(f"{tpath}.averageUtilization",
                                   "must set either a target raw value or a target utilization"))
        if utilization is not None and average is not None:
            errors.append(forbidden(f"{tpath}.averageValue",
                                    "may not set both a target raw value and a target utilization"))
    return errors


_SOURCES = ("object", "external", "pods", "resource", "containerResource")
_EXPECTED = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
             "ContainerResource": "containerResource"}


def _metric(spec: Mapping[str, Any], path: str, allow_invalid_version: bool) -> list[FieldError]:
    """validateMetricSpec."""
    errors: list[FieldError] = []
    kind = _str(spec.get("type"))
    if not kind:
        errors.append(required(f"{path}.type", "must specify a metric source type"))
    if kind not in _METRIC_TYPES:
        errors.append(not_supported(f"{path}.type", kind, _METRIC_TYPES))
    present: list[str] = []
    for key in _SOURCES:
        if spec.get(key) is not None:
            present.append(key)
            if len(present) == 1:
                errors += _source(key, _dict(spec.get(key)), f"{path}.{key}", allow_invalid_version)
    expected = _EXPECTED.get(kind, "")
    if expected and spec.get(expected) is None:
        errors.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    elif not expected:
        errors.append(not_supported(f"{path}.type", kind, _METRIC_TYPES))
    if len(present) != 1:
        # Go ranges over a set here: its order is random; sorted, as the tests of kube compare
        errors += [forbidden(f"{path}.{key}", "must populate the given metric source only")
                   for key in sorted(present) if key != expected]
    return errors


def _scaling_rules(rules: Mapping[str, Any], path: str) -> list[FieldError]:
    """validateScalingRules and validateScalingPolicy."""
    errors: list[FieldError] = []
    window = _int(rules.get("stabilizationWindowSeconds"))
    if window is not None and window < 0:
        errors.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > _MAX_STABILIZATION_WINDOW_SECONDS:
        errors.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                              f"must be less than or equal to {_MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        errors.append(not_supported(f"{path}.selectPolicy", select, _SELECT_POLICIES))
    policies = rules.get("policies")
    policies = policies if isinstance(policies, list) else []
    if not policies:
        errors.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        ppath, policy = f"{path}.policies[{i}]", _dict(policy)
        kind = _str(policy.get("type"))
        if kind not in _POLICY_TYPES:
            errors.append(not_supported(f"{ppath}.type", kind, _POLICY_TYPES))
        value, period = _int(policy.get("value")) or 0, _int(policy.get("periodSeconds")) or 0
        if value <= 0:
            errors.append(invalid(f"{ppath}.value", value, "must be greater than zero"))
        if period <= 0:
            errors.append(invalid(f"{ppath}.periodSeconds", period, "must be greater than zero"))
        if period > _MAX_PERIOD_SECONDS:
            errors.append(invalid(f"{ppath}.periodSeconds", period,
                                  f"must be less than or equal to {_MAX_PERIOD_SECONDS}"))
    tolerance = rules.get("tolerance")
    if tolerance is not None:
        try:
            negative = parse_quantity(str(tolerance)).sign() < 0
        except ValueError as err:
            errors.append(invalid(f"{path}.tolerance", tolerance, str(err)))
        else:
            if negative:
                errors.append(invalid(f"{path}.tolerance", tolerance, "must be greater than or equal to 0"))
    return errors


def _version_invalid(ref: Mapping[str, Any], allow_empty_group: bool) -> bool:
    return _api_version_error(_str(ref.get("apiVersion")), allow_empty_group) is not None


def validate_hpa(obj: Mapping[str, Any], old: Mapping[str, Any] | None, minor: int) -> list[FieldError]:
    """ValidateHorizontalPodAutoscaler (``old`` None) or ValidateHorizontalPodAutoscalerUpdate of
    ``obj`` at Kubernetes ``1.<minor>``, with the options the strategy derives
    (validationOptionsForHorizontalPodAutoscaler)."""
    spec, old_spec = _dict(obj.get("spec")), _dict(_dict(old).get("spec"))
    lower = 0 if gate_enabled("HPAScaleToZero", minor) or (old is not None and old_spec.get("minReplicas") == 0) else 1
    ref, old_ref = _dict(spec.get("scaleTargetRef")), _dict(old_spec.get("scaleTargetRef"))
    skip_ref_version = old is not None and (ref.get("apiVersion"), ref.get("kind")) == (
        old_ref.get("apiVersion"), old_ref.get("kind"))
    skip_metric_versions = any(
        m.get("type") == "Object" and m.get("object") is not None
        and _version_invalid(_dict(_dict(m.get("object")).get("describedObject")), True)
        for m in (_dict(x) for x in (old_spec.get("metrics") or []) if isinstance(x, Mapping)))
    errors: list[FieldError] = []
    min_replicas, max_replicas = _int(spec.get("minReplicas")), _int(spec.get("maxReplicas")) or 0
    if min_replicas is not None and min_replicas < lower:
        errors.append(invalid("spec.minReplicas", min_replicas, f"must be greater than or equal to {lower}"))
    if max_replicas < 1:
        errors.append(invalid("spec.maxReplicas", max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        errors.append(invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
    errors += _reference(ref, "spec.scaleTargetRef", ref.get("kind") == "ReplicationController", skip_ref_version)
    metrics = spec.get("metrics")
    metrics = metrics if isinstance(metrics, list) else []
    for i, metric in enumerate(metrics):
        errors += _metric(_dict(metric), f"spec.metrics[{i}]", skip_metric_versions)
    if min_replicas == 0 and not any(_dict(m).get("type") in ("Object", "External") for m in metrics):
        errors.append(forbidden("spec.metrics",
                                "must specify at least one Object or External metric to support scaling to zero replicas"))
    behavior = spec.get("behavior")
    if isinstance(behavior, Mapping):
        for direction in ("scaleUp", "scaleDown"):
            rules = behavior.get(direction)
            if isinstance(rules, Mapping):
                errors += _scaling_rules(rules, f"spec.behavior.{direction}")
    return errors


class HorizontalPodAutoscalerStrategy(Strategy):
    """The HPA strategy's Validate and ValidateUpdate (their options depend on the emulated
    version's HPAScaleToZero gate and on the stored object): all of it in ``validate_gated``,
    kube's errors in kube's order, then the schema's that kube's do not repeat (a missing
    ``scaleTargetRef.kind`` is one error, not two)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return []

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        own = validate_hpa(obj, old, minor)
        schema = super().validate(res, obj, None) + super().validate_gated(res, obj, old, minor)
        return own + [e for e in schema if e not in own]

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        """The schema's checks of the whole object (stricter than kube's status rules)."""
        return super().validate(res, obj, sch)
