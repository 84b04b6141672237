"""The objects every cluster has, which the embedded server creates as a real control plane would:

- the bootstrap PriorityClasses ``system-node-critical`` and ``system-cluster-critical``;
- one Ready Node (``local-node``, what the kubelet registers) and its Lease in
  ``kube-node-lease``, so ``kubectl get nodes`` and ``kubectl describe node`` work;
- the default ServiceCIDR ``kubernetes`` (the service CIDR, 10.96.0.0/12; Ready), as
  kube-apiserver's default-servicecidr controller creates it since 1.33 (when the server serves
  ServiceCIDRs, as every supported emulated version does);
- an IPAddress per Service cluster IP (named by the address, ``spec.parentRef`` the Service,
  labelled ``ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io``), as kube-apiserver's
  allocator keeps them since 1.33; here a Service's write is followed by its IPAddresses' (they
  appear a moment later, and go with the Service or the address);
- the ``default/kubernetes`` Service (``component=apiserver``, cluster IP 10.96.0.1, the first
  address of the service CIDR, port 443) and, once the server listens (``publish_endpoints``), its
  Endpoints and EndpointSlice pointing at the server's address and port (the apiserver's
  endpoint reconciler);
- a ``default`` ServiceAccount in every namespace (the service account controller's job), so
  Pods admitted with ``serviceAccountName: default`` and ``kubectl create token default`` work;
- with a serving CA, the ``kube-root-ca.crt`` ConfigMap in every namespace (``ca.crt``: the CA
  that signs the server's certificate; kube-controller-manager's root-ca-cert-publisher).

``install(core, schedule)`` creates what is missing (also after a restart from a data directory) and
watches for new namespaces. It must run on the server's event loop, like ``Core``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from samplecontroller.apiserver.ipallocator import DEFAULT_SERVICE_CIDR
from samplecontroller.apiserver.objects import now_rfc3339
from samplecontroller.apiserver.storage import Event
from samplecontroller.apiserver.strategies.kinds import SYSTEM_PRIORITY_CLASSES
from samplecontroller.apiserver.version import KUBERNETES_VERSION

if TYPE_CHECKING:
    from samplecontroller.apiserver.core import Core

__all__ = ["NODE_NAME", "ROOT_CA_CONFIGMAP", "install", "publish_endpoints", "sync_ip_addresses"]

NODE_NAME = "local-node"
_MANAGER = "kube-apiserver"


def _node(now: str) -> dict[str, Any]:
    def condition(ctype: str, status: str, reason: str, message: str) -> dict[str, str]:
        return {"type": ctype, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE_NAME, "labels": {
            "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
            "node-role.kubernetes.io/control-plane": ""}},
        "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]},
        "status": {
            "capacity": capacity, "allocatable": dict(capacity),
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": NODE_NAME}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                         "osImage": "samplecontroller embedded API server", "containerRuntimeVersion": "none://0",
                         "kubeletVersion": KUBERNETES_VERSION, "kubeProxyVersion": KUBERNETES_VERSION,
                         "operatingSystem": "linux", "architecture": "amd64"},
        },
    }


_KUBERNETES_SERVICE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "kubernetes", "namespace": "default",
                 "labels": {"component": "apiserver", "provider": "kubernetes"}},
    "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
             "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
             "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]},
}


def _ensure(core: Core, group: str, plural: str, ns: str, obj: dict[str, Any]) -> None:
    res = core.mapper.get(group, "v1", plural)
    if res is None or core.store.get(res.storage_key, ns, str(obj["metadata"]["name"])) is not None:
        return
    if ns and core.store.get("/namespaces", "", ns) is None:
        return
    core.create(res, ns, obj, manager=_MANAGER)


ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
_ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the "
    "internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes "
    "clusters.")


def _namespace_defaults(core: Core, ns: str, root_ca: bytes | None) -> None:
    """What a namespace gets from the controllers: its ``default`` ServiceAccount and, with a CA,
    the ``kube-root-ca.crt`` ConfigMap."""
    entry = core.store.get("/namespaces", "", ns)
    if entry is None or (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
        return
    _ensure(core, "", "serviceaccounts", ns,
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}})
    if root_ca is not None:
        _ensure(core, "", "configmaps", ns, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": ns,
                         "annotations": {"kubernetes.io/description": _ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": root_ca.decode()}})


def publish_endpoints(core: Core, address: str, port: int) -> None:
    """Point the ``kubernetes`` Service at ``address``:``port`` (an IPv4 or IPv6 address): its
    targetPort, its Endpoints and its EndpointSlice, created or updated (after a restart on
    another port)."""
    family = "IPv6" if ":" in address else "IPv4"
    ports = [{"name": "https", "port": port, "protocol": "TCP"}]
    wanted: dict[tuple[str, str], dict[str, Any]] = {
        ("", "endpoints"): {
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{"addresses": [{"ip": address}], "ports": ports}]},
        ("discovery.k8s.io", "endpointslices"): {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": family,
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": ports},
    }
    services = core.mapper.get("", "v1", "services")
    service = core.store.get("/services", "default", "kubernetes")
    if services is not None and service is not None:
        updated = service.copy()
        for svc_port in updated.get("spec", {}).get("ports") or ():
            if svc_port.get("name") == "https":
                svc_port["targetPort"] = port
        core.update(services, "default", "kubernetes", updated, manager=_MANAGER)
    for (group, plural), obj in wanted.items():
        res = core.mapper.get(group, "v1", plural)
        if res is None:
            continue
        entry = core.store.get(res.storage_key, "default", "kubernetes")
        if entry is None:
            core.create(res, "default", obj, manager=_MANAGER)
        else:
            obj["metadata"]["resourceVersion"] = entry.obj["metadata"]["resourceVersion"]
            core.update(res, "default", "kubernetes", obj, manager=_MANAGER)


def _default_service_cidr(core: Core) -> None:
    """defaultservicecidr's sync: the ``kubernetes`` ServiceCIDR with the service CIDR, its status
    condition Ready True set once (by server-side apply upstream) when it has none."""
    res = core.mapper.get("networking.k8s.io", "v1", "servicecidrs")
    if res is None:
        return
    _ensure(core, "networking.k8s.io", "servicecidrs", "", {
        "apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": "kubernetes"},
        "spec": {"cidrs": [DEFAULT_SERVICE_CIDR]}})
    entry = core.store.get(res.storage_key, "", "kubernetes")
    if entry is None or (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
        return
    if (entry.obj.get("spec") or {}).get("cidrs") != [DEFAULT_SERVICE_CIDR]:
        return
    conditions = (entry.obj.get("status") or {}).get("conditions") or []
    if any(c.get("type") == "Ready" and c.get("status") in ("True", "False") for c in conditions):
        return
    updated = entry.copy()
    updated["status"] = {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now_rfc3339(),
                                         "reason": "", "message": "Kubernetes default Service CIDR is ready"}]}
    core.update(res, "", "kubernetes", updated, subresource="status", manager="default-servicecidr-controller")


_IP_FAMILY = "ipaddress.kubernetes.io/ip-family"
_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
_IP_ALLOCATOR = "ipallocator.k8s.io"
_SERVICES_KEY = "/services"


def _cluster_ips(service: dict[str, Any] | None) -> set[str]:
    """The allocated cluster IPs of a Service object (none for headless and ExternalName ones)."""
    if not service or (service.get("metadata") or {}).get("deletionTimestamp"):
        return set()
    spec = service.get("spec") or {}
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return {ip for ip in ips if isinstance(ip, str) and ip and ip != "None"}


def _owned_by(ip: dict[str, Any], ns: str, name: str) -> bool:
    labels = (ip.get("metadata") or {}).get("labels") or {}
    ref = (ip.get("spec") or {}).get("parentRef") or {}
    return (labels.get(_MANAGED_BY) == _IP_ALLOCATOR and ref.get("resource") == "services"
            and not ref.get("group") and ref.get("namespace") == ns and ref.get("name") == name)


def sync_ip_addresses(core: Core, ns: str, name: str, before: Collection[str] = ()) -> None:
    """The allocator's IPAddresses of Service ``ns/name``: one per cluster IP it holds now, none
    for the addresses in ``before`` (what it held) it no longer holds."""
    res = core.mapper.get("networking.k8s.io", "v1", "ipaddresses")
    if res is None:
        return
    entry = core.store.get(_SERVICES_KEY, ns, name)
    now = _cluster_ips(entry.obj if entry is not None else None)
    for ip in sorted(set(before) - now):
        held = core.store.get(res.storage_key, "", ip)
        if held is not None and _owned_by(held.obj, ns, name):
            core.delete(res, "", ip, {})
    for ip in sorted(now):
        if core.store.get(res.storage_key, "", ip) is None:
            family = "IPv6" if ":" in ip else "IPv4"
            core.create(res, "", {
                "apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                "metadata": {"name": ip, "labels": {_IP_FAMILY: family, _MANAGED_BY: _IP_ALLOCATOR}},
                "spec": {"parentRef": {"resource": "services", "namespace": ns, "name": name}}},
                manager="kube-apiserver")


def _repair_ip_addresses(core: Core) -> None:
    """At start (the allocator's repair loop): every Service's IPAddresses, and none left over from
    a Service that is gone or no longer holds the address."""
    res = core.mapper.get("networking.k8s.io", "v1", "ipaddresses")
    if res is None:
        return
    for (_, name), entry in core.store.list(res.storage_key, None):
        ref = (entry.obj.get("spec") or {}).get("parentRef") or {}
        ns, owner = str(ref.get("namespace") or ""), str(ref.get("name") or "")
        if _owned_by(entry.obj, ns, owner):
            service = core.store.get(_SERVICES_KEY, ns, owner)
            if name not in _cluster_ips(service.obj if service is not None else None):
                core.delete(res, "", name, {})
    for (ns, name), _entry in core.store.list(_SERVICES_KEY, None):
        sync_ip_addresses(core, ns, name)


def install(core: Core, schedule: Callable[..., None], root_ca: bytes | None = None) -> None:
    """Create the node, the kubernetes Service and every namespace's defaults (``default``
    ServiceAccount; ``kube-root-ca.crt`` when ``root_ca``, the serving CA in PEM, is given) if
    missing, and give every namespace created later the same (through ``schedule``, which runs a
    callback on the server loop)."""
    _ensure(core, "", "nodes", "", _node(now_rfc3339()))
    _ensure(core, "coordination.k8s.io", "leases", "kube-node-lease", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NODE_NAME, "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": NODE_NAME, "leaseDurationSeconds": 40,
                 "renewTime": now_rfc3339().replace("Z", ".000000Z")}})
    _ensure(core, "", "services", "default", _KUBERNETES_SERVICE)
    _default_service_cidr(core)
    for name, (value, description) in SYSTEM_PRIORITY_CLASSES.items():
        _ensure(core, "scheduling.k8s.io", "priorityclasses", "", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "description": description})
    for (_, name), _entry in core.store.list("/namespaces", None):
        _namespace_defaults(core, name, root_ca)
    _repair_ip_addresses(core)

    def on_event(event: Event) -> None:
        if event.skey == "/namespaces" and event.type == "ADDED":
            schedule(_namespace_defaults, core, event.name, root_ca)
        elif event.skey == _SERVICES_KEY:
            before, after = _cluster_ips(event.prev), _cluster_ips(event.entry.obj)
            if event.type == "DELETED":
                schedule(sync_ip_addresses, core, event.namespace, event.name, before | after)
            elif before != after:
                schedule(sync_ip_addresses, core, event.namespace, event.name, before)

    core.store.listeners.append(on_event)
