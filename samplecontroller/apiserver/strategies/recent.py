"""The fields Kubernetes 1.33-1.37 added to the kinds the server serves: their validation, and
the feature gates that switch them on (kube-apiserver's ``dropDisabledFields``).

``validate_recent(group, kind, obj)`` is what kube-apiserver 1.37's Validate* checks of those
fields (pkg/apis/core/validation, pkg/apis/autoscaling/validation, pkg/apis/discovery/validation,
pkg/apis/storage/validation, pkg/apis/batch/validation), with their field paths:

- a pod spec (a Pod's, or the pod template of a PodTemplate, Deployment, ReplicaSet, DaemonSet,
  StatefulSet, ReplicationController, Job or CronJob): ``recent_pod.validate_pod_spec``
  (``hostnameOverride``, env ``fileKeyRef``, ``lifecycle.stopSignal``, a projected
  ``podCertificate``, an ephemeral container's restart fields);
- HorizontalPodAutoscaler ``behavior.scaleUp/scaleDown.tolerance`` (not negative);
- EndpointSlice ``endpoints[].hints.forNodes`` (at most 8, node names, no duplicates);
- CSIDriver ``nodeAllocatableUpdatePeriodSeconds`` (at least 10) and
  ``serviceAccountTokenInSecrets`` (only with ``tokenRequests``);
- Job ``successPolicy`` (Indexed Jobs; 1-20 rules of ``succeededIndexes``/``succeededCount``),
  ``managedBy`` (a domain-prefixed path of at most 63 characters, immutable: ``JobStrategy``)
  and ``podReplacementPolicy`` (``Failed`` only with a ``podFailurePolicy``).

``drop_disabled(group, kind, obj, old, minor)`` removes, in place, the fields whose feature gate
is off by default at Kubernetes ``1.<minor>`` (``GATES``), unless ``old`` (the stored object of an
update) already uses them, as each kind's strategy does in PrepareForCreate/PrepareForUpdate.
``gated_errors`` checks what depends on the gates and on ``old``: of a pod spec,
``recent_pod.pod_option_errors`` (containers' ``restartPolicy`` and ``restartPolicyRules``, an
env var's sources) under the options kube derives from them; a Service's
``trafficDistribution`` ``PreferSameZone``/``PreferSameNode`` at 1.33.
At the server's own 1.37 ``drop_disabled`` drops only the alpha fields (``lifecycle.stopSignal``,
a Job's ``scheduling``, a pod's ``schedulingGroup`` and ``evictionResponders``, and the 1.37
alphas: volumes' ``defaultUser`` and ``user``, emptyDir ``mode``, probes' ``grpc.mode`` and
``httpGet.protocol``, volume mounts' ``bindMountOptions``, a Node's ``podPreemptionPolicy``);
before 1.37 also a projected ``podCertificate`` and a CSIDriver's
``preventPodSchedulingIfMissing``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from samplecontroller.apiserver.cel.library import parse_quantity
from samplecontroller.apiserver.schema import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from samplecontroller.apiserver.strategies.recent_pod import (
    drop_pod_fields,
    pod_option_errors,
    pod_options,
    validate_pod_spec,
)
from samplecontroller.apiserver.validation import dns1123_subdomain_errors, each_object, get_path

__all__ = ["GATES", "drop_disabled", "gate_enabled", "gated_errors", "pod_spec_paths", "validate_recent"]

Obj = dict[str, Any]

# Feature gate -> the first minor version whose kube-apiserver enables it by default (None: off
# by default through 1.37), from pkg/features/kube_features.go's versioned specs.
GATES: dict[str, int | None] = {
    "HostnameOverride": 35,  # alpha 1.34, beta (on) 1.35
    "ContainerRestartRules": 35,  # alpha 1.34, beta (on) 1.35
    "ContainerStopSignals": None,  # alpha since 1.33
    "EnvFiles": 35,  # alpha 1.34, beta (on) 1.35
    "HPAConfigurableTolerance": 35,  # alpha 1.33, beta (on) 1.35
    "PreferSameTrafficDistribution": 34,  # alpha 1.33, beta (on) 1.34, GA 1.35
    "MutableCSINodeAllocatableCount": 35,  # alpha 1.33, beta (off) 1.34, beta (on) 1.35
    "CSIServiceAccountTokenSecrets": 35,  # beta (on) 1.35
    "WorkloadWithJob": None,  # alpha (Job spec.scheduling)
    "GenericWorkload": None,  # alpha (pod spec.schedulingGroup)
    "EvictionRequestAPI": None,  # alpha (pod spec.evictionResponders)
    "RestartAllContainersOnContainerExits": 36,  # alpha 1.35, beta (on) 1.36 (the RestartAllContainers action)
    "PodCertificateRequest": 37,  # alpha 1.34, beta (off) 1.35, GA (on) 1.37 (projected podCertificate)
    "VolumeLimitScaling": 37,  # alpha 1.35, beta (on) 1.37 (CSIDriver preventPodSchedulingIfMissing)
    # alpha (off) since 1.37:
    "AtomicWriteVolumeUserFields": None,  # volumes' defaultUser, items' and projections' user
    "EmptyDirVolumeMode": None,  # emptyDir mode
    "GRPCContainerProbeTLS": None,  # grpc mode
    "H2CContainerProbe": None,  # httpGet protocol
    "VolumeBindMountOptions": None,  # volumeMounts' bindMountOptions
    "InPlacePodVerticalScalingSchedulerPreemption": None,  # Node spec.podPreemptionPolicy
}


def gate_enabled(gate: str, minor: int) -> bool:
    """Whether ``gate`` is on by default in Kubernetes ``1.<minor>``."""
    since = GATES[gate]
    return since is not None and minor >= since


# ------------------------------------------------------------------------------------ paths


def pod_spec_paths(group: str, kind: str) -> tuple[str, ...] | None:
    """The keys leading to the pod spec inside an object of ``group``/``kind`` (None: it has none)."""
    if (group, kind) == ("", "Pod"):
        return ("spec",)
    if (group, kind) == ("", "PodTemplate"):
        return ("template", "spec")
    if (group, kind) == ("batch", "CronJob"):
        return ("spec", "jobTemplate", "spec", "template", "spec")
    if (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "DaemonSet"),
                         ("apps", "StatefulSet"), ("", "ReplicationController"), ("batch", "Job")):
        return ("spec", "template", "spec")
    return None


def _at(obj: Any, keys: tuple[str, ...]) -> Any:
    return get_path(obj, *keys) if keys else obj


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ------------------------------------------------------------------------------------ validation


def _hpa(obj: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for direction in ("scaleUp", "scaleDown"):
        tolerance = get_path(obj, "spec", "behavior", direction, "tolerance")
        if tolerance is None:
            continue
        field = f"spec.behavior.{direction}.tolerance"
        try:
            value = parse_quantity(str(tolerance))
        except ValueError as err:
            errors.append(invalid(field, tolerance, str(err)))
            continue
        if value < 0:
            errors.append(invalid(field, tolerance, "must be greater than or equal to 0"))
    return errors


_MAX_NODE_HINTS = 8


def _endpoint_slice(obj: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for path, endpoint in each_object(_list(obj.get("endpoints")), "endpoints", errors):
        nodes = _list(get_path(endpoint, "hints", "forNodes"))
        field = f"{path}.hints.forNodes"
        if len(nodes) > _MAX_NODE_HINTS:
            errors.append(too_many(field, len(nodes), _MAX_NODE_HINTS))
            continue
        seen: set[str] = set()
        for npath, node in each_object(nodes, field, errors):
            name = str(node.get("name") or "")
            if name in seen:
                errors.append(duplicate(f"{npath}.name", name))
            seen.add(name)
            errors += [invalid(f"{npath}.name", name, m) for m in dns1123_subdomain_errors(name)]
    return errors


_MIN_ALLOCATABLE_PERIOD = 10


def _csi_driver(obj: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    period = get_path(obj, "spec", "nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and not isinstance(period, bool) and period < _MIN_ALLOCATABLE_PERIOD:
        errors.append(invalid("spec.nodeAllocatableUpdatePeriodSeconds", period,
                              f"must be greater than or equal to {_MIN_ALLOCATABLE_PERIOD} seconds"))
    if get_path(obj, "spec", "serviceAccountTokenInSecrets") is not None \
            and not get_path(obj, "spec", "tokenRequests"):
        errors.append(forbidden("spec.serviceAccountTokenInSecrets",
                                "may only be set when tokenRequests is specified"))
    return errors


_MAX_SUCCESS_RULES = 20
_MAX_MANAGED_BY = 63
_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")


def _indexes_error(text: str, completions: Any) -> str | None:
    """What is wrong with a succeededIndexes value ("1,3-5,7"), if anything."""
    last = -1
    for part in text.split(","):
        found = _INTERVAL.match(part)
        if not found:
            return f"error parsing succeededIndexes: cannot parse {part!r}"
        first, end = int(found.group(1)), int(found.group(2) or found.group(1))
        if end < first:
            return f"error parsing succeededIndexes: {part}: first {first} is greater than last {end}"
        if first <= last:
            return "error parsing succeededIndexes: intervals are not sorted or overlap"
        if isinstance(completions, int) and end >= completions:
            return f"error parsing succeededIndexes: too large index: {end}"
        last = end
    return None


def _success_policy(spec: Mapping[str, Any]) -> list[FieldError]:
    policy = spec.get("successPolicy")
    if not isinstance(policy, Mapping):
        return []
    errors: list[FieldError] = []
    if spec.get("completionMode") != "Indexed":
        errors.append(invalid("spec.successPolicy", "", "requires indexed completion mode"))
    rules = _list(policy.get("rules"))
    if not rules:
        errors.append(required("spec.successPolicy.rules", "at least one rules must be specified when the "
                                                           "successPolicy is specified"))
    if len(rules) > _MAX_SUCCESS_RULES:
        errors.append(too_many("spec.successPolicy.rules", len(rules), _MAX_SUCCESS_RULES))
    completions = spec.get("completions")
    for path, rule in each_object(rules, "spec.successPolicy.rules", errors):
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        if indexes is None and count is None:
            errors.append(required(path, "at least one of succeededCount or succeededIndexes must be specified"))
        if isinstance(indexes, str):
            problem = _indexes_error(indexes, completions)
            if problem is not None:
                errors.append(invalid(f"{path}.succeededIndexes", indexes, problem))
        if isinstance(count, int) and not isinstance(count, bool):
            if count < 0:
                errors.append(invalid(f"{path}.succeededCount", count, "must be greater than or equal to 0"))
            elif isinstance(completions, int) and count > completions:
                errors.append(invalid(f"{path}.succeededCount", count,
                                      f"must be less than or equal to {completions} (the number of specified "
                                      "completions)"))
    return errors


_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def _domain_prefixed_path(field: str, value: str) -> list[FieldError]:
    """apimachinery's IsDomainPrefixedPath."""
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return [invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errors = [invalid(field, host, m) for m in dns1123_subdomain_errors(host)]
    if not _HTTP_PATH.match(path):
        errors.append(invalid(field, path, "Invalid path (regex used for validation is "
                                           "'[A-Za-z0-9/\\-._~%!$&\'()*+,;=:]+')"))
    return errors


def _job(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    errors = _success_policy(spec)
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str):
        if len(managed_by) > _MAX_MANAGED_BY:
            errors.append(too_long("spec.managedBy", _MAX_MANAGED_BY))
        else:
            errors += _domain_prefixed_path("spec.managedBy", managed_by)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if spec.get("podFailurePolicy") is not None and replacement != "Failed":
            errors.append(not_supported("spec.podReplacementPolicy", replacement, ["Failed"]))
        elif replacement not in _REPLACEMENT_POLICIES:
            errors.append(not_supported("spec.podReplacementPolicy", replacement, _REPLACEMENT_POLICIES))
    return errors


_BY_KIND: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[FieldError]]] = {
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("storage.k8s.io", "CSIDriver"): _csi_driver,
    ("batch", "Job"): _job,
}


def validate_recent(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """The errors in the fields Kubernetes 1.33-1.37 added to an object of ``group``/``kind``."""
    if not isinstance(obj, Mapping):
        return []
    errors: list[FieldError] = []
    keys = pod_spec_paths(group, kind)
    if keys is not None:
        errors += validate_pod_spec(_at(obj, keys), ".".join(keys))
    check = _BY_KIND.get((group, kind))
    if check is not None:
        errors += check(obj)
    if (group, kind) == ("batch", "CronJob"):
        errors += [FieldError(e.type, "spec.jobTemplate." + e.field, e.value, e.detail)
                   for e in _job({"spec": get_path(obj, "spec", "jobTemplate", "spec")})]
    return errors


# ------------------------------------------------------------------------------------ gates


def _drop_when(gate: str, minor: int, new: Any, old: Any, *keys: str) -> None:
    """Remove ``new``'s ``keys`` path when ``gate`` is off and ``old`` does not set it."""
    *parents, last = keys
    parent = _at(new, tuple(parents))
    if isinstance(parent, dict) and not gate_enabled(gate, minor) and get_path(old, *keys) is None:
        parent.pop(last, None)


def drop_disabled(group: str, kind: str, obj: Obj, old: Obj | None, minor: int) -> None:
    """Drop, in place, the fields of ``obj`` whose feature gate is off by default in Kubernetes
    ``1.<minor>``, unless the stored ``old`` (an update's; None on create) already uses them."""
    keys = pod_spec_paths(group, kind)
    if keys is not None:
        spec = _at(obj, keys)
        if isinstance(spec, dict):
            drop_pod_fields(spec, _at(old, keys) if old is not None else None, lambda gate: gate_enabled(gate, minor))
    if (group, kind) == ("autoscaling", "HorizontalPodAutoscaler"):
        in_use = any(get_path(old, "spec", "behavior", d, "tolerance") is not None for d in ("scaleUp", "scaleDown"))
        if not in_use:
            for direction in ("scaleUp", "scaleDown"):
                _drop_when("HPAConfigurableTolerance", minor, obj, None, "spec", "behavior", direction, "tolerance")
    elif (group, kind) == ("discovery.k8s.io", "EndpointSlice"):
        in_use = any(get_path(e, "hints", "forNodes") is not None for e in _list(_dict(old).get("endpoints")))
        if not gate_enabled("PreferSameTrafficDistribution", minor) and not in_use:
            for endpoint in _list(obj.get("endpoints")):
                hints = endpoint.get("hints") if isinstance(endpoint, dict) else None
                if isinstance(hints, dict):
                    hints.pop("forNodes", None)
    elif (group, kind) == ("storage.k8s.io", "CSIDriver"):
        for gate, key in (("MutableCSINodeAllocatableCount", "nodeAllocatableUpdatePeriodSeconds"),
                          ("CSIServiceAccountTokenSecrets", "serviceAccountTokenInSecrets"),
                          ("VolumeLimitScaling", "preventPodSchedulingIfMissing")):
            _drop_when(gate, minor, obj, old, "spec", key)
    elif (group, kind) == ("", "Node"):
        _drop_when("InPlacePodVerticalScalingSchedulerPreemption", minor, obj, old, "spec", "podPreemptionPolicy")
    elif (group, kind) == ("batch", "Job"):
        _drop_when("WorkloadWithJob", minor, obj, old, "spec", "scheduling")
    elif (group, kind) == ("batch", "CronJob"):
        _drop_when("WorkloadWithJob", minor, obj, old, "spec", "jobTemplate", "spec", "scheduling")


_SAME_DISTRIBUTIONS = ("PreferSameNode", "PreferSameZone")


def gated_errors(group: str, kind: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                 minor: int) -> list[FieldError]:
    """The rules that depend on the feature gates at Kubernetes ``1.<minor>`` and on ``old`` (an
    update's stored object): of a pod spec, the rules of ``recent_pod.pod_option_errors`` under the
    options of ``recent_pod.pod_options`` (containers' ``restartPolicy`` and restart rules, an env
    var's sources); a Service's ``trafficDistribution`` ``PreferSameZone``/``PreferSameNode``
    before 1.34."""
    keys = pod_spec_paths(group, kind)
    if keys is not None:
        opts = pod_options(_at(old, keys) if old is not None else None, lambda gate: gate_enabled(gate, minor))
        return pod_option_errors(_at(obj, keys), ".".join(keys), opts)
    if (group, kind) != ("", "Service") or gate_enabled("PreferSameTrafficDistribution", minor):
        return []
    value = get_path(obj, "spec", "trafficDistribution")
    if value in _SAME_DISTRIBUTIONS and get_path(old, "spec", "trafficDistribution") not in _SAME_DISTRIBUTIONS:
        return [not_supported("spec.trafficDistribution", value, ["PreferClose"])]
    return []
