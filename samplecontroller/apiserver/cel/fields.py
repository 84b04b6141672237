"""Field selections of a rule checked against its schema at CRD time, as cel-go's type checker
does with the schema's declared types: ``self.nosuchfield`` fails to compile with
``ERROR: <input>:1:5: undefined field 'nosuchfield'`` (the engine sees ``self`` as dynamic, so
this check adds what its checker cannot know).

Only plain chains from ``self``/``oldSelf`` (``self.a.b``, ``self.?a``) through objects with
declared properties are checked; maps, lists, preserve-unknown-fields and int-or-string values end
the check (anything may follow), so a valid rule is never rejected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from samplecontroller.apiserver.cel.values import escape

__all__ = ["STRING_LITERAL", "TYPED_SLOTS", "invalid_literals", "mask_strings", "scalar_typed_source", "typed_source", "undefined_fields", "uses_old_self"]

STRING_LITERAL = re.compile(r"""(?s)[rRbB]*(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""")
"""A CEL string or bytes literal (raw, triple-quoted or not)."""
_CHAIN = re.compile(r"(?<![\w.])(?:self|oldSelf)((?:\s*\.\s*\??\s*[A-Za-z_][A-Za-z0-9_]*)+)")
_OLD_SELF = re.compile(r"(?<![\w.])oldSelf\b")
_SEGMENT = re.compile(r"\s*(\.)\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)")
_ROOT_META = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}
_ROOT_FIELDS = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": _ROOT_META}


def mask_strings(source: str) -> str:
    """``source`` with string literals blanked (positions kept)."""
    return STRING_LITERAL.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], source)


def _fields(node: dict[str, Any], root: bool) -> dict[str, Any] | None:
    """The declared fields of an object node by CEL name, or None when anything may be selected."""
    props = node.get("properties")
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string"):
        return None
    if not isinstance(props, dict) or not props:
        return _ROOT_FIELDS if root else None
    out: dict[str, Any] = dict(_ROOT_FIELDS) if root else {}
    for name, sub in props.items():
        cel_name = escape(name)
        if cel_name is not None and isinstance(sub, dict) and not (root and name in _ROOT_FIELDS):
            out[cel_name] = sub
    return out


def _chains(blanked: str, node: dict[str, Any], root: bool) -> Any:
    """Each ``self``/``oldSelf`` chain of ``blanked`` (a source with its strings masked):
    ``(start, end, target, undefined)`` where ``blanked[start:end]`` selects the declared ``target`` schema (None when the check stopped),
    or ``undefined`` is the segment match naming an undeclared field."""
    for chain in _CHAIN.finditer(blanked):
        current: Any = node
        at_root, end, undefined = root, chain.start(1), None
        segments = list(_SEGMENT.finditer(blanked, chain.start(1), chain.end(1)))
        for i, seg in enumerate(segments):
            if i == len(segments) - 1 and blanked[seg.end():].lstrip().startswith("("):
                break  # a method call (self.x.startsWith(...))
            if not isinstance(current, dict):
                current = None
                break
            additional = current.get("additionalProperties")
            if isinstance(additional, dict) and not current.get("properties"):
                current, at_root, end = additional, bool(additional.get("x-kubernetes-embedded-resource")), seg.end()
                continue
            fields = None if current.get("type") not in (None, "object") and not at_root else _fields(current, at_root)
            if fields is None:
                current = None
                break
            if seg.group(2) not in fields:
                undefined, current = seg, None
                break
            current, end = fields[seg.group(2)], seg.end()
            at_root = isinstance(current, dict) and bool(current.get("x-kubernetes-embedded-resource"))
        yield chain.start(), end, current, undefined


def uses_old_self(source: str) -> bool:
    """True when the expression references ``oldSelf`` (a transition rule)."""
    return bool(_OLD_SELF.search(mask_strings(source)))


def undefined_fields(source: str, node: dict[str, Any], root: bool) -> str:
    """cel-go's issue text for each undefined field ``source`` selects ("" when none)."""
    issues = [_issue(source, undefined.start(1), f"undefined field '{undefined.group(2)}'")
              for _, _, _, undefined in _chains(mask_strings(source), node, root) if undefined is not None]
    return "\n".join(issues)


_CONVERSIONS = {"date-time": "timestamp", "duration": "duration"}


def _conversion(schema: Any) -> str:
    if not isinstance(schema, dict) or schema.get("type") != "string":
        return ""
    return _CONVERSIONS.get(str(schema.get("format") or ""), "")


def typed_source(source: str, node: dict[str, Any], root: bool) -> str:
    """``source`` with the strings that Kubernetes gives CEL as timestamps or durations (``format:
    date-time``/``duration``) converted where selected: ``self.t`` -> ``timestamp(self.t)``, and
    ``self`` itself at such a node through ``cel.bind``. The engine cannot take timestamp values
    inside objects (see ``engine``), so the rule converts them. Chains inside ``has()`` and
    optional selections are left alone."""
    blanked = mask_strings(source)
    edits: list[tuple[int, int, str]] = []
    for start, end, target, _ in _chains(blanked, node, root):
        function = _conversion(target)
        if not function or end <= start or "?" in blanked[start:end]:
            continue
        if re.search(r"has\s*\(\s*$", blanked[:start]):
            continue
        edits.append((start, end, f"{function}({source[start:end]})"))
    for start, end, text in reversed(edits):
        source = source[:start] + text + source[end:]
    function = _conversion(node)
    if function:
        source = f"cel.bind(self, {function}(self), {source})"
        if _OLD_SELF.search(blanked):
            source = f"cel.bind(oldSelf, {function}(oldSelf), {source})"
    return source


_LITERAL_CALL = re.compile(r"(\.\s*matches|(?<![\w.])duration|(?<![\w.])timestamp)\s*\(\s*")
_LITERAL_CHECKS = {"matches": "''.matches({})", "duration": "duration({})", "timestamp": "timestamp({})"}


def invalid_literals(source: str, check: Callable[[str], bool]) -> str:
    """cel-go's ValidateRegexLiterals/DurationLiterals/TimestampLiterals issues (Kubernetes' base
    environment since 1.29): ``x.matches('[')``, ``duration('1x')`` and ``timestamp('x')`` with a
    literal that cannot be used fail to compile with ``invalid matches argument`` at the literal.
    ``check(expression)`` evaluates the call on the literal alone (True: it works)."""
    blanked = mask_strings(source)
    issues: list[str] = []
    for call in _LITERAL_CALL.finditer(blanked):
        literal = STRING_LITERAL.match(source, call.end())
        if literal is None or not blanked[literal.end():].lstrip().startswith((")", ",")):
            continue
        name = call.group(1).lstrip(".").strip()
        if not check(_LITERAL_CHECKS[name].format(literal.group(0))):
            issues.append(_issue(source, call.end(), f"invalid {name} argument"))
    return "\n".join(issues)


def _issue(source: str, offset: int, message: str) -> str:
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start:line_end if line_end >= 0 else len(source)]
    row, column = source.count("\n", 0, offset) + 1, offset - line_start
    return f"ERROR: <input>:{row}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


_SCALAR_TYPES = {"integer": "INT", "number": "DOUBLE", "string": "STRING", "boolean": "BOOL"}
TYPED_SLOTS = 32
"""How many selections of one scalar type ``scalar_typed_source`` replaces (more: no inference)."""


def _scalar_type(target: Any) -> str:
    """The CEL type of a schema node whose values are one scalar type, else ""."""
    if not isinstance(target, dict) or target.get("x-kubernetes-int-or-string") \
            or target.get("x-kubernetes-preserve-unknown-fields") or target.get("nullable"):
        return ""
    conversion = _conversion(target)
    if conversion:
        return conversion.upper()  # TIMESTAMP, DURATION
    return _SCALAR_TYPES.get(str(target.get("type") or ""), "")


def scalar_typed_source(source: str, node: dict[str, Any], root: bool) -> str | None:
    """``source`` with every ``self``/``oldSelf`` selection of a scalar field (and a bare ``self``
    at a scalar node) replaced by a variable of its CEL type (``__INT0``, ``__STRING1``, ...), so
    that a checker sees the types Kubernetes declares for them and can name the rule's result
    type (``self.replicas`` is an int). None when nothing is replaced or there are too many."""
    blanked = mask_strings(source)
    if blanked.strip() in ("self", "oldSelf"):
        kind = _scalar_type(node)
        return f"__{kind}0" if kind else None
    counts: dict[str, int] = {}
    edits: list[tuple[int, int, str]] = []
    for start, end, target, undefined in _chains(blanked, node, root):
        kind = _scalar_type(target)
        if not kind or undefined is not None or "?" in blanked[start:end] \
                or re.search(r"has\s*\(\s*$", blanked[:start]):
            continue
        index = counts.get(kind, 0)
        if index >= TYPED_SLOTS:
            return None
        counts[kind] = index + 1
        edits.append((start, end, f"__{kind}{index}"))
    if not edits:
        return None
    for start, end, text in reversed(edits):
        source = source[:start] + text + source[end:]
    return source
