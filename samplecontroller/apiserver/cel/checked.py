"""The checked AST of a compiled expression, read from the engine's serialized ``cel.expr.CheckedExpr``
(the protobuf cel-cpp and cel-go both produce; decoded here from the wire format, as this project
has no protobuf runtime): the expression tree after macro expansion, each node's checked type and
each call's candidate overload ids. The cost estimator (``cost``) walks it.

Contract: ``parse(data)`` takes ``Program.serialized()`` (a ``google.protobuf.Any`` holding the
CheckedExpr) and returns a ``Checked``; malformed input raises ``ValueError``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver.protobuf import wire_fields

__all__ = ["Checked", "Expr", "Type", "children", "format_type", "issue_lines", "mixed_literals", "parse"]

# expression kinds
CONST, IDENT, SELECT, CALL, LIST, MAP, STRUCT, COMPREHENSION = (
    "const", "ident", "select", "call", "list", "map", "struct", "comprehension")


@dataclass(frozen=True)
class Type:
    """A checked type: ``kind`` is one of bool, int, uint, double, string, bytes, null, timestamp,
    duration, list, map, struct, dyn, type, typeparam, optional, opaque, error; ``params`` the
    element (list), key and value (map) or parameter (optional) types; ``name`` the message or
    opaque type's name."""

    kind: str
    params: tuple[Type, ...] = ()
    name: str = ""
    decl: Any = field(default=None, compare=False, hash=False)
    """The schema declaration of an object type (``cost.Decl``), when known."""


DYN = Type("dyn")


@dataclass
class Expr:
    """One node of the AST. ``kind`` is one of const, ident, select, call, list, map, struct,
    comprehension. Fields by kind: const ``value``; ident ``name``; select ``operand``, ``name``
    (the field), ``test_only`` (``has()``); call ``name`` (the function), ``target`` (member
    calls), ``args``; list ``args`` (elements); map/struct ``entries`` (key or None, value);
    comprehension ``iter_var``, ``iter_range``, ``accu_var``, ``accu_init``, ``loop_condition``,
    ``loop_step``, ``result``."""

    id: int
    kind: str = CONST
    value: Any = None
    name: str = ""
    operand: Expr | None = None
    target: Expr | None = None
    test_only: bool = False
    args: list[Expr] = field(default_factory=list)
    entries: list[tuple[Expr | None, Expr]] = field(default_factory=list)
    iter_var: str = ""
    iter_range: Expr | None = None
    accu_var: str = ""
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


@dataclass
class Checked:
    """A checked expression: its root, the checked type of each node id, the candidate overload
    ids of each call and the names references resolve to (variables)."""

    expr: Expr
    types: dict[int, Type]
    overloads: dict[int, list[str]]
    references: dict[int, str]
    positions: dict[int, int] = field(default_factory=dict)
    """Each node's offset in the compiled source (code points), as the source info records it."""

    def type_of(self, e: Expr) -> Type:
        """The checked type of ``e`` (dyn when the checker recorded none)."""
        return self.types.get(e.id, DYN)


def _fields(buf: bytes | memoryview) -> Iterator[tuple[int, Any]]:
    """(field number, value) of each field: ints for varints, memoryviews (no copies) for
    lengths and fixed-size values."""
    for number, _, value in wire_fields(buf if isinstance(buf, memoryview) else memoryview(buf)):
        yield number, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "dyn", 2: "timestamp", 3: "duration"}


def _type(buf: bytes | memoryview) -> Type:
    for number, value in _fields(buf):
        if number == 1:
            return DYN
        if number == 2:
            return Type("null")
        if number in (3, 4):
            return Type(_PRIMITIVES.get(value, "dyn"))
        if number == 5:
            return Type(_WELL_KNOWN.get(value, "dyn"))
        if number == 6:
            elem = [_type(v) for n, v in _fields(value) if n == 1]
            return Type("list", (elem[0] if elem else DYN,))
        if number == 7:
            parts = dict(_fields(value))
            return Type("map", (_type(parts[1]) if 1 in parts else DYN, _type(parts[2]) if 2 in parts else DYN))
        if number == 9:
            return Type("struct", name=bytes(value).decode())
        if number == 10:
            return Type("typeparam", name=bytes(value).decode())
        if number == 11:
            return Type("type")
        if number == 12:
            return Type("error")
        if number == 14:
            name, params = "", []
            for n, v in _fields(value):
                if n == 1:
                    name = bytes(v).decode()
                elif n == 2:
                    params.append(_type(v))
            return Type("optional" if name == "optional_type" else "opaque", tuple(params), name)
    return DYN


def _constant(buf: bytes | memoryview) -> Any:
    for number, value in _fields(buf):
        if number == 1:
            return None
        if number == 2:
            return bool(value)
        if number == 3:
            return _signed(value)
        if number == 4:
            return _Uint(value)
        if number == 5:
            return struct.unpack("<d", bytes(value))[0]
        if number == 6:
            return bytes(value).decode()
        if number == 7:
            return bytes(value)
    return None


class _Uint(int):
    """An unsigned integer literal (its size is 1, as any number's)."""


def _expr(buf: bytes | memoryview) -> Expr:
    e = Expr(0)
    for number, value in _fields(buf):
        if number == 2:
            e.id = value
        elif number == 3:
            e.kind, e.value = CONST, _constant(value)
        elif number == 4:
            e.kind = IDENT
            e.name = next((bytes(v).decode() for n, v in _fields(value) if n == 1), "")
        elif number == 5:
            e.kind = SELECT
            for n, v in _fields(value):
                if n == 1:
                    e.operand = _expr(v)
                elif n == 2:
                    e.name = bytes(v).decode()
                elif n == 3:
                    e.test_only = bool(v)
        elif number == 6:
            e.kind = CALL
            for n, v in _fields(value):
                if n == 1:
                    e.target = _expr(v)
                elif n == 2:
                    e.name = bytes(v).decode()
                elif n == 3:
                    e.args.append(_expr(v))
        elif number == 7:
            e.kind = LIST
            e.args = [_expr(v) for n, v in _fields(value) if n == 1]
        elif number == 8:
            _struct(e, value)
        elif number == 9:
            _comprehension(e, value)
    return e


def _struct(e: Expr, buf: bytes | memoryview) -> None:
    e.kind = MAP
    for n, v in _fields(buf):
        if n == 1 and v:
            e.kind, e.name = STRUCT, bytes(v).decode()
        elif n == 2:
            key: Expr | None = None
            val = Expr(0)
            for m, w in _fields(v):
                if m == 3:
                    key = _expr(w)
                elif m == 4:
                    val = _expr(w)
            e.entries.append((key, val))


def _comprehension(e: Expr, buf: bytes | memoryview) -> None:
    e.kind = COMPREHENSION
    for n, v in _fields(buf):
        if n == 1:
            e.iter_var = bytes(v).decode()
        elif n == 2:
            e.iter_range = _expr(v)
        elif n == 3:
            e.accu_var = bytes(v).decode()
        elif n == 4:
            e.accu_init = _expr(v)
        elif n == 5:
            e.loop_condition = _expr(v)
        elif n == 6:
            e.loop_step = _expr(v)
        elif n == 7:
            e.result = _expr(v)


def parse(data: bytes) -> Checked:
    """The ``Checked`` of a serialized CheckedExpr (bare, or inside a ``google.protobuf.Any``)."""
    parts = list(_fields(data))
    if parts and parts[0][0] == 1 and isinstance(parts[0][1], memoryview) \
            and bytes(parts[0][1]).startswith(b"type.googleapis.com/"):
        data = next(v for n, v in parts if n == 2)
    root: Expr | None = None
    types: dict[int, Type] = {}
    overloads: dict[int, list[str]] = {}
    references: dict[int, str] = {}
    positions: dict[int, int] = {}
    for number, value in _fields(data):
        if number == 2:
            entry = dict(_fields(value))
            ref = entry.get(2, b"")
            ids = [bytes(v).decode() for n, v in _fields(ref) if n == 3]
            name = next((bytes(v).decode() for n, v in _fields(ref) if n == 1), "")
            if ids:
                overloads[entry.get(1, 0)] = ids
            if name:
                references[entry.get(1, 0)] = name
        elif number == 3:
            entry = dict(_fields(value))
            types[entry.get(1, 0)] = _type(entry.get(2, b""))
        elif number == 4:
            root = _expr(value)
        elif number == 5:
            for n, v in _fields(value):
                if n == 4:
                    entry = dict(_fields(v))
                    positions[_signed(entry.get(1, 0))] = entry.get(2, 0)
    if root is None:
        raise ValueError("no expression in the checked AST")
    return Checked(root, types, overloads, references, positions)


# ------------------------------------------------- cel.HomogeneousAggregateLiterals


_FORMATTED = {"null": "null_type", "timestamp": "google.protobuf.Timestamp", "duration": "google.protobuf.Duration"}


def format_type(t: Type) -> str:
    """A type as cel-go's checker prints it in its messages (FormatCELType)."""
    if t.kind == "list" and t.params:
        return f"list({format_type(t.params[0])})"
    if t.kind == "map" and len(t.params) == 2:
        return f"map({format_type(t.params[0])}, {format_type(t.params[1])})"
    if t.kind == "optional" and t.params:
        return f"optional_type({format_type(t.params[0])})"
    if t.kind in ("struct", "opaque") and t.name:
        return t.name + (f"({', '.join(format_type(p) for p in t.params)})" if t.params else "")
    if t.kind == "type" and t.params:
        return f"type({format_type(t.params[0])})"
    return _FORMATTED.get(t.kind, t.kind)


def _assignable(a: Type, b: Type) -> bool:
    """cel-go's isAssignable for the types of literal elements: dyn (or an error or type
    parameter) either side, else the same type with assignable parameters."""
    loose = ("dyn", "error", "typeparam")
    if a.kind in loose or b.kind in loose:
        return True
    if a.kind != b.kind or a.name != b.name or len(a.params) != len(b.params):
        return False
    return all(_assignable(x, y) for x, y in zip(a.params, b.params, strict=True))


def _generality(t: Type) -> int:
    """How much of ``t`` is dyn (mostGeneral keeps the less specific of two assignable types)."""
    return (t.kind in ("dyn", "error", "typeparam")) + sum(_generality(p) for p in t.params)


def children(e: Expr) -> list[Expr]:
    """The direct subexpressions of ``e``."""
    nodes = [e.operand, e.target, *e.args, *(k for k, _ in e.entries), *(v for _, v in e.entries),
             e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result]
    return [n for n in nodes if n is not None]


def mixed_literals(ast: Checked, source: str) -> str:
    """cel-go's errors for list and map literals whose elements (keys, values) have different
    types (``cel.HomogeneousAggregateLiterals()``, in kube's base environment since 1.0): ``ERROR:
    <input>:1:5: expected type 'int' but found 'double'`` at the first element of another type
    than those before it, with the snippet lines; "" when there is none. ``source`` is what was
    compiled (the positions are its offsets)."""
    issues: list[tuple[int, str]] = []

    def check(elements: list[Expr]) -> None:
        joined: Type | None = None  # checker.joinTypes: the most general type so far
        for element in elements:
            t = ast.type_of(element)
            if joined is None:
                joined = t
            elif _assignable(joined, t):
                joined = t if _generality(t) > _generality(joined) else joined
            else:
                issues.append((ast.positions.get(element.id, 0),
                               f"expected type '{format_type(joined)}' but found '{format_type(t)}'"))
                return

    stack = [ast.expr]
    while stack:
        e = stack.pop()
        if e.kind == LIST:
            check(e.args)
        elif e.kind == MAP:
            check([k for k, _ in e.entries if k is not None])
            check([v for _, v in e.entries])
        stack += children(e)
    return issue_lines(issues, source)


def issue_lines(issues: list[tuple[int, str]], source: str) -> str:
    """cel-go's display of compile issues (offset in ``source``, message): ``ERROR:
    <input>:L:C: message`` and the snippet lines, ordered by position; "" without issues."""
    lines = []
    for offset, message in sorted(issues):
        line = source.count("\n", 0, offset) + 1
        start = source.rfind("\n", 0, offset) + 1
        end = source.find("\n", offset)
        text = source[start:end if end >= 0 else len(source)]
        lines += [f"ERROR: <input>:{line}:{offset - start + 1}: {message}", f" | {text}",
                  " | " + "." * (offset - start) + "^"]
    return "\n".join(lines)
