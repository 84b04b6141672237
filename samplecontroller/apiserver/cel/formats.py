"""The Kubernetes format library (``format.dns1123Label().validate(self)`` -> an optional list
of error messages, none when valid), for the cel-cpp engine.

cel-expr-python 0.1 cannot return optionals from Python functions, so a rule's source is
rewritten before compilation: ``format.NAME().validate(ARG)`` becomes a ``cel.bind`` over the
internal ``__formatValidate('NAME', ARG)`` (a list) that yields ``optional.none()`` when the list is
empty and ``optional.of(list)`` otherwise: the same value and type as in Kubernetes. Unknown
format names are left alone and fail to compile (``undeclared reference``), as upstream.
``format.named(...)`` is not offered (documented deviation).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from cel_expr_python import cel as _cel

from samplecontroller.apiserver import validation
from samplecontroller.apiserver.cel.engine import CompileError
from samplecontroller.apiserver.cel.fields import STRING_LITERAL
from samplecontroller.apiserver.cel.library import unsupported

__all__ = ["FORMATS", "FUNCTIONS", "rewrite"]

_CALL = re.compile(r"(?<![\w.])format\.(\w+)\(\s*\)\s*\.\s*validate\s*\(")


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """The ``...Prefix`` formats: a trailing ``-`` is allowed (generateName prefixes)."""
    return lambda v: check(v[:-1] if v.endswith("-") else v)


def _uri(value: str) -> list[str]:
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(value)
    except ValueError as err:
        return [str(err)]
    return [] if parts.scheme or value.startswith("/") else ["invalid URI"]


def _uuid(value: str) -> list[str]:
    try:
        uuid.UUID(value)
    except ValueError:
        return ["does not match the UUID format"]
    return []


def _byte(value: str) -> list[str]:
    import base64
    import binascii
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    try:
        date.fromisoformat(value)
    except ValueError:
        return ["invalid date"]
    return [] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else ["invalid date"]


def _datetime(value: str) -> list[str]:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ["invalid datetime"]
    return []


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": validation.dns1123_label_errors,
    "dns1123Subdomain": validation.dns1123_subdomain_errors,
    "dns1035Label": validation.dns1035_label_errors,
    "qualifiedName": validation.qualified_name_errors,
    "dns1123LabelPrefix": _prefix(validation.dns1123_label_errors),
    "dns1123SubdomainPrefix": _prefix(validation.dns1123_subdomain_errors),
    "dns1035LabelPrefix": _prefix(validation.dns1035_label_errors),
    "labelValue": validation.label_value_errors,
    "uri": _uri,
    "uuid": _uuid,
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}


def _validate(name: str, value: Any) -> list[str]:
    if not isinstance(value, str):
        raise ValueError("no such overload")
    return list(FORMATS[name](value))


FUNCTIONS: list[Any] = [_cel.FunctionDecl("__formatValidate", [_cel.Overload(
    "__format_validate_string", _cel.Type.List(_cel.Type.STRING), [_cel.Type.STRING, _cel.Type.STRING],
    is_member=False, impl=_validate)])]


def _in_string(source: str, pos: int) -> bool:
    return any(m.start() <= pos < m.end() for m in STRING_LITERAL.finditer(source))


def _closing(source: str, start: int) -> int:
    """The index of the ``)`` closing the call whose arguments start at ``start`` (-1 if none)."""
    depth, i = 1, start
    while i < len(source):
        quoted = STRING_LITERAL.match(source, i) if source[i] in "'\"rRbB" else None
        if quoted and quoted.end() > i + 1:
            i = quoted.end()
            continue
        if source[i] in "([{":
            depth += 1
        elif source[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def rewrite(source: str) -> str:
    """``source`` with each ``format.NAME().validate(ARG)`` of a known format expanded;
    ``engine.CompileError`` naming what the engine cannot compile (``library.unsupported``)."""
    refused = unsupported(source)
    if refused is not None:
        raise CompileError(refused)
    pos = 0
    while True:
        found = _CALL.search(source, pos)
        if found is None:
            return source
        if found.group(1) not in FORMATS or _in_string(source, found.start()):
            pos = found.end()
            continue
        end = _closing(source, found.end())
        if end < 0:
            return source
        arg = source[found.end():end]
        replacement = (f"cel.bind(__fmtErrs, __formatValidate('{found.group(1)}', ({arg})), "
                       "__fmtErrs.size() == 0 ? optional.none() : optional.of(__fmtErrs))")
        source = source[:found.start()] + replacement + source[end + 1:]
        pos = found.start()
