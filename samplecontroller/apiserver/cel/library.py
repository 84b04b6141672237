"""The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library) for the cel-cpp engine:
lists, sets, regex, URLs, quantity, IP, CIDR and semver (``SemverLib(SemverVersion(1))``, in
kube's base environment since 1.33: ``semver(s)``, ``semver(s, normalize)``, ``isSemver``,
``major``/``minor``/``patch``, ``compareTo``/``isGreaterThan``/``isLessThan``, with
blang/semver v4's parsing and precedence), kube's lists library v1 (``includes``, 1.37) and
cel-go's ext lists at ``ListsVersion(3)`` (since 1.34: ``slice``, ``flatten``, ``sort``, the
``sortBy`` macro, ``lists.range``, ``reverse``, ``distinct``), kube's authorizer library
(``authz``: ``authorizer.group(g).resource(r)...check(verb).allowed()``, 1.27; its selectors,
1.31), which are cel-cpp's ext lists
(``engine.Env(ext_lists=...)``, ``ext_lists(compat_minor)``) but for ``lists.range`` (here:
cel-cpp's fails on a negative size). The strings (version 2), optional types and two-variable
comprehensions extensions come with the engine; what it cannot run is refused by name
(``unsupported``: ``transformMap``/``transformMapEntry``, ``optional.unwrap``/``unwrapOpt``).

Values of the library's own types (``quantity('1Gi')``, ``url(...)``, ``ip(...)``,
``cidr(...)``, ``semver(...)``) are maps with one key, ``@Quantity``/``@URL``/``@IP``/``@CIDR``/
``@Semver``, holding the canonical text: cel-expr-python 0.1 cannot return opaque values from
Python functions. So ``quantity('1Gi') == quantity('1024Mi')`` is true as in Kubernetes (the
canonical text is the exact value; a semver's leaves out build metadata, which its equality
ignores), and the member functions are declared on ``map(string, dyn)`` receivers: the
comparisons quantity and semver share (``compareTo``, ``isGreaterThan``, ``isLessThan``) are one
overload each that dispatches on the tag (two types' values: ``no such overload``).

``INTRODUCED``: the functions of the libraries kube's base environment added after 1.32, by the
minor version that added them (``environment/base.go``'s ``IntroducedVersion``): a rule compiled
for an older compatibility version may not use them.
The format library is ``formats``. Deviations, documented: ``type(ip('::1'))`` is ``map``;
regular expressions of ``find``/``findAll`` are Python's ``re`` (``matches`` is cel-cpp's RE2).

Every function raises ``ValueError`` with Kubernetes' message for bad input; the engine turns
it into an evaluation error.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import urllib.parse
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from cel_expr_python import cel as _cel

from samplecontroller.apimachinery.quantity import parse_quantity as _parse_go_quantity
from samplecontroller.apiserver.cel.authz import AUTHZ, SELECTORS
from samplecontroller.apiserver.cel.fields import mask_strings

__all__ = ["FUNCTIONS", "INTRODUCED", "ext_lists", "functions", "parse_quantity", "parse_semver", "unsupported"]

_T = _cel.Type
_MAP = _T.Map(_T.STRING, _T.DYN)
_LIST = _T.List(_T.DYN)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Tagged = dict[str, str]


def _accepts(parse: Callable[[str], object]) -> Callable[[str], bool]:
    """The ``isX(string)`` function of a parser: true when it does not raise ValueError."""
    def check(text: str) -> bool:
        try:
            parse(text)
        except ValueError:
            return False
        return True
    return check


def _tag(kind: str, text: str) -> Tagged:
    return {"@" + kind: text}


def _untag(kind: str, value: Any) -> str:
    if isinstance(value, dict) and len(value) == 1 and ("@" + kind) in value:
        return str(value["@" + kind])
    raise ValueError("no such overload")


# ---------------------------------------------------------------------------- lists


def _sortable(items: Sequence[Any]) -> list[Any]:
    """The items of a list of one comparable type (kube's comparableTypes: numbers, bool,
    strings, bytes, timestamps, durations), else ``no such overload`` (a dyn list's runtime
    dispatch finding no overload)."""
    kinds = {"bool" if isinstance(i, bool) else "number" if isinstance(i, (int, float)) else type(i).__name__
             for i in items}
    if len(kinds) > 1 or kinds & {"dict", "list", "NoneType"}:
        raise ValueError("no such overload")
    return list(items)


def _is_sorted(items: Sequence[Any]) -> bool:
    values = _sortable(items)
    return all(a <= b for a, b in itertools.pairwise(values))


def _sum(items: Sequence[Any]) -> Any:
    """kube's sum over summableTypes (int, uint, double, duration)."""
    values = _sortable(items)
    if any(isinstance(v, (bool, str, bytes)) for v in values):
        raise ValueError("no such overload")
    if not values:
        return 0
    total = values[0]
    for v in values[1:]:
        total = total + v
    if isinstance(total, int) and not _INT64_MIN <= total <= _INT64_MAX:
        raise ValueError("integer overflow")
    return total


def _min(items: Sequence[Any]) -> Any:
    values = _sortable(items)
    if not values:
        raise ValueError("min(list) called on empty list")
    return min(values)


def _max(items: Sequence[Any]) -> Any:
    values = _sortable(items)
    if not values:
        raise ValueError("max(list) called on empty list")
    return max(values)


def _index_of(items: Sequence[Any], value: Any) -> int:
    return next((i for i, item in enumerate(items) if _cel_equal(item, value)), -1)


def _last_index_of(items: Sequence[Any], value: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if _cel_equal(items[i], value)), -1)


def _includes(target: Any, value: Any) -> bool:
    """kube's lists library v1 ``includes`` (1.37): an element of a list equal to ``value``, or
    any other ``target`` equal to it."""
    if isinstance(target, list):
        return any(_cel_equal(item, value) for item in target)
    return _cel_equal(target, value)


def _contains_all(items: Sequence[Any], wanted: Sequence[Any]) -> bool:
    return all(any(_cel_equal(w, i) for i in items) for w in wanted)


def _cel_equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality on plain values (``1 == 1.0``, but ``true != 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


# ------------------------------------------------------ cel-go ext lists (ListsVersion(3))
# cel-cpp's ext lists (``engine.Env(ext_lists=True)``) but for lists.range

_MAX_RANGE = 10_000_000


def _range(n: int) -> list[int]:
    """cel-go's genRange: ``[0, n)``, empty for ``n <= 0``; beyond ``_MAX_RANGE`` (ten times
    kube's per-call cost limit, which such a list's runtime cost exceeds) refused with kube's
    cost error rather than built."""
    if n > _MAX_RANGE:
        raise ValueError("operation cancelled: actual cost limit exceeded")
    return list(range(max(n, 0)))


# ---------------------------------------------------------------------------- regex


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError(f"error parsing regexp: {err}") from None


def _find(s: str, pattern: str) -> str:
    found = _regex(pattern).search(s)
    return found.group(0) if found else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    matches = [m.group(0) for m in _regex(pattern).finditer(s)]
    return matches if limit < 0 else matches[:limit]


# ---------------------------------------------------------------------------- quantity

_MAX_QUANTITY_EXPONENT = 4096
"""CEL quantities are exact Fractions here: one past 10^4096 (``1e2000000000`` parses in Go, an
inf.Dec with a scale) is refused rather than computed."""


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity (``1Gi``, ``500m``, ``1e3``) as
    ``resource.ParseQuantity`` reads it (``samplecontroller.apimachinery.quantity``: rounded up to
    the nano scale, a binary one capped at 2^63-1, ``Gi`` alone is 0 as in Go); ValueError if bad."""
    quantity = _parse_go_quantity(text)
    if quantity.exponent > _MAX_QUANTITY_EXPONENT:
        raise ValueError(f"quantity {text!r} is not supported here: its value exceeds 10^{_MAX_QUANTITY_EXPONENT}")
    return quantity.value()


def _q(value: Any) -> Fraction:
    return Fraction(_untag("Quantity", value))


def _quantity(text: str) -> Tagged:
    return _tag("Quantity", str(parse_quantity(text)))


def _as_integer(value: Any) -> int:
    q = _q(value)
    if q.denominator != 1 or not _INT64_MIN <= q.numerator <= _INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return q.numerator


def _compare(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _q_add(a: Any, b: Any) -> Tagged:
    other = Fraction(b) if isinstance(b, int) else _q(b)
    return _tag("Quantity", str(_q(a) + other))


def _q_sub(a: Any, b: Any) -> Tagged:
    other = Fraction(b) if isinstance(b, int) else _q(b)
    return _tag("Quantity", str(_q(a) - other))


# ---------------------------------------------------------------------------- semver

_NUMBERS = frozenset("0123456789")
_ALPHANUM = _NUMBERS | frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = 2**64 - 1


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (the ASCII cases semver messages show)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _parse_uint(text: str) -> int:
    """strconv.ParseUint(text, 10, 64) of a string of digits (or empty)."""
    if not text:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise ValueError(f"strconv.ParseUint: parsing {_go_quote(text)}: value out of range")
    return value


def _number(text: str, part: str) -> int:
    if not set(text) <= _NUMBERS:
        raise ValueError(f"Invalid character(s) found in {part.lower()} number {_go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{part} number must not contain leading zeroes {_go_quote(text)}")
    return _parse_uint(text)


def _prerelease(text: str) -> int | str:
    if not text:
        raise ValueError("Prerelease is empty")
    if set(text) <= _NUMBERS:
        if len(text) > 1 and text[0] == "0":
            raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(text)}")
        return _parse_uint(text)
    if set(text) <= _ALPHANUM:
        return text
    raise ValueError(f"Invalid character(s) found in prerelease {_go_quote(text)}")


SemverParts = tuple[int, int, int, tuple[int | str, ...]]


def parse_semver(text: str, normalize: bool = False) -> SemverParts:
    """(major, minor, patch, prerelease) of a semantic version as blang/semver v4's ``Parse``
    reads it (build metadata checked, then dropped); ``normalize``: kube's normalizeAndParse
    first (a leading ``v`` removed, leading zeros removed, a missing minor/patch added).
    ValueError with blang/semver's message when it is not one."""
    if normalize:
        text = _normalize_semver(text)
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "Major"), _number(parts[1], "Minor")
    patch_text, build, pre = parts[2], [], []
    if "+" in patch_text:
        patch_text, _, tail = patch_text.partition("+")
        build = tail.split(".")
    if "-" in patch_text:
        patch_text, _, tail = patch_text.partition("-")
        pre = tail.split(".")
    patch = _number(patch_text, "Patch")
    prerelease = tuple(_prerelease(p) for p in pre)
    for item in build:
        if not item:
            raise ValueError("Build meta data is empty")
        if not set(item) <= _ALPHANUM:
            raise ValueError(f"Invalid character(s) found in build meta data {_go_quote(item)}")
    return major, minor, patch, prerelease


def _normalize_semver(text: str) -> str:
    """kube's normalizeAndParse rewriting (semverlib.go), before blang/semver parses it."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver_text(parts: SemverParts) -> str:
    major, minor, patch, pre = parts
    text = f"{major}.{minor}.{patch}"
    return text + "-" + ".".join(str(p) for p in pre) if pre else text


def _semver(text: str, normalize: bool = False) -> Tagged:
    return _tag("Semver", _semver_text(parse_semver(text, normalize)))


def _v(value: Any) -> SemverParts:
    return parse_semver(_untag("Semver", value))


def _semver_compare(a: SemverParts, b: SemverParts) -> int:
    """blang/semver's Version.Compare: numbers, then a release above its prereleases, then
    the prerelease identifiers (numeric below alphanumeric), then the longer list."""
    for n, m in zip(a[:3], b[:3], strict=True):
        if n != m:
            return 1 if n > m else -1
    pa, pb = a[3], b[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb, strict=False):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return 1 if x > y else -1
        if isinstance(x, str) and isinstance(y, str):
            return 1 if x > y else -1
        return -1 if isinstance(x, int) else 1
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def _as_int64(value: int) -> int:
    """Go's ``types.Int(uint64)``: a version number beyond int64 wraps around."""
    return ((value + 2**63) % 2**64) - 2**63


def _ordered(a: Any, b: Any) -> int:
    """``compareTo`` of two quantities or two semvers (the overload both libraries declare)."""
    if isinstance(a, dict) and "@Semver" in a:
        return _semver_compare(_v(a), _v(b))
    return _compare(_q(a), _q(b))


# ---------------------------------------------------------------------------- URLs


def _parse_url(text: str) -> urllib.parse.SplitResult:
    try:
        parts = urllib.parse.urlsplit(text)
        _ = parts.port
    except ValueError as err:
        raise ValueError(f"URL parse error during conversion from string: {err}") from None
    if not parts.scheme and not text.startswith("/"):
        raise ValueError("URL parse error during conversion from string: "
                         f"parse {text!r}: invalid URI for request".replace("'", '"'))
    return parts


def _url(text: str) -> Tagged:
    _parse_url(text)
    return _tag("URL", text)


def _u(value: Any) -> urllib.parse.SplitResult:
    return _parse_url(_untag("URL", value))


def _host(value: Any) -> str:
    return _u(value).netloc.rsplit("@", 1)[-1]


def _hostname(value: Any) -> str:
    host = _host(value)
    if host.startswith("["):
        return host[1:host.index("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if ":" in host else host


def _port(value: Any) -> str:
    host = _host(value)
    tail = host.rsplit("]", 1)[-1]
    return tail.rsplit(":", 1)[1] if ":" in tail else ""


def _query(value: Any) -> dict[str, list[str]]:
    return {k: v for k, v in urllib.parse.parse_qs(_u(value).query, keep_blank_values=True).items()}


# ---------------------------------------------------------------------------- IP and CIDR


def _parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in text:
        raise ValueError("IP Address with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string: "
                         f"ParseAddr({text!r}): unable to parse IP".replace("'", '"')) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError("IPv4-mapped IPv6 address is not allowed")
    return addr


def _ip(text: str) -> Tagged:
    return _tag("IP", str(_parse_ip(text)))


def _a(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_untag("IP", value))


def _to_string(value: Any) -> str:
    """``string(ip)`` / ``string(cidr)``: the canonical text."""
    if isinstance(value, dict) and len(value) == 1 and ("@IP" in value or "@CIDR" in value):
        return str(next(iter(value.values())))
    raise ValueError("no such overload")


def _is_global_unicast(value: Any) -> bool:
    """Go's netip.Addr.IsGlobalUnicast: private ranges count, the special ones do not."""
    addr = _a(value)
    if addr.version == 4 and str(addr) == "255.255.255.255":
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local)


def _is_link_local_multicast(value: Any) -> bool:
    addr = _a(value)
    if addr.version == 4:
        return str(addr).startswith("224.0.0.")
    return addr.is_multicast and (addr.packed[1] & 0x0F) == 2


def _ip_is_canonical(text: str) -> bool:
    return str(_parse_ip(text)) == text


def _parse_cidr(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    if "%" in text:
        raise ValueError("CIDR with zone value is not allowed")
    try:
        iface = ipaddress.ip_interface(text)
    except ValueError:
        raise ValueError(f"network address {text!r} parse error during conversion from string: "
                         f"netip.ParsePrefix({text!r}): bad prefix".replace("'", '"')) from None
    if "/" not in text:
        raise ValueError(f"network address {text!r} parse error during conversion from string: "
                         f"netip.ParsePrefix({text!r}): no '/'".replace("'", '"'))
    return iface


def _cidr(text: str) -> Tagged:
    _parse_cidr(text)
    return _tag("CIDR", text)


def _c(value: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(_untag("CIDR", value))


def _contains_ip(cidr: Any, ip: Any) -> bool:
    addr = _parse_ip(ip) if isinstance(ip, str) else _a(ip)
    return addr in _c(cidr).network


def _contains_cidr(cidr: Any, other: Any) -> bool:
    inner = (_parse_cidr(other) if isinstance(other, str) else _c(other)).network
    outer = _c(cidr).network
    return inner.version == outer.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def _cidr_ip(value: Any) -> Tagged:
    return _tag("IP", str(_c(value).ip))


def _masked(value: Any) -> Tagged:
    return _tag("CIDR", str(_c(value).network))


# ---------------------------------------------------------------------------- declarations


def _fn(name: str, ret: Any, *overloads: tuple[str, Sequence[Any], bool, Callable[..., Any]]) -> Any:
    return _cel.FunctionDecl(name, [_cel.Overload(oid, ret, list(params), is_member=member, impl=impl)
                                    for oid, params, member, impl in overloads])


_S, _I, _B, _D = _T.STRING, _T.INT, _T.BOOL, _T.DOUBLE

FUNCTIONS: list[Any] = [
    # lists
    # (isSorted, sum, min and max: TYPED_LISTS)
    _fn("indexOf", _I, ("list_index_of", [_LIST, _T.DYN], True, _index_of)),
    _fn("lastIndexOf", _I, ("list_last_index_of", [_LIST, _T.DYN], True, _last_index_of)),
    # sets (cel-go's ext.Sets, in the Kubernetes base environment since 1.29)
    _fn("sets.contains", _B, ("list_sets_contains_list", [_LIST, _LIST], False, _contains_all)),
    _fn("sets.equivalent", _B, ("list_sets_equivalent_list", [_LIST, _LIST], False,
                                lambda a, b: _contains_all(a, b) and _contains_all(b, a))),
    _fn("sets.intersects", _B, ("list_sets_intersects_list", [_LIST, _LIST], False,
                                lambda a, b: any(_cel_equal(x, y) for x in a for y in b))),
    # regex
    _fn("find", _S, ("string_find_string", [_S, _S], True, _find)),
    _fn("findAll", _T.List(_S), ("string_find_all_string", [_S, _S], True, _find_all),
        ("string_find_all_string_int", [_S, _S, _I], True, _find_all)),
    # quantity
    _fn("quantity", _MAP, ("string_to_quantity", [_S], False, _quantity)),
    _fn("isQuantity", _B, ("is_quantity_string", [_S], False, _accepts(parse_quantity))),
    _fn("sign", _I, ("quantity_sign", [_MAP], True, lambda q: _compare(_q(q), Fraction(0)))),
    _fn("isInteger", _B, ("quantity_is_integer", [_MAP], True, lambda q: _q(q).denominator == 1)),
    _fn("asInteger", _I, ("quantity_get_integer", [_MAP], True, _as_integer)),
    _fn("asApproximateFloat", _D, ("quantity_get_float", [_MAP], True, lambda q: float(_q(q)))),
    # (shared with semver: one overload per signature, dispatched on the values' tag)
    _fn("isGreaterThan", _B, ("quantity_is_greater_than", [_MAP, _MAP], True, lambda a, b: _ordered(a, b) > 0)),
    _fn("isLessThan", _B, ("quantity_less_than", [_MAP, _MAP], True, lambda a, b: _ordered(a, b) < 0)),
    _fn("compareTo", _I, ("quantity_compare_to", [_MAP, _MAP], True, _ordered)),
    _fn("add", _MAP, ("quantity_add", [_MAP, _MAP], True, _q_add), ("quantity_add_int", [_MAP, _I], True, _q_add)),
    _fn("sub", _MAP, ("quantity_sub", [_MAP, _MAP], True, _q_sub), ("quantity_sub_int", [_MAP, _I], True, _q_sub)),
    # URLs
    _fn("url", _MAP, ("string_to_url", [_S], False, _url)),
    _fn("isURL", _B, ("is_url_string", [_S], False, _accepts(_parse_url))),
    _fn("getScheme", _S, ("url_get_scheme", [_MAP], True, lambda u: _u(u).scheme)),
    _fn("getHost", _S, ("url_get_host", [_MAP], True, _host)),
    _fn("getHostname", _S, ("url_get_hostname", [_MAP], True, _hostname)),
    _fn("getPort", _S, ("url_get_port", [_MAP], True, _port)),
    _fn("getEscapedPath", _S, ("url_get_escaped_path", [_MAP], True, lambda u: _u(u).path)),
    _fn("getQuery", _T.Map(_S, _T.List(_S)), ("url_get_query", [_MAP], True, _query)),
    # IP
    _fn("ip", _MAP, ("string_to_ip", [_S], False, _ip), ("cidr_ip", [_MAP], True, _cidr_ip)),
    _fn("string", _S, ("ip_or_cidr_to_string", [_MAP], False, _to_string)),
    _fn("isIP", _B, ("is_ip", [_S], False, _accepts(_parse_ip))),
    _fn("ip.isCanonical", _B, ("ip_is_canonical", [_S], False, _ip_is_canonical)),
    _fn("family", _I, ("ip_family", [_MAP], True, lambda a: _a(a).version)),
    _fn("isUnspecified", _B, ("ip_is_unspecified", [_MAP], True, lambda a: _a(a).is_unspecified)),
    _fn("isLoopback", _B, ("ip_is_loopback", [_MAP], True, lambda a: _a(a).is_loopback)),
    _fn("isLinkLocalMulticast", _B, ("ip_is_link_local_multicast", [_MAP], True,
                                     _is_link_local_multicast)),
    _fn("isLinkLocalUnicast", _B, ("ip_is_link_local_unicast", [_MAP], True,
                                   lambda a: _a(a).is_link_local and not _a(a).is_multicast)),
    _fn("isGlobalUnicast", _B, ("ip_is_global_unicast", [_MAP], True, _is_global_unicast)),
    # CIDR
    _fn("cidr", _MAP, ("string_to_cidr", [_S], False, _cidr)),
    _fn("isCIDR", _B, ("is_cidr", [_S], False, _accepts(_parse_cidr))),
    _fn("containsIP", _B, ("cidr_contains_ip_string", [_MAP, _S], True, _contains_ip),
        ("cidr_contains_ip_ip", [_MAP, _MAP], True, _contains_ip)),
    _fn("containsCIDR", _B, ("cidr_contains_cidr_string", [_MAP, _S], True, _contains_cidr),
        ("cidr_contains_cidr", [_MAP, _MAP], True, _contains_cidr)),
    _fn("masked", _MAP, ("cidr_masked", [_MAP], True, _masked)),
    _fn("prefixLength", _I, ("cidr_prefix_length", [_MAP], True, lambda c: _c(c).network.prefixlen)),
]

_SEMVER: list[Any] = [
    # semver (SemverVersion(1): the normalize overloads)
    _fn("semver", _MAP, ("string_to_semver", [_S], False, _semver),
        ("string_bool_to_semver", [_S, _B], False, _semver)),
    _fn("isSemver", _B, ("is_semver_string", [_S], False, _accepts(parse_semver)),
        ("is_semver_string_bool", [_S, _B], False, lambda s, n: _accepts(lambda t: parse_semver(t, n))(s))),
    _fn("major", _I, ("semver_major", [_MAP], True, lambda v: _as_int64(_v(v)[0]))),
    _fn("minor", _I, ("semver_minor", [_MAP], True, lambda v: _as_int64(_v(v)[1]))),
    _fn("patch", _I, ("semver_patch", [_MAP], True, lambda v: _as_int64(_v(v)[2]))),
]

_LISTS: list[Any] = [
    # cel-go's ext.Lists(ext.ListsVersion(3)) is cel-cpp's (engine.Env(ext_lists=True)) but for
    # lists.range, which the engine compiles as this function (cel-cpp's fails on a negative size)
    _fn("__listRange", _T.List(_I), ("lists_range", [_I], False, _range)),
]

_LISTS_V1: list[Any] = [
    # kube's lists library at ListsVersion(1) (1.37): includes
    _fn("includes", _B, ("list_includes_dyn_dyn", [_T.DYN, _T.DYN], True, _includes)),
]

_COMPARABLE = ("int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp",
               "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "google.protobuf.Duration")
_TYPE_NAMES = {"google.protobuf.Duration": "duration", "google.protobuf.Timestamp": "timestamp"}


def _typed_lists() -> tuple[str, dict[str, Callable[..., Any]]]:
    """kube's lists library's typed overloads (lists.go: ``list_<type>_is_sorted_bool`` over
    comparableTypes, ``list_<type>_sum_<type>`` over summableTypes, ``min``/``max``): declared in
    the engine's environment configuration (its functions section), so a list of another
    element type does not compile, as in kube; one implementation each (the binding's runtime
    tells list overloads apart by kind only), on the last overload (bytes, duration), whose
    result is declared dyn (the binding converts an implementation's result to its overload's
    declared type): ``[b'a'].max()`` is typed dyn, not bytes."""
    lines: list[str] = []
    impls: dict[str, Callable[..., Any]] = {}
    for name, types, result, impl in (("isSorted", _COMPARABLE, "bool", _is_sorted), ("sum", _SUMMABLE, "", _sum),
                                      ("min", _COMPARABLE, "", _min), ("max", _COMPARABLE, "", _max)):
        lines += [f'  - name: "{name}"', "    overloads:"]
        for t in types:
            short = _TYPE_NAMES.get(t, t)
            oid = f"list_{short}_is_sorted_bool" if name == "isSorted" else f"list_{short}_{name}_{short}"
            returns = result or t
            if t == types[-1]:
                impls[oid] = impl
                returns = result or "dyn"  # what the implementation returns is converted to this
            lines += [f'      - id: "{oid}"', "        target:", '          type_name: "list"',
                      f'          params: [{{type_name: "{t}"}}]', f'        return: {{type_name: "{returns}"}}']
    return "\n".join(lines) + "\n", impls


TYPED_LISTS, TYPED_LIST_IMPLS = _typed_lists()
"""The functions section (YAML) and the implementations by overload id of kube's typed lists
functions, for ``engine.Env`` (in every compatibility version: 1.24)."""

FUNCTIONS += AUTHZ  # kube's authorizer library (1.27: ``authz``)
_BASE = list(FUNCTIONS)
_VERSIONED: tuple[tuple[int, list[Any]], ...] = ((31, SELECTORS), (33, _SEMVER), (34, _LISTS), (37, _LISTS_V1))
FUNCTIONS += SELECTORS + _SEMVER + _LISTS + _LISTS_V1

INTRODUCED: dict[str, int] = {
    **dict.fromkeys(("fieldSelector", "labelSelector"), 31),
    **dict.fromkeys(("semver", "isSemver", "major", "minor", "patch"), 33),
    **dict.fromkeys(("slice", "flatten", "sort", "lists.range", "reverse", "distinct", "sortBy"), 34),
    "includes": 37,
}
"""Function name -> the minor version whose base environment added it (environment/base.go's
``IntroducedVersion``: the authorizer library's selectors 1.31, the semver library 1.33, ext lists v3 1.34, kube's lists library v1 with
``includes`` 1.37: a new expression can use it only once the compatibility version, the emulated
one minus one, is 1.37; stored expressions can already)."""

_UNSUPPORTED = re.compile(r"\.\s*(transformMap|transformMapEntry|unwrapOpt)\s*\(|\boptional\s*\.\s*(unwrap)\s*\(")
_WHY = {
    "transformMap": "a macro of cel-go's ext.TwoVarComprehensions",
    "transformMapEntry": "a macro of cel-go's ext.TwoVarComprehensions",
    "unwrapOpt": "cel-go's optional types v2",
    "unwrap": "cel-go's optional types v2",
}
_SORT_BY_ARGUMENT = re.compile(r"\.\s*sortBy\s*\(\s*")
_IDENT_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*[,)]")


def unsupported(source: str) -> str | None:
    """What this engine cannot compile in a rule kube accepts, named (``None``: nothing):
    ``transformMap``/``transformMapEntry`` (cel-cpp's runtime lacks their ``cel.@mapInsert``
    in this binding), ``optional.unwrap``/``unwrapOpt`` (cel-cpp's optional library has neither);
    and cel-go's error for a ``sortBy`` whose variable is not an identifier (cel-cpp's macro
    leaves it to evaluation)."""
    masked = mask_strings(source)
    found = _UNSUPPORTED.search(masked)
    if found is not None:
        name = found.group(1) or found.group(2)
        where = found.start(1) if found.group(1) else found.start()
        return f"ERROR: <input>:1:{where + 1}: {name} ({_WHY[name]}) is not supported by this server's CEL engine"
    for call in _SORT_BY_ARGUMENT.finditer(masked):
        if not _IDENT_ARGUMENT.match(masked, call.end()):
            return f"ERROR: <input>:1:{call.end() + 1}: argument is not an identifier"
    return None


def functions(compat_minor: int) -> list[Any]:
    """The library functions of kube's base environment at compatibility version
    ``1.<compat_minor>`` (``FUNCTIONS`` without those ``INTRODUCED`` later)."""
    return _BASE + [decl for since, decls in _VERSIONED if since <= compat_minor for decl in decls]


def ext_lists(compat_minor: int) -> bool:
    """Whether kube's base environment at compatibility version ``1.<compat_minor>`` has cel-go's
    ext lists (``engine.Env``'s ``ext_lists``: since 1.34)."""
    return compat_minor >= INTRODUCED["slice"]
