"""IP address and CIDR validation with Kubernetes' messages: k8s.io/apimachinery
pkg/util/validation/ip.go (``IsValidIP``, ``IsValidCIDR``, of 1.37), over Go's parsers
(k8s.io/utils/net ``ParseIPSloppy``/``ParseCIDRSloppy``, which accept IPv4 octets with leading
zeros, and net/netip's strict ``ParseAddr``/``ParsePrefix``).

Each function returns the messages (the details of kube's field errors) for one value.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["cidr_errors", "cidr_family", "ip_errors"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_SLOPPY_V4 = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)")
_DIGITS = re.compile(r"[0-9]+")


def _parse_sloppy(value: str) -> tuple[Address | None, bool]:
    """Go's ParseIPSloppy: the address (None: not one), and whether netip's strict ParseAddr
    accepts the text too (no IPv4 octet with a leading zero; no IPv6 zone, which neither takes)."""
    if "%" in value:
        return None, False
    try:
        return ipaddress.ip_address(value), True
    except ValueError:
        pass
    match = _SLOPPY_V4.fullmatch(value)
    if match is None:
        return None, False
    octets = [int(part) for part in match.groups()]
    if any(octet > 255 for octet in octets):
        return None, False
    return ipaddress.IPv4Address(".".join(map(str, octets))), False


def _go_string(addr: Address) -> str:
    """net.IP.String(): an IPv4-mapped IPv6 address prints as IPv4."""
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return addr.compressed


def ip_errors(value: str) -> list[str]:
    """IsValidIP: a strictly valid IP address in canonical form."""
    addr, strict = _parse_sloppy(value)
    if addr is None:
        return [_INVALID_IP]
    errors = [] if strict else ["must not have leading 0s"]
    if strict and isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        errors.append("must not be an IPv4-mapped IPv6 address")
    if errors:
        return errors
    canonical = _go_string(addr)
    return [] if value == canonical else [f'must be in canonical form ("{canonical}")']


def _parse_cidr_sloppy(value: str) -> tuple[Address, int] | None:
    """Go's ParseCIDRSloppy: the address and prefix length (None: not a CIDR)."""
    addr_text, slash, bits_text = value.partition("/")
    if not slash or not _DIGITS.fullmatch(bits_text):
        return None
    addr, _ = _parse_sloppy(addr_text)
    if addr is None:
        return None
    bits = int(bits_text)
    return (addr, bits) if bits <= addr.max_prefixlen else None


def cidr_family(value: str) -> int | None:
    """The IP family (4 or 6) of a CIDR as k8s.io/utils/net sees it (an IPv4-mapped IPv6 one is
    IPv4), None when it does not parse."""
    parsed = _parse_cidr_sloppy(value)
    if parsed is None:
        return None
    addr = parsed[0]
    return 4 if isinstance(addr, ipaddress.IPv4Address) or addr.ipv4_mapped is not None else 6


def cidr_errors(value: str) -> list[str]:
    """IsValidCIDR: a strictly valid CIDR in canonical form."""
    parsed = _parse_cidr_sloppy(value)
    if parsed is None:
        return [_INVALID_CIDR]
    addr, bits = parsed
    addr_text, _, bits_text = value.partition("/")
    strict = _parse_sloppy(addr_text)[1] and (bits_text == "0" or not bits_text.startswith("0"))
    network = ipaddress.ip_network((addr, bits), strict=False)
    if not strict:
        return ["must not have leading 0s in IP or prefix length"]
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return ["must not have an IPv4-mapped IPv6 address"]
    if network.network_address != addr:
        return ["must not have bits set beyond the prefix length"]
    canonical = f"{network.network_address.compressed}/{bits}"
    return [] if value == canonical else [f'must be in canonical form ("{canonical}")']
