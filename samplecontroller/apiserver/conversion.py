"""Conversion between the served versions of a built-in kind that Kubernetes stores in another
version: HorizontalPodAutoscalers are stored as ``autoscaling/v2`` and also served as
``autoscaling/v1`` (what ``kubectl autoscale`` up to 1.32 writes), after
kubernetes pkg/apis/autoscaling/v1/conversion.go (the CPU utilization target and metric; other
v2 metrics have no v1 field and are not carried through v1).

``storage_version(res)`` names the version objects of ``res`` are kept in (``None``: the served
one); ``to_storage`` and ``from_storage`` convert a whole object (returning a new dict, never
mutating the argument) and leave other kinds alone.
"""

from __future__ import annotations

from typing import Any

__all__ = ["from_storage", "storage_version", "to_storage"]

_HPA = ("autoscaling", "HorizontalPodAutoscaler")


def storage_version(group: str, version: str, kind: str) -> str | None:
    """The version a served group/version/kind is stored in when it differs, else None."""
    return "v2" if (group, kind) == _HPA and version == "v1" else None


def _cpu_metric(utilization: int, current: bool) -> dict[str, Any]:
    key = "current" if current else "target"
    value: dict[str, Any] = {"averageUtilization": utilization}
    if not current:
        value["type"] = "Utilization"
    return {"type": "Resource", "resource": {"name": "cpu", key: value}}


def to_storage(obj: Any) -> Any:
    """An ``autoscaling/v1`` HorizontalPodAutoscaler as ``autoscaling/v2`` (others, and bodies that
    are not objects, unchanged: the handlers reject those)."""
    if not isinstance(obj, dict) or obj.get("apiVersion") != "autoscaling/v1" or (
            obj.get("kind") not in (None, "HorizontalPodAutoscaler")):
        return obj
    out = {**obj, "apiVersion": "autoscaling/v2"}
    spec = dict(obj.get("spec") or {}) if isinstance(obj.get("spec"), dict) else obj.get("spec")
    if isinstance(spec, dict):
        target = spec.pop("targetCPUUtilizationPercentage", None)
        if target is not None:
            spec["metrics"] = [_cpu_metric(target, current=False)]
        out["spec"] = spec
    status = obj.get("status")
    if isinstance(status, dict):
        status = dict(status)
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            status["currentMetrics"] = [_cpu_metric(current, current=True)]
        out["status"] = status
    return out


def _cpu_utilization(metrics: Any, key: str) -> Any:
    for metric in metrics if isinstance(metrics, list) else ():
        resource = metric.get("resource") if isinstance(metric, dict) else None
        if metric.get("type") == "Resource" and isinstance(resource, dict) and resource.get("name") == "cpu":
            value = resource.get(key) or {}
            if "averageUtilization" in value:
                return value["averageUtilization"]
    return None


def from_storage(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """A stored ``autoscaling/v2`` HorizontalPodAutoscaler as ``version`` (others unchanged)."""
    if version != "v1" or obj.get("apiVersion") != "autoscaling/v2" or obj.get("kind") != "HorizontalPodAutoscaler":
        return obj
    out = {**obj, "apiVersion": "autoscaling/v1"}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        new_spec = {k: v for k, v in spec.items() if k not in ("metrics", "behavior")}
        target = _cpu_utilization(spec.get("metrics"), "target")
        if target is not None:
            new_spec["targetCPUUtilizationPercentage"] = target
        out["spec"] = new_spec
    status = obj.get("status")
    if isinstance(status, dict):
        new_status = {k: v for k, v in status.items() if k not in ("currentMetrics", "conditions")}
        new_status.setdefault("currentReplicas", 0)  # non-omitempty in v1
        new_status.setdefault("desiredReplicas", 0)
        current = _cpu_utilization(status.get("currentMetrics"), "current")
        if current is not None:
            new_status["currentCPUUtilizationPercentage"] = current
        out["status"] = new_status
    return out
