"""ServiceCIDR and IPAddress validation as kube-apiserver runs pkg/apis/networking/validation
over apimachinery's IP/CIDR checks (``strategies.networking``, ``ipvalidation``), through the
kinds' strategies and the object meta check as the server runs them."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies import for_kind
from samplecontroller.apiserver.validation import validate_object_meta

_CIDR_RES = Resource("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", namespaced=False)
_IP_RES = Resource("networking.k8s.io", "v1", "ipaddresses", "IPAddress", namespaced=False)
_PARENT = {"group": "", "resource": "services", "namespace": "default", "name": "web"}


def _cidr(*cidrs: Any) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": "c"},
            "spec": {"cidrs": list(cidrs)}}


def _ip(name: str, parent: Any = _PARENT) -> dict[str, Any]:
    spec = {} if parent is None else {"parentRef": parent}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": name}, "spec": spec}


def _errors(res: Resource, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    strategy = for_kind(res.group, res.kind)
    errors = validate_object_meta(obj, False) + strategy.validate(res, obj, None)
    return [str(e) for e in errors + strategy.validate_extra(obj, old)]


_DUAL = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
CIDR_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("one", _cidr("10.0.0.0/24"), []),
    ("dual", _cidr("10.0.0.0/24", "2001:db8::/64"), []),
    ("none", _cidr(), ["spec.cidrs: Required value: at least one CIDR required"]),
    ("not a CIDR", _cidr("foo"),
     ['spec.cidrs[0]: Invalid value: "foo": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']),
    ("three", _cidr("10.0.0.0/24", "10.1.0.0/24", "2001:db8::/64"),
     ['spec.cidrs: Invalid value: {"CIDRs":["10.0.0.0/24","10.1.0.0/24","2001:db8::/64"]}: may only hold up '
      "to 2 values"]),
    ("two of a family", _cidr("10.0.0.0/24", "10.1.0.0/24"),
     [f'spec.cidrs: Invalid value: {{"CIDRs":["10.0.0.0/24","10.1.0.0/24"]}}: {_DUAL}']),
    ("two, one invalid", _cidr("10.0.0.0/24", "foo"),
     [f'spec.cidrs: Invalid value: {{"CIDRs":["10.0.0.0/24","foo"]}}: {_DUAL}']),
    ("trailing newline", _cidr("10.0.0.0/8\n"),
     ['spec.cidrs[0]: Invalid value: "10.0.0.0/8\\n": must be a valid CIDR value, (e.g. 10.9.8.0/24 or '
      "2001:db8::/64)"]),
    ("host bits", _cidr("10.0.0.1/24"),
     ['spec.cidrs[0]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length']),
    ("leading zeros", _cidr("010.0.0.0/8"),
     ['spec.cidrs[0]: Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length']),
    ("IPv4-mapped", _cidr("::ffff:10.0.0.0/120"),
     ['spec.cidrs[0]: Invalid value: "::ffff:10.0.0.0/120": must not have an IPv4-mapped IPv6 address']),
    ("not canonical", _cidr("2001:DB8::/64"),
     ['spec.cidrs[0]: Invalid value: "2001:DB8::/64": must be in canonical form ("2001:db8::/64")']),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CIDR_CASES], ids=[c[0] for c in CIDR_CASES])
def test_service_cidr(obj: dict[str, Any], expected: list[str]) -> None:
    assert _errors(_CIDR_RES, obj) == expected


def test_service_cidr_update() -> None:
    """The CIDRs are immutable; a single-stack ServiceCIDR may add a CIDR of the other family."""
    single, dual = _cidr("10.0.0.0/24"), _cidr("10.0.0.0/24", "2001:db8::/64")
    assert _errors(_CIDR_RES, dual, single) == []
    assert _errors(_CIDR_RES, _cidr("10.1.0.0/24"), single) == [
        'spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable']
    assert _errors(_CIDR_RES, _cidr("10.1.0.0/24", "2001:db8::/64"), single) == [
        'spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable']
    assert _errors(_CIDR_RES, single, dual) == ['spec.cidrs: Invalid value: ["10.0.0.0/24"]: field is immutable']


IP_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("ok", _ip("10.96.0.10"), []),
    ("IPv6 ok", _ip("2001:db8::1"), []),
    ("name not an IP", _ip("web"),
     ['metadata.name: Invalid value: "web": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']),
    ("name not canonical", _ip("2001:DB8::1"),
     ['metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")']),
    ("name with leading zeros", _ip("010.0.0.1"),
     ['metadata.name: Invalid value: "010.0.0.1": must not have leading 0s']),
    ("no parentRef", _ip("10.96.0.10", None), ["spec.parentRef: Required value"]),
    ("parentRef fields", _ip("10.96.0.10", {"group": "Bad_Group", "namespace": "a/b"}),
     ['spec.parentRef.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower '
      "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
      "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
      "[a-z0-9])?)*')",
      "spec.parentRef.resource: Required value", "spec.parentRef.name: Required value",
      "spec.parentRef.namespace: Invalid value: \"a/b\": may not contain '/'"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in IP_CASES], ids=[c[0] for c in IP_CASES])
def test_ip_address(obj: dict[str, Any], expected: list[str]) -> None:
    assert _errors(_IP_RES, obj) == expected


def test_ip_address_parent_is_immutable() -> None:
    moved = _ip("10.96.0.10", {**_PARENT, "name": "other"})
    assert _errors(_IP_RES, moved, _ip("10.96.0.10")) == [
        'spec.parentRef: Invalid value: {"Group":"","Resource":"services","Namespace":"default","Name":"other"}: '
        "field is immutable"]
