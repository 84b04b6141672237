"""The fields Kubernetes 1.33-1.37 added to the kinds the server serves: their validation, and
the feature gates that switch them on (kube-apiserver's ``dropDisabledFields``).

``validate_recent(group, kind, obj)`` is what kube-apiserver 1.37's Validate* checks of those
fields (pkg/apis/core/validation, pkg/apis/autoscaling/validation, pkg/apis/discovery/validation,
pkg/apis/storage/validation, pkg/apis/batch/validation), with their field paths:

- a pod spec (a Pod's, or the pod template of a PodTemplate, Deployment, ReplicaSet, DaemonSet,
  StatefulSet, ReplicationController, Job or CronJob): ``recent_pod.validate_pod_spec``
  (``hostnameOverride``, env ``fileKeyRef``, ``lifecycle.stopSignal``, a projected
  ``podCertificate``, an ephemeral container's restart fields);
- (a HorizontalPodAutoscaler's ``behavior.scaleUp/scaleDown.tolerance``, not negative, is checked
  with the rest of its validation: ``autoscaling``);
- EndpointSlice ``endpoints[].hints.forNodes`` (at most 8, node names, no duplicates);
- CSIDriver ``nodeAllocatableUpdatePeriodSeconds`` (at least 10) and
  ``serviceAccountTokenInSecrets`` (only with ``tokenRequests``);
- Job ``successPolicy`` (Indexed Jobs; 1-20 rules of ``succeededIndexes``/``succeededCount``,
  kube's index parse messages), ``managedBy`` (a domain-prefixed path of at most 63 characters)
  and ``podReplacementPolicy`` (``Failed`` only with a ``podFailurePolicy``); their immutability
  is ``kinds.JobStrategy``'s.

``drop_disabled(group, kind, obj, old, minor)`` removes, in place, the fields whose feature gate
is off by default at Kubernetes ``1.<minor>`` (``GATES``), unless ``old`` (the stored object of an
update) already uses them, as each kind's strategy does in PrepareForCreate/PrepareForUpdate
(a claim's data sources are also prepared there: ``claims``); ``drop_disabled_status`` does the
same for status writes (a Deployment's or ReplicaSet's ``terminatingReplicas``).
``gated_errors`` checks what depends on the gates and on ``old``: of a pod spec,
``recent_pod.pod_option_errors`` (containers' ``restartPolicy`` and ``restartPolicyRules``, an
env var's sources) under the options kube derives from them; a Service's
``trafficDistribution`` ``PreferSameZone``/``PreferSameNode`` at 1.33.
At the server's own 1.37 ``drop_disabled`` drops only the alpha fields (``lifecycle.stopSignal``,
a Job's ``scheduling``, a pod's ``schedulingGroup`` and ``evictionResponders``, and the 1.37
alphas: volumes' ``defaultUser`` and ``user``, emptyDir ``mode``, probes' ``grpc.mode`` and
``httpGet.protocol``, volume mounts' ``bindMountOptions``, a Node's ``podPreemptionPolicy``);
before 1.37 also a projected ``podCertificate`` and ``clusterTrustBundle`` and a CSIDriver's
``preventPodSchedulingIfMissing`` and a StatefulSet's ``maxUnavailable`` (from 1.37 defaulted to
1); before 1.36 a Pod's status ``resources``,
``allocatedResources``, ``extendedResourceClaimStatus`` and containers'
``allocatedResourcesStatus``; before 1.35 ``image`` volumes (with their mounts); before 1.34 a
pod spec's ``resources``, ``resourceClaims`` and containers' ``resources.claims``, a Pod's
status ``resourceClaimStatuses`` and ``observedGeneration`` (its conditions' too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeGuard

from samplecontroller.apiserver.objects import as_list as _list
from samplecontroller.apiserver.objects import as_mapping as _dict
from samplecontroller.apiserver.schema import (
    FieldError,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from samplecontroller.apiserver.strategies.claims import prepare_claim_spec
from samplecontroller.apiserver.strategies.recent_pod import (
    drop_pod_fields,
    drop_pod_status_fields,
    pod_option_errors,
    pod_options,
    validate_pod_spec,
)
from samplecontroller.apiserver.validation import dns1123_subdomain_errors, each_object, get_path

__all__ = ["GATES", "drop_disabled", "drop_disabled_status", "gate_enabled", "gated_errors", "pod_spec_paths", "validate_recent"]

Obj = dict[str, Any]

# Feature gate -> the first minor version whose kube-apiserver enables it by default (None: off
# by default through 1.37), from kube's versioned feature specs. Sources (checked against kube's
# own files; the search index holds no 1.36/1.37 pkg/features/kube_features.go, so for the
# stages after 1.35 the website's per-gate pages of 1.36/1.37, whose ``stages`` are kube's
# versioned specs, are the source):
# - pkg/features/kube_features.go of 1.35 (HostnameOverride, ContainerRestartRules,
#   ContainerStopSignals, HPAConfigurableTolerance, MutableCSINodeAllocatableCount,
#   CrossNamespaceVolumeDataSource);
# - the 1.37 scheduling/DRA feature file (GenericWorkload, VolumeLimitScaling, DRADerivedAttributes,
#   VolumeAttributesClass, InPlacePodVerticalScalingSchedulerPreemption);
# - kubernetes/website content/en/docs/reference/command-line-tools-reference/feature-gates/
#   <Gate>.md (EnvFiles, PreferSameTrafficDistribution, CSIServiceAccountTokenSecrets,
#   WorkloadWithJob, RestartAllContainersOnContainerExits, PodCertificateRequest and the 1.37
#   alphas, DeploymentReplicaSetTerminatingReplicas); EvictionRequestAPI: only its alpha API
#   (lifecycle v1alpha1) registration was found.
GATES: dict[str, int | None] = {
    "HostnameOverride": 35,  # alpha 1.34, beta (on) 1.35
    "ContainerRestartRules": 35,  # alpha 1.34, beta (on) 1.35
    "ContainerStopSignals": None,  # alpha since 1.33
    "EnvFiles": 35,  # alpha 1.34, beta (on) 1.35
    "HPAConfigurableTolerance": 35,  # alpha 1.33, beta (on) 1.35
    "PreferSameTrafficDistribution": 34,  # alpha 1.33, beta (on) 1.34, GA 1.35
    "MutableCSINodeAllocatableCount": 35,  # alpha 1.33, beta (off) 1.34, beta (on) 1.35
    "CSIServiceAccountTokenSecrets": 35,  # beta (on) 1.35, GA 1.36
    "WorkloadWithJob": None,  # alpha 1.36 (Job spec.scheduling)
    "GenericWorkload": None,  # alpha 1.35, beta (off) 1.37 (pod spec.schedulingGroup)
    "EvictionRequestAPI": None,  # alpha (pod spec.evictionResponders)
    "RestartAllContainersOnContainerExits": 36,  # alpha 1.35, beta (on) 1.36 (the RestartAllContainers action)
    "PodCertificateRequest": 37,  # alpha 1.34, beta (off) 1.35, GA (on) 1.37 (projected podCertificate)
    "VolumeLimitScaling": 37,  # alpha 1.35, beta (on) 1.37 (CSIDriver preventPodSchedulingIfMissing)
    # alpha 1.29, beta (off) 1.31, GA (on) 1.34: PersistentVolume(Claim) spec.volumeAttributesClassName
    "VolumeAttributesClass": 34,
    # alpha 1.37: ResourceClaim(Template) requests' derivedAttributes
    # (pkg/registry/resource/resourceclaim strategy: dropped on create, and on update unless in use)
    "DRADerivedAttributes": None,
    # alpha since 1.26: a PersistentVolumeClaim dataSourceRef's namespace
    "CrossNamespaceVolumeDataSource": None,
    # alpha 1.33, beta (on) 1.35: Deployment and ReplicaSet status.terminatingReplicas
    "DeploymentReplicaSetTerminatingReplicas": 35,
    # alpha (off) since 1.37:
    "AtomicWriteVolumeUserFields": None,  # volumes' defaultUser, items' and projections' user
    "EmptyDirVolumeMode": None,  # emptyDir mode
    "GRPCContainerProbeTLS": None,  # grpc mode
    "H2CContainerProbe": None,  # httpGet protocol
    "VolumeBindMountOptions": None,  # volumeMounts' bindMountOptions
    "InPlacePodVerticalScalingSchedulerPreemption": None,  # Node spec.podPreemptionPolicy
    # The pod's gates whose default changed between 1.33 and 1.37, from the versioned specs of
    # the 1.37 pkg/features/kube_features.go vendored in kubernetes-sigs/provider-aws-test-infra
    # d4b7e697901a480895de8d2b0a83f4a887045038 (line of each gate's entry); their drops are
    # pkg/api/pod/util.go's (1.35: ``recent_pod.drop_pod_fields``, ``drop_pod_status_fields``):
    "DynamicResourceAllocation": 34,  # line 1579: beta (off) 1.32, GA (on) 1.34
    "PodLevelResources": 34,  # line 1965: alpha 1.32, beta (on) 1.34
    "ImageVolume": 35,  # line 1682: beta (off) 1.33, beta (on) 1.35, GA 1.36
    "ClusterTrustBundleProjection": 37,  # line 1423: beta (off) 1.33, GA (on) 1.37
    "PodObservedGenerationTracking": 34,  # line 1982: alpha 1.33, beta (on) 1.34, GA 1.35
    "InPlacePodLevelResourcesVerticalScaling": 36,  # line 1693: alpha 1.35, beta (on) 1.36
    "DRAExtendedResource": 36,  # line 1487: alpha 1.34, beta (on) 1.36, GA 1.37
    "ResourceHealthStatus": 36,  # line 2068: alpha 1.31, beta (on) 1.36
    # line 1839: alpha 1.24, beta (off) 1.35, beta (on) 1.37: a StatefulSet's
    # spec.updateStrategy.rollingUpdate.maxUnavailable (pkg/registry/apps/statefulset strategy.go
    # dropStatefulSetDisabledFields; pkg/apis/apps/v1 defaults.go SetDefaults_StatefulSet)
    "MaxUnavailableStatefulSet": 37,
    # line 1661: alpha 1.16, beta (on) 1.37: an HPA's minReplicas 0 (``autoscaling``)
    "HPAScaleToZero": 37,
    # resource.k8s.io (served from 1.34), lines 1481, 1457, 1466, 1510: alpha (off) 1.33/1.34,
    # beta (on) 1.36 (see ``_drop_dra``)
    "DRADeviceTaints": 36,
    "DRAConsumableCapacity": 36,
    "DRADeviceBindingConditions": 36,
    "DRAPartitionableDevices": 36,
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


# ------------------------------------------------------------------------------------ validation


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
    in_secrets = get_path(obj, "spec", "serviceAccountTokenInSecrets")
    if in_secrets is not None and not get_path(obj, "spec", "tokenRequests"):
        errors.append(invalid("spec.serviceAccountTokenInSecrets", in_secrets,
                              "serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
    return errors


# pkg/apis/batch/validation/validation.go: maxSuccessPolicyRule, maxManagedByLength,
# maxJobSuccessPolicySucceededIndexesLimit, supportedPodReplacementPolicy (sorted).
_MAX_SUCCESS_RULES = 20
_MAX_MANAGED_BY = 63
_MAX_SUCCEEDED_INDEXES = 64 * 1024
_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
_GO_INT = re.compile(r"^[+-]?[0-9]+$")
_GO_INT_MAX = 2**63 - 1


def _go_quote(text: str) -> str:
    """Go's ``%q`` of ``text`` (a JSON string for printable text)."""
    return json.dumps(text, ensure_ascii=False)


def _atoi(text: str) -> int | None:
    """strconv.Atoi: an optional sign and decimal digits within int64 (None: an error)."""
    if not _GO_INT.match(text):
        return None
    value = int(text)
    return value if -_GO_INT_MAX - 1 <= value <= _GO_INT_MAX else None


def _index_interval(part: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval: ``x`` or ``x-y`` below ``completions``; ValueError with kube's message."""
    limits = part.split("-")
    if len(limits) > 2:
        raise ValueError(f"the fragment {_go_quote(part)} violates the requirement that an index interval can "
                         "have at most two parts separated by '-'")
    bounds: list[int] = []
    for limit in limits:
        value = _atoi(limit)
        if value is None:
            raise ValueError(f"cannot convert string to integer for index: {_go_quote(limit)}")
        if value >= completions:
            raise ValueError(f"too large index: {_go_quote(limit)}")
        bounds.append(value)
    first, last = bounds[0], bounds[-1]
    if len(bounds) == 2 and first >= last:
        raise ValueError(f"non-increasing order, previous: {first}, current: {last}")
    return first, last


def _indexes_total(text: str, completions: int) -> int:
    """validateIndexesFormat: how many indexes ``text`` ("1,3-5,7") names; ValueError with kube's
    message when it is not a sorted list of intervals below ``completions``."""
    if not text:
        return 0
    previous: int | None = None
    total = 0
    for part in text.split(","):
        first, last = _index_interval(part, completions)
        if previous is not None and previous >= first:
            raise ValueError(f"non-increasing order, previous: {previous}, current: {first}")
        total += last - first + 1
        previous = last
    return total


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _success_rule(rule: Mapping[str, Any], path: str, completions: Any) -> list[FieldError]:
    """validateSuccessPolicyRule. kube dereferences ``completions`` here (an Indexed Job without
    completions is already refused with ``spec.completions: Required value``); without it the checks
    against it are skipped."""
    errors: list[FieldError] = []
    indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
    if count is None and indexes is None:
        errors.append(required(path, "at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if isinstance(indexes, str):
        if len(indexes.encode()) > _MAX_SUCCEEDED_INDEXES:
            errors.append(too_long(f"{path}.succeededIndexes", _MAX_SUCCEEDED_INDEXES))
        if _is_int(completions):
            try:
                total = _indexes_total(indexes, completions)
            except ValueError as err:
                errors.append(invalid(f"{path}.succeededIndexes", indexes, f"error parsing succeededIndexes: {err}"))
    if _is_int(count):
        if count < 0:
            errors.append(invalid(f"{path}.succeededCount", count, "must be greater than or equal to 0"))
        if _is_int(completions) and count > completions:
            errors.append(invalid(f"{path}.succeededCount", count, f"must be less than or equal to {completions} "
                                                                   "(the number of specified completions)"))
        if indexes is not None and _is_int(completions) and count > total:
            errors.append(invalid(f"{path}.succeededCount", count, f"must be less than or equal to {total} (the "
                                                                   "number of indexes in the specified "
                                                                   "succeededIndexes field)"))
    return errors


def _success_policy(spec: Mapping[str, Any]) -> list[FieldError]:
    """validateJobSpec's successPolicy: only Indexed Jobs may have one; then validateSuccessPolicy."""
    policy = spec.get("successPolicy")
    if not isinstance(policy, Mapping):
        return []
    if spec.get("completionMode", "NonIndexed") != "Indexed":
        return [invalid("spec.successPolicy", "", "requires indexed completion mode")]
    errors: list[FieldError] = []
    rules = _list(policy.get("rules"))
    if not rules:
        errors.append(required("spec.successPolicy.rules", "at least one rules must be specified when the "
                                                           "successPolicy is specified"))
    if len(rules) > _MAX_SUCCESS_RULES:
        errors.append(too_many("spec.successPolicy.rules", len(rules), _MAX_SUCCESS_RULES))
    for path, rule in each_object(rules, "spec.successPolicy.rules", errors):
        errors += _success_rule(rule, path, spec.get("completions"))
    return errors


_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def _domain_prefixed_path(field: str, value: str) -> list[FieldError]:
    """apimachinery's IsDomainPrefixedPath."""
    if not value:
        return [required(field)]
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return [invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errors = [invalid(field, host, m) for m in dns1123_subdomain_errors(host)]
    if not _HTTP_PATH.match(path):
        errors.append(invalid(field, path, "Invalid path (regex used for validation is "
                                           "'[A-Za-z0-9/\\-._~%!$&\'()*+,;=:]+')"))
    return errors


def _job(obj: Mapping[str, Any]) -> list[FieldError]:
    """validateJobSpec's checks of ``managedBy``, ``successPolicy`` and ``podReplacementPolicy``
    (pkg/apis/batch/validation/validation.go), in its order."""
    spec = _dict(obj.get("spec"))
    errors: list[FieldError] = []
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str):
        errors += _domain_prefixed_path("spec.managedBy", managed_by)
        if len(managed_by.encode()) > _MAX_MANAGED_BY:
            errors.append(too_long("spec.managedBy", _MAX_MANAGED_BY))
    errors += _success_policy(spec)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errors.append(not_supported("spec.podReplacementPolicy", replacement, ["Failed"]))
        elif replacement not in _REPLACEMENT_POLICIES:
            errors.append(not_supported("spec.podReplacementPolicy", replacement, _REPLACEMENT_POLICIES))
    return errors


_BY_KIND: dict[tuple[str, str], Callable[[Mapping[str, Any]], list[FieldError]]] = {
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


def _claim_requests(spec: Any) -> Iterator[Obj]:
    """A claim spec's ``exactly`` requests and ``firstAvailable`` subrequests."""
    for request in _list(get_path(spec, "devices", "requests")):
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            yield request["exactly"]
        for sub in _list(request.get("firstAvailable")):
            if isinstance(sub, dict):
                yield sub


def _stateful_set_max_unavailable(obj: Obj, old: Obj | None, minor: int) -> None:
    """MaxUnavailableStatefulSet: on, SetDefaults_StatefulSet makes a RollingUpdate's
    ``maxUnavailable`` 1 when unset (defaulting sees the gate, which ``defaults`` cannot: it is
    done here, as every write defaults before it prepares); off, dropStatefulSetDisabledFields
    drops it unless the stored ``old`` sets it."""
    keys = ("spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
    rolling = get_path(obj, *keys[:-1])
    if not gate_enabled("MaxUnavailableStatefulSet", minor):
        _drop_when("MaxUnavailableStatefulSet", minor, obj, old, *keys)
    elif isinstance(rolling, dict) and get_path(obj, "spec", "updateStrategy", "type") == "RollingUpdate":
        rolling.setdefault("maxUnavailable", 1)


def _taints_in_use(spec: Any) -> bool:
    """draDeviceTaintsInUse: a request or subrequest of the claim spec has tolerations."""
    return any(_list(h.get("tolerations")) for h in _claim_requests(spec))


def _capacity_in_use(spec: Any) -> bool:
    """DRAConsumableCapacityFeatureInUse: a constraint's distinctAttribute, a request's or
    subrequest's capacity."""
    return any(_dict(c).get("distinctAttribute") is not None
               for c in _list(get_path(spec, "devices", "constraints"))) or any(
        h.get("capacity") is not None for h in _claim_requests(spec))


def _drop_claim_spec(spec: Any, old: Any, minor: int) -> None:
    """pkg/api/resourceclaimspec DropDisabledFields of the gates off at 1.34 and 1.35 (the claim
    API is served from 1.34): requests' and subrequests' ``tolerations`` (DRADeviceTaints);
    constraints' ``distinctAttribute`` and requests' and subrequests' ``capacity``
    (DRAConsumableCapacity), unless the stored spec uses them. A ResourceClaimTemplate's spec.spec
    is taken to follow the same rules: the only template strategy found (1.34) drops the capacity
    alone (its distinctAttribute loop changes a copy, and it has no tolerations drop); the shared
    resourceclaimspec package read here is the newer code."""
    if not gate_enabled("DRADeviceTaints", minor) and not _taints_in_use(old):
        for holder in _claim_requests(spec):
            holder.pop("tolerations", None)
    if not gate_enabled("DRAConsumableCapacity", minor) and not _capacity_in_use(old):
        for constraint in _list(get_path(spec, "devices", "constraints")):
            if isinstance(constraint, dict):
                constraint.pop("distinctAttribute", None)
        for holder in _claim_requests(spec):
            holder.pop("capacity", None)


def _claim_results(claim: Any) -> list[Obj]:
    return [r for r in _list(get_path(claim, "status", "allocation", "devices", "results")) if isinstance(r, dict)]


def _drop_claim_status(obj: Obj, old: Obj | None, minor: int) -> None:
    """pkg/registry/resource/resourceclaim strategy.go dropDisabledStatusFields of the gates off at
    1.34 and 1.35: results' ``shareID`` and ``consumedCapacity`` and devices' ``shareID``
    (DRAConsumableCapacity; in use: the stored spec's fields or those), results'
    ``bindingConditions`` and ``bindingFailureConditions`` (DRADeviceBindingConditions)."""
    devices = [d for d in _list(get_path(obj, "status", "devices")) if isinstance(d, dict)]
    capacity_in_use = _capacity_in_use(_dict(old).get("spec")) or any(
        r.get("shareID") is not None or r.get("consumedCapacity") for r in _claim_results(old)) or any(
        _dict(d).get("shareID") is not None for d in _list(get_path(old, "status", "devices")))
    if not gate_enabled("DRAConsumableCapacity", minor) and not capacity_in_use:
        for result in _claim_results(obj):
            result.pop("shareID", None)
            result.pop("consumedCapacity", None)
        for device in devices:
            device.pop("shareID", None)
    if not gate_enabled("DRADeviceBindingConditions", minor) and not any(
            r.get("bindingConditions") or r.get("bindingFailureConditions") for r in _claim_results(old)):
        for result in _claim_results(obj):
            result.pop("bindingConditions", None)
            result.pop("bindingFailureConditions", None)


_PARTITION_DEVICE_KEYS = ("consumesCounters", "nodeName", "nodeSelector", "allNodes")


def _drop_slice_fields(obj: Obj, old: Obj | None, minor: int) -> None:
    """pkg/registry/resource/resourceslice strategy.go dropDisabledFields (read in its 1.33
    version: DRADeviceTaints and DRAPartitionableDevices): devices' ``taints``; the spec's
    ``sharedCounters`` and ``perDeviceNodeSelection``, devices' ``consumesCounters``,
    ``nodeName``, ``nodeSelector`` and ``allNodes``, unless the stored slice uses them."""
    spec, old_spec = obj.get("spec"), _dict(_dict(old).get("spec"))
    if not isinstance(spec, dict):
        return
    devices = [d for d in _list(spec.get("devices")) if isinstance(d, dict)]
    old_devices = [_dict(d) for d in _list(old_spec.get("devices"))]
    if not gate_enabled("DRADeviceTaints", minor) and not any(_list(d.get("taints")) for d in old_devices):
        for device in devices:
            device.pop("taints", None)
    partitioned = bool(_list(old_spec.get("sharedCounters"))) or old_spec.get("perDeviceNodeSelection") is not None \
        or any(_list(d.get("consumesCounters")) or any(d.get(k) is not None for k in _PARTITION_DEVICE_KEYS[1:])
               for d in old_devices)
    if not gate_enabled("DRAPartitionableDevices", minor) and not partitioned:
        spec.pop("sharedCounters", None)
        spec.pop("perDeviceNodeSelection", None)
        for device in devices:
            for key in _PARTITION_DEVICE_KEYS:
                device.pop(key, None)


def drop_disabled(group: str, kind: str, obj: Obj, old: Obj | None, minor: int) -> None:
    """Drop, in place, the fields of ``obj`` whose feature gate is off by default in Kubernetes
    ``1.<minor>``, unless the stored ``old`` (an update's; None on create) already uses them."""
    keys = pod_spec_paths(group, kind)
    if keys is not None:
        spec = _at(obj, keys)
        if isinstance(spec, dict):
            drop_pod_fields(spec, _at(old, keys) if old is not None else None, lambda gate: gate_enabled(gate, minor))
    if (group, kind) == ("", "Pod"):  # DropDisabledPodFields: the status too
        drop_disabled_status(group, kind, obj, old, minor)
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
    elif (group, kind) in (("", "PersistentVolumeClaim"), ("", "PersistentVolume")):
        # pkg/api/persistentvolumeclaim/util.go DropDisabledFields and
        # pkg/api/persistentvolume/util.go DropDisabledSpecFields
        _drop_when("VolumeAttributesClass", minor, obj, old, "spec", "volumeAttributesClassName")
        spec = obj.get("spec")
        if kind == "PersistentVolumeClaim" and isinstance(spec, dict):
            prepare_claim_spec(spec, _dict(old.get("spec")) if old is not None else None,
                               lambda gate: gate_enabled(gate, minor))
    elif (group, kind) in (("resource.k8s.io", "ResourceClaim"), ("resource.k8s.io", "ResourceClaimTemplate")):
        keys = ("spec",) if kind == "ResourceClaim" else ("spec", "spec")
        if not gate_enabled("DRADerivedAttributes", minor) and not any(
                h.get("derivedAttributes") is not None for h in _claim_requests(_at(old, keys) if old else None)):
            for holder in _claim_requests(_at(obj, keys)):
                holder.pop("derivedAttributes", None)
        _drop_claim_spec(_at(obj, keys), _at(old, keys) if old else None, minor)
    elif (group, kind) == ("resource.k8s.io", "DeviceClass"):
        # pkg/registry/resource/deviceclass strategy.go dropDisabledDRAExtendedResourceFields
        _drop_when("DRAExtendedResource", minor, obj, old, "spec", "extendedResourceName")
    elif (group, kind) == ("resource.k8s.io", "ResourceSlice"):
        _drop_slice_fields(obj, old, minor)
    elif (group, kind) == ("", "Node"):
        _drop_when("InPlacePodVerticalScalingSchedulerPreemption", minor, obj, old, "spec", "podPreemptionPolicy")
    elif (group, kind) == ("apps", "StatefulSet"):
        _stateful_set_max_unavailable(obj, old, minor)
    elif (group, kind) == ("batch", "Job"):
        _drop_when("WorkloadWithJob", minor, obj, old, "spec", "scheduling")
    elif (group, kind) == ("batch", "CronJob"):
        _drop_when("WorkloadWithJob", minor, obj, old, "spec", "jobTemplate", "spec", "scheduling")


def drop_disabled_status(group: str, kind: str, obj: Obj, old: Obj | None, minor: int) -> None:
    """Drop, in place, the status fields of ``obj`` (a status write) whose feature gate is off by
    default in Kubernetes ``1.<minor>``, unless the stored ``old`` (None: a create) already has
    them: the status strategies' PrepareForUpdate ``dropDisabledStatusFields``
    (pkg/registry/apps/deployment and replicaset strategy.go: ``status.terminatingReplicas``; a
    Pod's: pkg/api/pod/util.go ``dropDisabledPodStatusFields``, ``recent_pod.drop_pod_status_fields``)."""
    if (group, kind) == ("", "Pod"):
        status = obj.get("status")
        if isinstance(status, dict):
            drop_pod_status_fields(status, _dict(old).get("status"), _dict(old).get("spec"),
                                   lambda gate: gate_enabled(gate, minor))
    elif (group, kind) == ("resource.k8s.io", "ResourceClaim"):
        _drop_claim_status(obj, old, minor)
    elif (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet")):
        _drop_when("DeploymentReplicaSetTerminatingReplicas", minor, obj, old, "status", "terminatingReplicas")


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
