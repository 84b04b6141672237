"""Defaulting of built-in kinds, ported from kubernetes pkg/apis/{core,apps,batch,networking,rbac,
scheduling,storage}/v1/defaults.go, plus what the default admission plugins add to a new Pod
(ServiceAccount: ``serviceAccountName``; DefaultTolerationSeconds: the not-ready/unreachable NoExecute tolerations) and a Job's
generated selector (the Job strategy's PrepareForCreate).

``apply_defaults(group, kind, obj, creating)`` works in place; values already set are kept.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any

from samplecontroller.apimachinery.quantity import Quantity, QuantityError, parse_quantity
from samplecontroller.apiserver.objects import now_rfc3339, random_suffix

__all__ = ["apply_defaults", "default_pod_spec", "default_pod_template"]

Obj = dict[str, Any]
_RBAC = "rbac.authorization.k8s.io"


def _dict(parent: Any, key: str) -> Obj | None:
    """``parent[key]`` if it is an object, else None."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else None


def _dicts(parent: Any, key: str) -> list[Obj]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _ensure(parent: Obj, key: str) -> Obj | None:
    """``parent[key]``, created empty if missing; None if it is not an object."""
    value = parent.setdefault(key, {})
    return value if isinstance(value, dict) else None


def _set_defaults(target: Obj, **values: Any) -> None:
    """``target.setdefault`` for each of ``values``, in their order (keys keep that order)."""
    for key, value in values.items():
        target.setdefault(key, value)


def _on_spec(default_spec: Callable[[Obj], None]) -> Callable[[Obj, bool], None]:
    """A defaulter that applies ``default_spec`` to the object's ``spec`` when that is an object."""
    def defaulter(obj: Obj, creating: bool) -> None:
        spec = _dict(obj, "spec")
        if spec is not None:
            default_spec(spec)
    return defaulter


def _rolling_strategy(spec: Obj, key: str, **rolling: Any) -> None:
    """Default ``spec[key]`` to type RollingUpdate and, when it is one, its ``rollingUpdate``
    fields to ``rolling``."""
    strategy = _ensure(spec, key)
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            params = _ensure(strategy, "rollingUpdate")
            if params is not None:
                _set_defaults(params, **rolling)


# ---------------------------------------------------------------------------- core/v1: pods


def _default_probe(probe: Obj | None) -> None:
    if probe is None:
        return
    _set_defaults(probe, timeoutSeconds=1, periodSeconds=10, successThreshold=1, failureThreshold=3)
    get = _dict(probe, "httpGet")
    if get is not None:
        get.setdefault("path", "/")
        get.setdefault("scheme", "HTTP")


def _default_container(container: Obj) -> None:
    image = str(container.get("image") or "")
    latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
    if "@" not in image:
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    else:
        container.setdefault("imagePullPolicy", "IfNotPresent")
    _set_defaults(container, terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File",
                  resources={})
    for port in _dicts(container, "ports"):
        port.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(_dict(container, probe))
    for env in _dicts(container, "env"):
        field_ref = _dict(_dict(env, "valueFrom"), "fieldRef")
        if field_ref is not None:
            field_ref.setdefault("apiVersion", "v1")


def _default_volume(volume: Obj) -> None:
    sources = [k for k in volume if k != "name"]
    if not sources:
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _dict(volume, key)
        if source is not None:
            source.setdefault("defaultMode", 420)
    for item in _dicts(_dict(volume, "downwardAPI"), "items"):
        ref = _dict(item, "fieldRef")
        if ref is not None:
            ref.setdefault("apiVersion", "v1")
    host_path = _dict(volume, "hostPath")
    if host_path is not None:
        host_path.setdefault("type", "")
    for source in _dicts(_dict(volume, "projected"), "sources"):
        token = _dict(source, "serviceAccountToken")
        if token is not None:  # SetDefaults_ServiceAccountTokenProjection: an hour
            token.setdefault("expirationSeconds", 3600)
        # A podCertificate's maxExpirationSeconds is not defaulted in the pod (1.37's generated
        # defaulters have none): the kubelet puts 86400 into the PodCertificateRequests it makes.


def default_pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec and the container, probe, port and volume defaults under it."""
    if not isinstance(spec, dict):
        return
    # serviceAccount is the deprecated alias of serviceAccountName, kept equal to it (1.37 does
    # this in SetDefaults_PodSpec; conversion did before): every pod spec, templates too.
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if isinstance(account, str) and account:
        spec["serviceAccountName"] = spec["serviceAccount"] = account
    _set_defaults(spec, restartPolicy="Always", terminationGracePeriodSeconds=30, dnsPolicy="ClusterFirst",
                  securityContext={}, schedulerName="default-scheduler")
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _dicts(spec, key):
            _default_container(container)
            if spec.get("hostNetwork") is True:
                for port in _dicts(container, "ports"):
                    port.setdefault("hostPort", port.get("containerPort"))
    for volume in _dicts(spec, "volumes"):
        _default_volume(volume)


def default_pod_template(template: Any) -> None:
    """Defaults of a PodTemplateSpec (workload templates get no Pod-level or admission defaults)."""
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _requests_from_limits(container: Obj) -> None:
    resources = _dict(container, "resources")
    limits = _dict(resources, "limits")
    if resources is None or not limits:
        return
    requests = _ensure(resources, "requests")
    if requests is not None:
        for name, value in limits.items():
            requests.setdefault(name, value)


def _qos_class(spec: Obj) -> str:
    """ComputePodQOS (pkg/apis/core/helper/qos, the requirementsQOS form): the pod-level
    ``resources`` when the spec has them, else every init and app container's; each compares
    its cpu and memory request with its limit by value (a missing one is zero): all equal and
    non-zero is Guaranteed, all zero BestEffort, any other mix Burstable."""
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict):
        return _requirements_qos(pod_level)
    found = ""
    for container in _dicts(spec, "initContainers") + _dicts(spec, "containers"):
        qos = _requirements_qos(_dict(container, "resources") or {})
        if qos == "Burstable" or (found and qos != found):
            return "Burstable"
        found = qos
    return found or "BestEffort"


def _requirements_qos(resources: Obj) -> str:
    requests, limits = _dict(resources, "requests") or {}, _dict(resources, "limits") or {}
    if not requests and not limits:
        return "BestEffort"
    found = ""
    for name in ("cpu", "memory"):
        request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
        if request.compare(limit) != 0:
            return "Burstable"
        qos = "BestEffort" if request.is_zero() else "Guaranteed"
        if found and qos != found:
            return "Burstable"
        found = qos
    return found


_ZERO = parse_quantity("0")


def _quantity(value: Any) -> Quantity:
    """A decoded (canonical) quantity; a missing one is zero, as Go's map lookup gives. (Writes
    decode quantities before defaulting: one that does not parse never gets here.)"""
    try:
        return parse_quantity(value) if isinstance(value, str) else _ZERO
    except QuantityError:
        return _ZERO


_NOT_READY_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
)


SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _token_volume() -> Obj:
    """The projected ``kube-api-access-xxxxx`` volume (token, the root CA, the namespace)."""
    return {"name": f"kube-api-access-{random_suffix()}", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}


def _mount_token(spec: Obj) -> None:
    """The ServiceAccount plugin's token volume, mounted read-only into every container and init
    container, unless the pod opts out (``automountServiceAccountToken: false``; the service
    account's own field is not consulted here) or a container already mounts that path."""
    if spec.get("automountServiceAccountToken") is False:
        return
    containers = _dicts(spec, "initContainers") + _dicts(spec, "containers")
    if any(isinstance(m, dict) and m.get("mountPath") == SERVICE_ACCOUNT_MOUNT
           for c in containers for m in c.get("volumeMounts") or ()):
        return
    volumes = spec.get("volumes")
    if volumes is None:
        volumes = spec["volumes"] = []
    if not isinstance(volumes, list):
        return
    volume = _token_volume()
    volumes.append(volume)
    for container in containers:
        mounts = container.setdefault("volumeMounts", [])
        if isinstance(mounts, list):
            mounts.append({"name": volume["name"], "readOnly": True, "mountPath": SERVICE_ACCOUNT_MOUNT})


def _admit_pod(spec: Obj) -> None:
    """What the ServiceAccount and DefaultTolerationSeconds admission plugins set (Priority needs
    the stored PriorityClasses: the Pod strategy's ``allocate``)."""
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = account
    spec["serviceAccount"] = account
    _mount_token(spec)
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = spec["tolerations"] = []
    if not isinstance(tolerations, list):
        return
    for wanted in _NOT_READY_TOLERATIONS:
        covered = any(isinstance(t, dict) and t.get("key") in (wanted["key"], None, "")
                      and t.get("effect") in ("NoExecute", None, "") and (t.get("key") or t.get("operator") == "Exists")
                      for t in tolerations)
        if not covered:
            tolerations.append(dict(wanted))


def _pod_ips(status: Obj) -> None:
    """SetDefaults_PodStatus (1.37; conversion did it before): podIP and podIPs kept in sync,
    podIP authoritative when they differ."""
    ip, ips = status.get("podIP"), status.get("podIPs")
    first = ips[0].get("ip") if isinstance(ips, list) and ips and isinstance(ips[0], dict) else None
    if isinstance(ip, str) and ip and (not ips or (first is not None and first != ip)):
        status["podIPs"] = [{"ip": ip}]
    elif not ip and isinstance(first, str) and first:
        status["podIP"] = first


def _pod(obj: Obj, creating: bool) -> None:
    spec = _dict(obj, "spec")
    if spec is not None:
        grace = spec.get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
            spec["terminationGracePeriodSeconds"] = 1  # SetDefaults_Pod (1.37); not a PodTemplate's
        default_pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        for key in ("containers", "initContainers"):
            for container in _dicts(spec, key):
                _requests_from_limits(container)
        if creating:
            _admit_pod(spec)
    status = _ensure(obj, "status")
    if status is not None:
        _pod_ips(status)
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", _qos_class(spec or {}))


# ---------------------------------------------------------------------------- core/v1: others


@_on_spec
def _service(spec: Obj) -> None:
    _set_defaults(spec, type="ClusterIP", sessionAffinity="None")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if spec["sessionAffinity"] == "ClientIP":
        config = _ensure(spec, "sessionAffinityConfig")
        client_ip = _ensure(config, "clientIP") if config is not None else None
        if client_ip is not None:
            client_ip.setdefault("timeoutSeconds", 10800)
    for port in _dicts(spec, "ports"):
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))


def _secret(obj: Obj, creating: bool) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        data = _ensure(obj, "data")
        if data is not None:
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()


def _replication_controller(obj: Obj, creating: bool) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    template = _dict(spec, "template")
    labels = _dict(_dict(template, "metadata"), "labels")
    if labels:
        spec.setdefault("selector", dict(labels))
        meta = _ensure(obj, "metadata")
        if meta is not None and not meta.get("labels"):
            meta["labels"] = dict(labels)
    spec.setdefault("replicas", 1)
    default_pod_template(template)


def _volume_spec(obj: Obj, creating: bool) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    spec.setdefault("volumeMode", "Filesystem")
    if obj.get("kind") == "PersistentVolume":
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")


def _endpoints(obj: Obj, creating: bool) -> None:
    for subset in _dicts(obj, "subsets"):
        for port in _dicts(subset, "ports"):
            port.setdefault("protocol", "TCP")


def _endpoint_slice(obj: Obj, creating: bool) -> None:
    for port in _dicts(obj, "ports"):
        _set_defaults(port, protocol="TCP", name="")


# ---------------------------------------------------------------------------- apps/v1


@_on_spec
def _deployment(spec: Obj) -> None:
    _set_defaults(spec, replicas=1, revisionHistoryLimit=10, progressDeadlineSeconds=600)
    _rolling_strategy(spec, "strategy", maxUnavailable="25%", maxSurge="25%")
    default_pod_template(spec.get("template"))


@_on_spec
def _replica_set(spec: Obj) -> None:
    spec.setdefault("replicas", 1)
    default_pod_template(spec.get("template"))


@_on_spec
def _daemon_set(spec: Obj) -> None:
    spec.setdefault("revisionHistoryLimit", 10)
    _rolling_strategy(spec, "updateStrategy", maxUnavailable=1, maxSurge=0)
    default_pod_template(spec.get("template"))


@_on_spec
def _stateful_set(spec: Obj) -> None:
    _set_defaults(spec, replicas=1, podManagementPolicy="OrderedReady", revisionHistoryLimit=10)
    _rolling_strategy(spec, "updateStrategy", partition=0)
    retention = _ensure(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        _set_defaults(retention, whenDeleted="Retain", whenScaled="Retain")
    for claim in _dicts(spec, "volumeClaimTemplates"):
        claim_spec = _dict(claim, "spec")
        if claim_spec is not None:
            claim_spec.setdefault("volumeMode", "Filesystem")
        claim.setdefault("status", {"phase": "Pending"})
    default_pod_template(spec.get("template"))


# ---------------------------------------------------------------------------- batch/v1


def _job_spec(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    _set_defaults(spec, parallelism=1, completionMode="NonIndexed",
                  backoffLimit=2147483647 if spec.get("backoffLimitPerIndex") is not None else 6, suspend=False,
                  podReplacementPolicy="Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")


def _job_selector(obj: Obj, spec: Obj) -> None:
    """The Job strategy's generated selector and template labels (unless manualSelector)."""
    meta = _dict(obj, "metadata") or {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    if spec.get("manualSelector") is True or not uid:
        return
    template = _ensure(spec, "template")
    tmeta = _ensure(template, "metadata") if template is not None else None
    labels = _ensure(tmeta, "labels") if tmeta is not None else None
    if labels is None:
        return
    for key, value in (("batch.kubernetes.io/controller-uid", uid), ("batch.kubernetes.io/job-name", name),
                       ("controller-uid", uid), ("job-name", name)):
        labels.setdefault(key, value)
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def _job(obj: Obj, creating: bool) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    _job_spec(spec)
    if creating:
        _job_selector(obj, spec)
    default_pod_template(spec.get("template"))


@_on_spec
def _cron_job(spec: Obj) -> None:
    _set_defaults(spec, concurrencyPolicy="Allow", suspend=False, successfulJobsHistoryLimit=3,
                  failedJobsHistoryLimit=1)
    job_spec = _dict(_dict(spec, "jobTemplate"), "spec")
    if job_spec is not None:
        default_pod_template(job_spec.get("template"))


# ---------------------------------------------------------------------------- other groups


@_on_spec
def _network_policy(spec: Obj) -> None:
    for rule in _dicts(spec, "ingress") + _dicts(spec, "egress"):
        for port in _dicts(rule, "ports"):
            port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types


def _binding_subjects(obj: Obj, creating: bool) -> None:
    for subject in _dicts(obj, "subjects"):
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = _RBAC


def _priority_class(obj: Obj, creating: bool) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _storage_class(obj: Obj, creating: bool) -> None:
    _set_defaults(obj, reclaimPolicy="Delete", volumeBindingMode="Immediate")


@_on_spec
def _csi_driver(spec: Obj) -> None:
    _set_defaults(spec, attachRequired=True, podInfoOnMount=False, storageCapacity=False,
                  fsGroupPolicy="ReadWriteOnceWithFSType", requiresRepublish=False, seLinuxMount=False,
                  volumeLifecycleModes=["Persistent"])


@_on_spec
def _hpa(spec: Obj) -> None:
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):  # SetDefaults_HorizontalPodAutoscalerBehavior
        for direction, defaults in _HPA_RULES.items():
            rules = behavior.get(direction)
            # copyHPAScalingRules: every field the rules set (an empty policy list too) is kept
            behavior[direction] = {**copy.deepcopy(defaults),
                                   **({k: v for k, v in rules.items() if v is not None}
                                      if isinstance(rules, dict) else {})}


# pkg/apis/autoscaling/v2/defaults.go defaultHPAScaleUpRules, defaultHPAScaleDownRules (the
# scale-down stabilization window is left unset: the controller's flag decides it)
_HPA_RULES: dict[str, Obj] = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    "scaleDown": {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
}


def _device_requests(devices: Obj | None) -> None:
    """resource.k8s.io/v1's SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest: a
    request's (and every subrequest's) allocationMode ExactCount and, with it, count 1; their
    tolerations' operator Equal (DeviceToleration's ``+default="Equal"``)."""
    for request in _dicts(devices, "requests"):
        exactly = _dict(request, "exactly")
        if exactly is not None:
            _exact_count(exactly)
            _toleration_operators(exactly)
        for subrequest in _dicts(request, "firstAvailable"):
            _exact_count(subrequest)
            _toleration_operators(subrequest)


def _toleration_operators(owner: Obj | None) -> None:
    for toleration in _dicts(owner, "tolerations"):
        if not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _exact_count(request: Obj) -> None:
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1


def _resource_claim(obj: Obj, creating: bool) -> None:
    _device_requests(_dict(_dict(obj, "spec"), "devices"))
    allocation = _dict(_dict(obj, "status"), "allocation")
    for result in _dicts(_dict(allocation, "devices"), "results"):
        _toleration_operators(result)


def _resource_claim_template(obj: Obj, creating: bool) -> None:
    _device_requests(_dict(_dict(_dict(obj, "spec"), "spec"), "devices"))


def _taint_time(taint: Obj | None) -> None:
    """SetDefaults_DeviceTaint: ``timeAdded`` now (whole seconds) when unset."""
    if taint is not None and taint.get("timeAdded") is None:
        taint["timeAdded"] = now_rfc3339()


def _device_taint_rule(obj: Obj, creating: bool) -> None:
    _taint_time(_dict(_dict(obj, "spec"), "taint"))


def _resource_slice(obj: Obj, creating: bool) -> None:
    for device in _dicts(_dict(obj, "spec"), "devices"):
        for taint in _dicts(device, "taints"):
            _taint_time(taint)


def _pod_template(obj: Obj, creating: bool) -> None:
    default_pod_template(obj.get("template"))


_DEFAULTERS: dict[tuple[str, str], Callable[[Obj, bool], None]] = {
    ("", "Pod"): _pod,
    ("", "Service"): _service,
    ("", "Secret"): _secret,
    ("", "ReplicationController"): _replication_controller,
    ("", "PersistentVolume"): _volume_spec,
    ("", "PersistentVolumeClaim"): _volume_spec,
    ("", "Endpoints"): _endpoints,
    ("", "PodTemplate"): _pod_template,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replica_set,
    ("apps", "DaemonSet"): _daemon_set,
    ("apps", "StatefulSet"): _stateful_set,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cron_job,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    (_RBAC, "RoleBinding"): _binding_subjects,
    (_RBAC, "ClusterRoleBinding"): _binding_subjects,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("storage.k8s.io", "StorageClass"): _storage_class,
    ("storage.k8s.io", "CSIDriver"): _csi_driver,
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("resource.k8s.io", "ResourceClaim"): _resource_claim,
    ("resource.k8s.io", "ResourceClaimTemplate"): _resource_claim_template,
    ("resource.k8s.io", "DeviceTaintRule"): _device_taint_rule,
    ("resource.k8s.io", "ResourceSlice"): _resource_slice,
}


def apply_defaults(group: str, kind: str, obj: Obj, creating: bool) -> None:
    """Default ``obj`` (a built-in object of ``group``/``kind``) in place. ``creating``: the
    object is being created (admission defaults and generated fields apply)."""
    defaulter = _DEFAULTERS.get((group, kind))
    if defaulter is not None:
        defaulter(obj, creating)
