"""networking.k8s.io/v1 ServiceCIDR and IPAddress validation, as kube-apiserver's strategies run
pkg/apis/networking/validation:

- ServiceCIDR (``ValidateServiceCIDR``): ``spec.cidrs`` at least one, at most two, two of them
  one per IP family, each a strictly valid CIDR in canonical form (apimachinery's
  ``IsValidCIDR``: ``ipvalidation``); on update (``ValidateServiceCIDRUpdate``) the CIDRs are
  immutable, except that a single-stack ServiceCIDR may become dual-stack by adding a second
  CIDR after its own (kubernetes/kubernetes#131263, 1.33);
- IPAddress (``ValidateIPAddress``): the name a canonical IP address (``ValidateIPAddressName``,
  in ``validation``), ``spec.parentRef`` required, its group a DNS subdomain, resource and name
  required path segments, namespace a path segment; on update ``spec.parentRef`` is immutable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver.ipvalidation import cidr_errors, cidr_family
from samplecontroller.apiserver.objects import as_mapping as _dict
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError, GoRaw, invalid, required
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.validation import dns1123_subdomain_errors, path_segment_errors

__all__ = ["IPAddressStrategy", "ServiceCIDRStrategy", "validate_ip_address", "validate_service_cidr"]

_CIDRS = "spec.cidrs"
_IMMUTABLE = "field is immutable"


def _cidrs(obj: Mapping[str, Any]) -> list[Any]:
    cidrs = _dict(obj.get("spec")).get("cidrs")
    return cidrs if isinstance(cidrs, list) else []


def _go_json(value: Any) -> GoRaw:
    """encoding/json of a value (field errors print complex values so)."""
    return GoRaw(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _internal_spec(cidrs: list[Any]) -> GoRaw:
    """The internal networking.ServiceCIDRSpec kube puts in these errors, as encoding/json prints
    it (the internal type has no JSON tags)."""
    return _go_json({"CIDRs": cidrs})


def validate_service_cidr(obj: Mapping[str, Any]) -> list[FieldError]:
    """ValidateServiceCIDR's spec rules."""
    cidrs = _cidrs(obj)
    if not cidrs:
        return [required(_CIDRS, "at least one CIDR required")]
    if len(cidrs) > 2:
        return [invalid(_CIDRS, _internal_spec(cidrs), "may only hold up to 2 values")]
    if len(cidrs) == 2:  # netutils.IsDualStackCIDRStrings
        families = [cidr_family(c) if isinstance(c, str) else None for c in cidrs]
        if None in families or families[0] == families[1]:
            return [invalid(_CIDRS, _internal_spec(cidrs), "may specify no more than one IP for each IP family, "
                            "i.e 192.168.0.0/24 and 2001:db8::/64")]
    return [invalid(f"{_CIDRS}[{i}]", cidr, m)
            for i, cidr in enumerate(cidrs) for m in cidr_errors(str(cidr))]


def validate_service_cidr_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """ValidateServiceCIDRUpdate: the CIDRs keep their values; one may be added to a single one."""
    new, before = _cidrs(obj), _cidrs(old)
    if len(new) == len(before):
        return [invalid(f"{_CIDRS}[{i}]", cidr, _IMMUTABLE) for i, (cidr, was) in enumerate(zip(new, before, strict=True))
                if cidr != was]
    if len(before) == 1 and len(new) == 2:
        return [] if new[0] == before[0] else [invalid(f"{_CIDRS}[0]", new[0], _IMMUTABLE)]
    return [invalid(_CIDRS, _go_json(new), _IMMUTABLE)]


def validate_ip_address(obj: Mapping[str, Any]) -> list[FieldError]:
    """ValidateIPAddress's spec rule (validateIPAddressParentReference)."""
    ref = _dict(obj.get("spec")).get("parentRef")
    if not isinstance(ref, Mapping):
        return [required("spec.parentRef")]
    path = "spec.parentRef"
    errors: list[FieldError] = []
    group = str(ref.get("group") or "")
    if group:
        errors += [invalid(f"{path}.group", group, m) for m in dns1123_subdomain_errors(group)]
    for key in ("resource", "name"):
        value = str(ref.get(key) or "")
        if not value:
            errors.append(required(f"{path}.{key}"))
        else:
            errors += [invalid(f"{path}.{key}", value, m) for m in path_segment_errors(value)]
    namespace = str(ref.get("namespace") or "")
    if namespace:
        errors += [invalid(f"{path}.namespace", namespace, m) for m in path_segment_errors(namespace)]
    return errors


def _internal_parent(ref: Any) -> GoRaw:
    """The internal *networking.ParentReference as encoding/json prints it."""
    if not isinstance(ref, Mapping):
        return GoRaw("null")
    return _go_json({"Group": ref.get("group") or "", "Resource": ref.get("resource") or "",
                     "Namespace": ref.get("namespace") or "", "Name": ref.get("name") or ""})


def _merged(own: list[FieldError], schema: list[FieldError]) -> list[FieldError]:
    """kube's errors, then the schema's that they do not repeat (a missing parentRef is one
    ``Required value``, not two)."""
    return own + [e for e in schema if e not in own]


class ServiceCIDRStrategy(Strategy):
    """ValidateServiceCIDR and ValidateServiceCIDRUpdate."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return _merged(validate_service_cidr(obj), super().validate(res, obj, sch))

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [] if old is None else validate_service_cidr_update(obj, old)


class IPAddressStrategy(Strategy):
    """ValidateIPAddress and ValidateIPAddressUpdate."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return _merged(validate_ip_address(obj), super().validate(res, obj, sch))

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        ref, was = _dict(obj.get("spec")).get("parentRef"), _dict(old.get("spec")).get("parentRef")
        return [] if ref == was else [invalid("spec.parentRef", _internal_parent(ref), _IMMUTABLE)]
