"""The Service strategy: cluster IPs from the service CIDR and node ports from the node port
range, as kube-apiserver's Service REST storage allocates them (pkg/registry/core/service/storage:
alloc.go, storage.go's patchAllocatedValues, strategy.go's dropTypeDependentFields).

On create and update of the main resource:
- ``ipFamilyPolicy`` is defaulted (SingleStack; RequireDualStack for a headless Service without
  selector, which gets both families) and ``ipFamilies`` inferred ([IPv4] on this single-stack
  cluster); asking for dual-stack or IPv6 is a 422 as on a single-stack cluster;
- a Service that is not ExternalName gets a cluster IP (``clusterIP``/``clusterIPs``): a requested
  one if it is in the range and free, else ``spec.clusterIPs: Invalid value: [...]: failed to
  allocate IP ...: provided IP is already allocated``; ``None`` makes it headless (no IP);
- NodePort and LoadBalancer Services get a node port per service port (the requested one if free,
  ``spec.ports[i].nodePort: Invalid value: N: provided port is already allocated``), a
  LoadBalancer with ``externalTrafficPolicy: Local`` a ``healthCheckNodePort``;
- an update that leaves out the allocated values keeps them (kubectl apply/replace of a
  manifest without a clusterIP), the primary cluster IP never changes, and a type change that
  no longer needs them drops them (NodePort -> ClusterIP frees the node ports).

Everything taken is read from the stored Services (``Strategy.allocate``'s ``stored``), so deleting a
Service releases its IP and ports at once.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from samplecontroller.apiserver.ipallocator import AllocationError, CIDRRange
from samplecontroller.apiserver.portallocator import PortRange
from samplecontroller.apiserver.schema import FieldError, forbidden, invalid
from samplecontroller.apiserver.strategies.base import Obj, Stored, Strategy

__all__ = ["SERVICES", "ServiceStrategy"]

SERVICES = "/services"
_NONE = "None"
_NODE_PORT_TYPES = ("NodePort", "LoadBalancer")
_IP_EXAMPLE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _type(spec: dict[str, Any]) -> str:
    return str(spec.get("type") or "ClusterIP")


def _ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    ports = spec.get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _node_ports(spec: dict[str, Any]) -> set[int]:
    used = {p["nodePort"] for p in _ports(spec) if isinstance(p.get("nodePort"), int) and p["nodePort"]}
    health = spec.get("healthCheckNodePort")
    if isinstance(health, int) and health:
        used.add(health)
    return used


def _cluster_ips(spec: dict[str, Any]) -> list[str]:
    ips = spec.get("clusterIPs")
    return [str(ip) for ip in ips if ip] if isinstance(ips, list) else []


def _needs_health_check(spec: dict[str, Any]) -> bool:
    return _type(spec) == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


class ServiceStrategy(Strategy):
    """Services (see the module docstring); the status has a non-omitempty ``loadBalancer``; a
    delete answers with the deleted Service (its registry's ``ReturnDeletedObject``)."""

    returns_deleted = True

    def __init__(self, cidr: str | None = None, node_ports: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.ips = CIDRRange(cidr) if cidr else CIDRRange()
        self.ports = PortRange(*node_ports) if node_ports else PortRange()

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        super().reset_status(group, version, kind, obj)
        obj["status"]["loadBalancer"] = {}

    # ---------------------------------------------------------------- update preparation

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str) -> None:
        if subresource or not isinstance(new.get("spec"), dict):
            return
        spec, before = _spec(new), _spec(old)
        self._drop_type_dependent(spec, before)
        self._patch_allocated(spec, before)

    @staticmethod
    def _patch_allocated(spec: dict[str, Any], before: dict[str, Any]) -> None:
        """patchAllocatedValues: an update without the allocated values keeps the old ones."""
        if _type(before) != "ExternalName" and _type(spec) != "ExternalName":
            if not spec.get("clusterIP") and before.get("clusterIP"):
                spec["clusterIP"] = before["clusterIP"]
            if not spec.get("clusterIPs") and before.get("clusterIPs"):
                spec["clusterIPs"] = list(before["clusterIPs"])
            if spec.get("ipFamilyPolicy") is None and before.get("ipFamilyPolicy") is not None:
                spec["ipFamilyPolicy"] = before["ipFamilyPolicy"]
        if _type(before) in _NODE_PORT_TYPES and _type(spec) in _NODE_PORT_TYPES:
            used = _node_ports(before) & _node_ports(spec)
            by_name = {str(p.get("name") or ""): p.get("nodePort") for p in _ports(before)}
            for port in _ports(spec):
                if not port.get("nodePort"):
                    value = by_name.get(str(port.get("name") or ""))
                    if isinstance(value, int) and value and value not in used:
                        port["nodePort"] = value
        if _needs_health_check(before) and _needs_health_check(spec) and not spec.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = before.get("healthCheckNodePort")

    @staticmethod
    def _drop_type_dependent(spec: dict[str, Any], before: dict[str, Any]) -> None:
        """dropTypeDependentFields: values the old type needed and the new one does not go away
        when the update did not change them."""
        if _type(before) != "ExternalName" and _type(spec) == "ExternalName" \
                and spec.get("clusterIP") == before.get("clusterIP") and _cluster_ips(spec) == _cluster_ips(before):
            for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                spec.pop(key, None)
        if _type(before) in _NODE_PORT_TYPES and _type(spec) not in _NODE_PORT_TYPES \
                and [p.get("nodePort") for p in _ports(spec)] == [p.get("nodePort") for p in _ports(before)]:
            for port in _ports(spec):
                port.pop("nodePort", None)
        if _needs_health_check(before) and not _needs_health_check(spec) \
                and spec.get("healthCheckNodePort") == before.get("healthCheckNodePort"):
            spec.pop("healthCheckNodePort", None)

    # ---------------------------------------------------------------- validation

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        spec = _spec(obj)
        errors: list[FieldError] = []
        if _type(spec) not in _NODE_PORT_TYPES:
            for i, port in enumerate(_ports(spec)):
                if port.get("nodePort"):
                    errors.append(forbidden(f"spec.ports[{i}].nodePort",
                                            f"may not be used when `type` is '{_type(spec)}'"))
        if old is not None and _type(_spec(old)) != "ExternalName" and _type(spec) != "ExternalName":
            before, after = _cluster_ips(_spec(old)), _cluster_ips(spec)
            if before and (after[:1] or [""])[0] != before[0]:
                errors.append(invalid("spec.clusterIPs[0]", after, "may not change once set"))
        return errors

    # ---------------------------------------------------------------- allocation

    def allocate(self, obj: Obj, old: Obj | None, stored: Stored) -> list[FieldError]:
        spec = obj.get("spec")
        if not isinstance(spec, dict) or _type(spec) == "ExternalName":
            return []
        others = list(_others(obj, stored(SERVICES)))
        errors = self._ip_families(spec)
        if errors:
            return errors
        errors = self._cluster_ip(spec, others)
        if errors:
            return errors
        return self._allocate_node_ports(spec, others)

    def _ip_families(self, spec: dict[str, Any]) -> list[FieldError]:
        """initIPFamilyFields on a single-stack IPv4 cluster."""
        ips = _cluster_ips(spec)
        if not ips and spec.get("clusterIP"):
            ips = [str(spec["clusterIP"])]
        headless_selectorless = (ips[:1] == [_NONE]) and not spec.get("selector")
        policy = spec.get("ipFamilyPolicy")
        if policy is None:
            policy = spec["ipFamilyPolicy"] = "RequireDualStack" if headless_selectorless else "SingleStack"
        if policy not in ("SingleStack", "PreferDualStack", "RequireDualStack"):
            return [FieldError("FieldValueNotSupported", "spec.ipFamilyPolicy", policy,
                               'supported values: "PreferDualStack", "RequireDualStack", "SingleStack"')]
        families = spec.get("ipFamilies")
        families = [str(f) for f in families] if isinstance(families, list) else []
        errors: list[FieldError] = []
        for i, ip in enumerate(ips):
            if ip == _NONE:
                break
            try:
                family = "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
            except ValueError:
                errors.append(invalid(f"spec.clusterIPs[{i}]", ip, _IP_EXAMPLE))
                continue
            if i >= len(families):
                if family != self.ips.family:
                    errors.append(invalid(f"spec.clusterIPs[{i}]", ips, f"{family} is not configured on this cluster"))
                else:
                    families.append(family)
        if errors:
            return errors
        if headless_selectorless:
            families = families or [self.ips.family]
            if len(families) < 2 and policy != "SingleStack":
                families.append("IPv6" if families[0] == "IPv4" else "IPv4")
            spec["ipFamilies"] = families
            return []
        if policy == "RequireDualStack":
            errors.append(invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
        for i, family in enumerate(families):
            if family != self.ips.family:
                errors.append(invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster"))
        spec["ipFamilies"] = families or [self.ips.family]
        return errors

    def _cluster_ip(self, spec: dict[str, Any], others: list[dict[str, Any]]) -> list[FieldError]:
        ips = _cluster_ips(spec) or ([str(spec["clusterIP"])] if spec.get("clusterIP") else [])
        if ips[:1] == [_NONE]:
            spec["clusterIP"], spec["clusterIPs"] = _NONE, [_NONE]
            return []
        taken = {ip for other in others for ip in _cluster_ips(other)}
        try:
            ip = self.ips.allocate(ips[0], taken) if ips else self.ips.allocate_next(taken)
        except AllocationError as err:
            return [invalid("spec.clusterIPs", ips, f"failed to allocate IP {ips[0]}: {err}")] if ips else \
                [FieldError("InternalError", "spec.clusterIPs", detail=f"failed to allocate a serviceIP: {err}")]
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        return []

    def _allocate_node_ports(self, spec: dict[str, Any], others: list[dict[str, Any]]) -> list[FieldError]:
        taken = {port for other in others for port in _node_ports(other)}
        needs_ports = _type(spec) in _NODE_PORT_TYPES and not (
            _type(spec) == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is False)
        by_service_port: dict[Any, int] = {}
        mine: set[int] = set()
        for i, port in enumerate(_ports(spec)):
            requested = port.get("nodePort")
            if not requested and not needs_ports:
                continue
            shared = by_service_port.get(port.get("port"))
            if shared is not None and not requested:
                port["nodePort"] = shared
                continue
            try:
                if requested:
                    value = requested if requested in mine else self.ports.allocate(int(requested), taken)
                else:
                    value = self.ports.allocate_next(taken | mine)
            except (AllocationError, TypeError, ValueError) as err:
                return [invalid(f"spec.ports[{i}].nodePort", requested, str(err))] if requested else \
                    [FieldError("InternalError", f"spec.ports[{i}].nodePort", detail=f"failed to allocate a nodePort: {err}")]
            port["nodePort"] = value
            mine.add(value)
            by_service_port.setdefault(port.get("port"), value)
        if _needs_health_check(spec):
            requested = spec.get("healthCheckNodePort")
            try:
                spec["healthCheckNodePort"] = (self.ports.allocate(int(requested), taken | mine) if requested
                                               else self.ports.allocate_next(taken | mine))
            except (AllocationError, TypeError, ValueError) as err:
                return [invalid("spec.healthCheckNodePort", requested, str(err))]
        return []


def _others(obj: Obj, peers: Iterable[Obj]) -> Iterable[dict[str, Any]]:
    """The specs of the stored Services other than ``obj`` itself."""
    meta = obj.get("metadata") or {}
    me = (meta.get("namespace"), meta.get("name"))
    for peer in peers:
        peer_meta = peer.get("metadata") or {}
        if (peer_meta.get("namespace"), peer_meta.get("name")) != me:
            yield _spec(peer)
