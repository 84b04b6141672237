"""Table cells of built-in kinds beyond the core set in ``tables``, ported from kubernetes
pkg/printers/internalversion/printers.go (v1.37): each entry is the kind's columns between Name
and Age (``COLUMNS``) and its ``-o wide`` (priority 1) columns after Age (``WIDE``); kinds with
``CREATED_AT`` print Name and Created At only. Cells never raise (``tables.Column.cell``
catches lookup errors); ``<none>`` and ``N/A`` are printed as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from samplecontroller.apiserver.objects import deep_get as _get

__all__ = ["AFTER_AGE", "AGE_FIRST", "COLUMNS", "CREATED_AT", "NAME_CELLS", "NO_AGE", "WIDE", "ColumnSpec"]

Getter = Callable[[Mapping[str, Any]], Any]
ColumnSpec = tuple[str, str, str, Getter]
"""(name, type, description, cell getter); priority comes from the table it is in."""


def _list(obj: Any, *path: str) -> list[Any]:
    value = _get(obj, *path, default=[])
    return value if isinstance(value, list) else []


def _age(value: Any) -> str:
    from samplecontroller.apiserver.tables import human_duration

    if not isinstance(value, str) or not value:
        return "<none>"
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - when).total_seconds())


def selector_text(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: ``app=x,tier in (a,b)``; ``<none>`` for an empty selector."""
    if not isinstance(selector, Mapping):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    ops = {"In": "in", "NotIn": "notin"}
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op in ops:
            parts.append(f"{key} {ops[op]} ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def _map_selector(selector: Any) -> str:
    if not isinstance(selector, Mapping) or not selector:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def _containers(*path: str) -> Getter:
    return lambda o: ",".join(str(c.get("name", "")) for c in _list(o, *path, "containers"))


def _images(*path: str) -> Getter:
    return lambda o: ",".join(str(c.get("image", "")) for c in _list(o, *path, "containers"))


def _int(*path: str) -> Getter:
    return lambda o: int(_get(o, *path, default=0))


def _text(*path: str, default: str = "<none>") -> Getter:
    return lambda o: str(_get(o, *path, default=default)) if _get(o, *path) != "" else default


def _bool_text(*path: str) -> Getter:
    return lambda o: "True" if _get(o, *path) is True else "False"


def _count(*path: str) -> Getter:
    return lambda o: len(_list(o, *path))


def _int_or_na(*path: str) -> Getter:
    return lambda o: "N/A" if _get(o, *path) is None else str(_get(o, *path))


# ---------------------------------------------------------------------------- per kind


def _node_status(o: Mapping[str, Any]) -> str:
    conditions = {c.get("type"): c.get("status") for c in _list(o, "status", "conditions") if isinstance(c, Mapping)}
    ready = conditions.get("Ready")
    status = "Ready" if ready == "True" else "NotReady" if ready is not None else "Unknown"
    if _get(o, "spec", "unschedulable") is True:
        status += ",SchedulingDisabled"
    return status


def _node_roles(o: Mapping[str, Any]) -> str:
    roles = set()
    for key, value in (_get(o, "metadata", "labels", default={}) or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(r for r in roles if r)) or "<none>"


def _node_address(kind: str) -> Getter:
    def cell(o: Mapping[str, Any]) -> str:
        found = [a.get("address") for a in _list(o, "status", "addresses") if a.get("type") == kind]
        return str(found[0]) if found else "<none>"
    return cell


def _has_condition(o: Mapping[str, Any], ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in _list(o, "status", "conditions"))


def _job_status(o: Mapping[str, Any]) -> str:
    for ctype, text in (("Complete", "Complete"), ("Failed", "Failed")):
        if _has_condition(o, ctype):
            return text
    if _get(o, "metadata", "deletionTimestamp"):
        return "Terminating"
    for ctype in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(o, ctype):
            return ctype
    return "Running"


def _job_completions(o: Mapping[str, Any]) -> str:
    succeeded = int(_get(o, "status", "succeeded", default=0))
    completions, parallelism = _get(o, "spec", "completions"), _get(o, "spec", "parallelism")
    if completions is not None:
        return f"{succeeded}/{completions}"
    if parallelism is None:
        return f"{succeeded}/1 of 1"
    return f"{succeeded}/1 of {parallelism}" if int(parallelism) > 1 else f"{succeeded}/1"


def _job_duration(o: Mapping[str, Any]) -> str:
    from samplecontroller.apiserver.tables import human_duration

    start = _get(o, "status", "startTime")
    if not isinstance(start, str):
        return ""
    end = _get(o, "status", "completionTime")
    try:
        begin = datetime.fromisoformat(start.replace("Z", "+00:00"))
        finish = datetime.fromisoformat(end.replace("Z", "+00:00")) if isinstance(end, str) else datetime.now(UTC)
    except ValueError:
        return ""
    return human_duration((finish - begin).total_seconds())


def _binding_subjects(kind: str) -> Getter:
    def cell(o: Mapping[str, Any]) -> str:
        names = []
        for subject in _list(o, "subjects"):
            if subject.get("kind") == kind:
                name = str(subject.get("name", ""))
                names.append(f"{subject.get('namespace', '')}:{name}" if kind == "ServiceAccount" else name)
        return ", ".join(names)
    return cell


def _ingress_hosts(o: Mapping[str, Any]) -> str:
    hosts = [str(r.get("host")) for r in _list(o, "spec", "rules") if r.get("host")]
    if not hosts:
        return "*"
    shown = ",".join(hosts[:4])
    return shown + (f" + {len(hosts) - 4} more..." if len(hosts) > 4 else "")


def _load_balancer(o: Mapping[str, Any]) -> str:
    return ",".join(str(i.get("ip") or i.get("hostname") or "") for i in _list(o, "status", "loadBalancer", "ingress"))


def _ingress_ports(o: Mapping[str, Any]) -> str:
    return "80, 443" if _list(o, "spec", "tls") else "80"


def _parameters(o: Mapping[str, Any]) -> str:
    params = _get(o, "spec", "parameters")
    if not isinstance(params, Mapping):
        return "<none>"
    group = f".{params['apiGroup']}" if params.get("apiGroup") else ""
    return f"{params.get('kind', '')}{group}/{params.get('name', '')}"


_ACCESS = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def _access_modes(*path: str) -> Getter:
    return lambda o: ",".join(_ACCESS.get(str(m), str(m)) for m in _list(o, *path, "accessModes"))


def _claim(o: Mapping[str, Any]) -> str:
    ref = _get(o, "spec", "claimRef")
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, Mapping) else ""


def _storage(*path: str) -> Getter:
    return lambda o: str(_get(o, *path, "storage", default=""))


def _endpoints(o: Mapping[str, Any]) -> str:
    found: list[str] = []
    for subset in _list(o, "subsets"):
        ports = [p.get("port") for p in subset.get("ports") or ()] or [None]
        for address in subset.get("addresses") or ():
            found.extend(f"{address.get('ip')}:{p}" if p is not None else str(address.get("ip")) for p in ports)
    if not found:
        return "<none>"
    return ",".join(found[:3]) + (f" + {len(found) - 3} more..." if len(found) > 3 else "")


def _slice_ports(o: Mapping[str, Any]) -> str:
    ports = [str(p.get("port")) for p in _list(o, "ports") if p.get("port") is not None]
    return ",".join(ports) or "<unset>"


def _slice_endpoints(o: Mapping[str, Any]) -> str:
    found = [str(a) for e in _list(o, "endpoints") for a in e.get("addresses") or ()]
    if not found:
        return "<unset>"
    return ",".join(found[:3]) + (f" + {len(found) - 3} more..." if len(found) > 3 else "")


def _quota(limits: bool) -> Getter:
    def cell(o: Mapping[str, Any]) -> str:
        hard = _get(o, "status", "hard", default={}) or _get(o, "spec", "hard", default={}) or {}
        used = _get(o, "status", "used", default={}) or {}
        keys = [k for k in sorted(hard) if k.startswith("limits.") == limits]
        return ", ".join(f"{k}: {used.get(k, '0')}/{hard[k]}" for k in keys)
    return cell


def _storage_class_name(o: Mapping[str, Any]) -> str:
    annotations = _get(o, "metadata", "annotations", default={}) or {}
    name = str(_get(o, "metadata", "name", default=""))
    default = any(annotations.get(k) == "true" for k in ("storageclass.kubernetes.io/is-default-class",
                                                         "storageclass.beta.kubernetes.io/is-default-class"))
    return f"{name} (default)" if default else name


def _hpa_reference(o: Mapping[str, Any]) -> str:
    ref = _get(o, "spec", "scaleTargetRef", default={})
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _hpa_targets(o: Mapping[str, Any]) -> str:
    metrics = _list(o, "spec", "metrics")
    if not metrics and _get(o, "spec", "targetCPUUtilizationPercentage") is not None:
        current = _get(o, "status", "currentCPUUtilizationPercentage")
        return f"cpu: {'<unknown>' if current is None else str(current) + '%'}/{_get(o, 'spec', 'targetCPUUtilizationPercentage')}%"
    parts = []
    for metric in metrics[:4]:
        resource = metric.get("resource") or metric.get("containerResource") or {}
        target = resource.get("target") or {}
        if "averageUtilization" in target:
            parts.append(f"{resource.get('name', '')}: <unknown>/{target['averageUtilization']}%")
        else:
            parts.append(f"<unknown>/{target.get('averageValue') or target.get('value') or ''}")
    return ", ".join(parts) or "<none>"


def _controller(o: Mapping[str, Any]) -> str:
    for ref in _get(o, "metadata", "ownerReferences", default=[]) or ():
        if ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = str(ref.get("kind", "")).lower() + (f".{group}" if group else "")
            return f"{kind}/{ref.get('name', '')}"
    return "<none>"


def _csr_condition(o: Mapping[str, Any]) -> str:
    found = [str(c.get("type")) for c in _list(o, "status", "conditions")]
    return ",".join(found) or "Pending"


def _csr_duration(o: Mapping[str, Any]) -> str:
    from samplecontroller.apiserver.tables import human_duration

    seconds = _get(o, "spec", "expirationSeconds")
    return human_duration(int(seconds)) if isinstance(seconds, int) else "<none>"


def _pod_labels(o: Mapping[str, Any]) -> str:
    return _map_selector(_get(o, "template", "metadata", "labels"))


def _claim_state(o: Mapping[str, Any]) -> str:
    """resourceClaimState: deleted, pending, allocated, reserved (comma-separated)."""
    states = ["deleted"] if _get(o, "metadata", "deletionTimestamp") else []
    if not _get(o, "status", "allocation"):
        states += [] if states else ["pending"]
    else:
        states += ["allocated"] + (["reserved"] if _list(o, "status", "reservedFor") else [])
    return ",".join(states)


def _parent_ref(o: Mapping[str, Any]) -> str:
    """printIPAddress: ``resource[.group][/namespace]/name`` of spec.parentRef, lower case."""
    ref = _get(o, "spec", "parentRef")
    if not isinstance(ref, Mapping):
        return "<none>"
    group, resource = str(ref.get("group") or ""), str(ref.get("resource") or "")
    text = (f"{resource}.{group}" if group else resource).lower()
    if ref.get("namespace"):
        text += f"/{ref['namespace']}"
    return f"{text}/{ref.get('name') or ''}"


def _ready_of(*path: str) -> Getter:
    return lambda o: f"{_get(o, 'status', 'readyReplicas', default=0)}/{_get(o, *path, default=1)}"


_T = "string"
COLUMNS: dict[tuple[str, str], list[ColumnSpec]] = {
    ("", "Node"): [("Status", _T, "The status of the node", _node_status),
                   ("Roles", _T, "The roles of the node", _node_roles)],
    ("", "PersistentVolume"): [
        ("Capacity", _T, "", _storage("spec", "capacity")), ("Access Modes", _T, "", _access_modes("spec")),
        ("Reclaim Policy", _T, "", _text("spec", "persistentVolumeReclaimPolicy", default="")),
        ("Status", _T, "", _text("status", "phase", default="")), ("Claim", _T, "", _claim),
        ("StorageClass", _T, "", _text("spec", "storageClassName", default="")),
        ("VolumeAttributesClass", _T, "", _text("spec", "volumeAttributesClassName")),
        ("Reason", _T, "", _text("status", "reason", default=""))],
    ("", "PersistentVolumeClaim"): [
        ("Status", _T, "", _text("status", "phase", default="")), ("Volume", _T, "", _text("spec", "volumeName", default="")),
        ("Capacity", _T, "", _storage("status", "capacity")), ("Access Modes", _T, "", _access_modes("status")),
        ("StorageClass", _T, "", _text("spec", "storageClassName", default="")),
        ("VolumeAttributesClass", _T, "", _text("spec", "volumeAttributesClassName"))],
    ("", "Endpoints"): [("Endpoints", _T, "Endpoints of the service", _endpoints)],
    ("", "ResourceQuota"): [],
    ("", "ReplicationController"): [
        ("Desired", "integer", "Number of desired pods.", _int("spec", "replicas")),
        ("Current", "integer", "Number of actual pods.", _int("status", "replicas")),
        ("Ready", "integer", "Number of ready pods.", _int("status", "readyReplicas"))],
    ("", "PodTemplate"): [("Containers", _T, "", _containers("template", "spec")),
                          ("Images", _T, "", _images("template", "spec")), ("Pod Labels", _T, "", _pod_labels)],
    ("apps", "StatefulSet"): [("Ready", _T, "Number of the pod with ready state", _ready_of("spec", "replicas"))],
    ("apps", "DaemonSet"): [
        ("Desired", "integer", "", _int("status", "desiredNumberScheduled")),
        ("Current", "integer", "", _int("status", "currentNumberScheduled")),
        ("Ready", "integer", "", _int("status", "numberReady")),
        ("Up-to-date", "integer", "", _int("status", "updatedNumberScheduled")),
        ("Available", "integer", "", _int("status", "numberAvailable")),
        ("Node Selector", _T, "", lambda o: _map_selector(_get(o, "spec", "template", "spec", "nodeSelector")))],
    ("apps", "ControllerRevision"): [("Controller", _T, "", _controller), ("Revision", "integer", "", _int("revision"))],
    ("batch", "Job"): [("Status", _T, "Status of the job.", _job_status),
                       ("Completions", _T, "The completion status of the job.", _job_completions),
                       ("Duration", _T, "Time required to complete the job.", _job_duration)],
    ("batch", "CronJob"): [
        ("Schedule", _T, "The schedule", _text("spec", "schedule", default="")),
        ("Timezone", _T, "The timezone", _text("spec", "timeZone")),
        ("Suspend", "boolean", "Whether the cronjob is suspended", _bool_text("spec", "suspend")),
        ("Active", "integer", "Number of active jobs", _count("status", "active")),
        ("Last Schedule", _T, "When the last job was scheduled", lambda o: _age(_get(o, "status", "lastScheduleTime")))],
    ("rbac.authorization.k8s.io", "RoleBinding"): [
        ("Role", _T, "", lambda o: f"{_get(o, 'roleRef', 'kind', default='')}/{_get(o, 'roleRef', 'name', default='')}")],
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): [
        ("Role", _T, "", lambda o: f"{_get(o, 'roleRef', 'kind', default='')}/{_get(o, 'roleRef', 'name', default='')}")],
    ("networking.k8s.io", "Ingress"): [
        ("Class", _T, "", _text("spec", "ingressClassName")), ("Hosts", _T, "", _ingress_hosts),
        ("Address", _T, "", _load_balancer), ("Ports", _T, "", _ingress_ports)],
    ("networking.k8s.io", "IngressClass"): [("Controller", _T, "", _text("spec", "controller", default="")),
                                            ("Parameters", _T, "", _parameters)],
    ("networking.k8s.io", "NetworkPolicy"): [("Pod-Selector", _T, "", lambda o: selector_text(_get(o, "spec", "podSelector")))],
    ("policy", "PodDisruptionBudget"): [
        ("Min Available", _T, "", _int_or_na("spec", "minAvailable")),
        ("Max Unavailable", _T, "", _int_or_na("spec", "maxUnavailable")),
        ("Allowed Disruptions", "integer", "", _int("status", "disruptionsAllowed"))],
    ("discovery.k8s.io", "EndpointSlice"): [("AddressType", _T, "", _text("addressType", default="")),
                                            ("Ports", _T, "", _slice_ports), ("Endpoints", _T, "", _slice_endpoints)],
    ("scheduling.k8s.io", "PriorityClass"): [("Value", "integer", "", _int("value")),
                                             ("Global-Default", "boolean", "",
                                              lambda o: _get(o, "globalDefault") is True)],  # a bool: "false"
    ("storage.k8s.io", "StorageClass"): [
        ("Provisioner", _T, "", _text("provisioner", default="")),
        ("ReclaimPolicy", _T, "", _text("reclaimPolicy", default="Delete")),
        ("VolumeBindingMode", _T, "", _text("volumeBindingMode", default="Immediate")),
        ("AllowVolumeExpansion", _T, "", _bool_text("allowVolumeExpansion"))],
    ("autoscaling", "HorizontalPodAutoscaler"): [
        ("Reference", _T, "", _hpa_reference), ("Targets", _T, "", _hpa_targets),
        ("MinPods", _T, "", _text("spec", "minReplicas", default="<unset>")),
        ("MaxPods", "integer", "", _int("spec", "maxReplicas")),
        ("Replicas", "integer", "", _int("status", "currentReplicas"))],
    ("node.k8s.io", "RuntimeClass"): [("Handler", _T, "", _text("handler", default=""))],
    ("certificates.k8s.io", "CertificateSigningRequest"): [],
    ("storage.k8s.io", "CSINode"): [("Drivers", "integer", "", _count("spec", "drivers"))],
    ("storage.k8s.io", "CSIDriver"): [
        ("AttachRequired", "boolean", "", lambda o: _get(o, "spec", "attachRequired") is not False),
        ("PodInfoOnMount", "boolean", "", lambda o: _get(o, "spec", "podInfoOnMount") is True),
        ("StorageCapacity", "boolean", "", lambda o: _get(o, "spec", "storageCapacity") is True),
        ("TokenRequests", _T, "", lambda o: ",".join(str(t.get("audience", "")) for t in _list(o, "spec", "tokenRequests"))
         or "<unset>"),
        ("RequiresRepublish", "boolean", "", lambda o: _get(o, "spec", "requiresRepublish") is True),
        ("Modes", _T, "", lambda o: ",".join(str(m) for m in _list(o, "spec", "volumeLifecycleModes")) or "<none>")],
    ("resource.k8s.io", "DeviceClass"): [],
    ("resource.k8s.io", "ResourceClaimTemplate"): [],
    ("resource.k8s.io", "ResourceClaim"): [
        ("State", _T, "A summary of the current state (allocated, pending, reserved, etc.).", _claim_state)],
    ("resource.k8s.io", "ResourceSlice"): [("Node", _T, "", _text("spec", "nodeName", default="")),
                                           ("Driver", _T, "", _text("spec", "driver", default="")),
                                           ("Pool", _T, "", _text("spec", "pool", "name", default=""))],
    ("networking.k8s.io", "ServiceCIDR"): [("CIDRs", _T, "", lambda o: ",".join(str(c) for c in _list(o, "spec", "cidrs")))],
    ("networking.k8s.io", "IPAddress"): [("ParentRef", _T, "", _parent_ref)],
    ("storage.k8s.io", "VolumeAttributesClass"): [("DriverName", _T, "", _text("driverName", default=""))],
    ("storage.k8s.io", "VolumeAttachment"): [
        ("Attacher", _T, "", _text("spec", "attacher", default="")),
        ("PV", _T, "", _text("spec", "source", "persistentVolumeName", default="")),
        ("Node", _T, "", _text("spec", "nodeName", default="")), ("Attached", "boolean", "", _bool_text("status", "attached"))],
}
# Columns after Age that are not -o wide (priority 0).
AFTER_AGE: dict[tuple[str, str], list[ColumnSpec]] = {
    ("", "Node"): [("Version", _T, "Kubelet Version reported by the node.", _text("status", "nodeInfo", "kubeletVersion", default=""))],
    ("", "ResourceQuota"): [("Request", _T, "", _quota(False)), ("Limit", _T, "", _quota(True))],
    ("scheduling.k8s.io", "PriorityClass"): [("PreemptionPolicy", _T, "", _text("preemptionPolicy", default=""))],
    ("certificates.k8s.io", "CertificateSigningRequest"): [
        ("SignerName", _T, "", _text("spec", "signerName", default="")),
        ("Requestor", _T, "", _text("spec", "username", default="")),
        ("RequestedDuration", _T, "", _csr_duration), ("Condition", _T, "", _csr_condition)],
}
_TEMPLATE = ("spec", "template", "spec")
_JOB_TEMPLATE = ("spec", "jobTemplate", "spec", "template", "spec")
WIDE: dict[tuple[str, str], list[ColumnSpec]] = {
    ("", "Node"): [
        ("Internal-IP", _T, "", _node_address("InternalIP")), ("External-IP", _T, "", _node_address("ExternalIP")),
        ("OS-Image", _T, "", _text("status", "nodeInfo", "osImage", default="<unknown>")),
        ("Kernel-Version", _T, "", _text("status", "nodeInfo", "kernelVersion", default="<unknown>")),
        ("Container-Runtime", _T, "", _text("status", "nodeInfo", "containerRuntimeVersion", default="<unknown>"))],
    ("", "PersistentVolume"): [("VolumeMode", _T, "", _text("spec", "volumeMode", default="<unset>"))],
    ("", "PersistentVolumeClaim"): [("VolumeMode", _T, "", _text("spec", "volumeMode", default="<unset>"))],
    ("", "ReplicationController"): [("Containers", _T, "", _containers(*_TEMPLATE)), ("Images", _T, "", _images(*_TEMPLATE)),
                                    ("Selector", _T, "", lambda o: _map_selector(_get(o, "spec", "selector")))],
    ("apps", "StatefulSet"): [("Containers", _T, "", _containers(*_TEMPLATE)), ("Images", _T, "", _images(*_TEMPLATE))],
    ("apps", "DaemonSet"): [("Containers", _T, "", _containers(*_TEMPLATE)), ("Images", _T, "", _images(*_TEMPLATE)),
                            ("Selector", _T, "", lambda o: selector_text(_get(o, "spec", "selector")))],
    ("batch", "Job"): [("Containers", _T, "", _containers(*_TEMPLATE)), ("Images", _T, "", _images(*_TEMPLATE)),
                       ("Selector", _T, "", lambda o: selector_text(_get(o, "spec", "selector")))],
    ("batch", "CronJob"): [("Containers", _T, "", _containers(*_JOB_TEMPLATE)), ("Images", _T, "", _images(*_JOB_TEMPLATE)),
                           ("Selector", _T, "", lambda o: selector_text(_get(o, "spec", "jobTemplate", "spec", "selector")))],
    ("rbac.authorization.k8s.io", "RoleBinding"): [
        ("Users", _T, "", _binding_subjects("User")), ("Groups", _T, "", _binding_subjects("Group")),
        ("ServiceAccounts", _T, "", _binding_subjects("ServiceAccount"))],
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): [
        ("Users", _T, "", _binding_subjects("User")), ("Groups", _T, "", _binding_subjects("Group")),
        ("ServiceAccounts", _T, "", _binding_subjects("ServiceAccount"))],
}
# Kinds whose Name cell is not just metadata.name.
NAME_CELLS: dict[tuple[str, str], Getter] = {("storage.k8s.io", "StorageClass"): _storage_class_name}
# Kinds whose printer is Name + Created At (and kinds without a printer: the default convertor).
CREATED_AT = {("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "ClusterRole"), ("", "LimitRange")}
# Kinds printed without an Age column (their printers' column definitions have none).
NO_AGE = {("networking.k8s.io", "IPAddress")}
# CertificateSigningRequest prints Age right after Name; its other columns come after it.
AGE_FIRST = {("certificates.k8s.io", "CertificateSigningRequest"), ("", "ResourceQuota")}
