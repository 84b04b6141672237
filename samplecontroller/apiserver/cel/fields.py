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
from typing import Any

from samplecontroller.apiserver.cel.values import escape

__all__ = ["undefined_fields"]

_STRINGS = re.compile(r"""(?s)[rRbB]*(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""")
_CHAIN = re.compile(r"(?<![\w.])(?:self|oldSelf)((?:\s*\.\s*\??\s*[A-Za-z_][A-Za-z0-9_]*)+)")
_SEGMENT = re.compile(r"\s*(\.)\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)")
_ROOT_META = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}
_ROOT_FIELDS = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": _ROOT_META}


def _masked(source: str) -> str:
    """``source`` with string literals blanked (positions kept)."""
    return _STRINGS.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], source)


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


def undefined_fields(source: str, node: dict[str, Any], root: bool) -> str:
    """cel-go's issue text for each undefined field ``source`` selects ("" when none)."""
    masked = _masked(source)
    issues: list[str] = []
    for chain in _CHAIN.finditer(masked):
        current: Any = node
        at_root = root
        segments = list(_SEGMENT.finditer(masked, chain.start(1), chain.end(1)))
        for i, seg in enumerate(segments):
            if i == len(segments) - 1 and masked[seg.end():].lstrip().startswith("("):
                break  # a method call (self.x.startsWith(...))
            if not isinstance(current, dict):
                break
            additional = current.get("additionalProperties")
            if isinstance(additional, dict) and not current.get("properties"):
                current, at_root = additional, bool(additional.get("x-kubernetes-embedded-resource"))
                continue
            if current.get("type") not in (None, "object") and not at_root:
                break
            fields = _fields(current, at_root)
            if fields is None:
                break
            name = seg.group(2)
            if name not in fields:
                issues.append(_issue(source, seg.start(1), f"undefined field '{name}'"))
                break
            current = fields[name]
            at_root = isinstance(current, dict) and bool(current.get("x-kubernetes-embedded-resource"))
    return "\n".join(issues)


def _issue(source: str, offset: int, message: str) -> str:
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start:line_end if line_end >= 0 else len(source)]
    row, column = source.count("\n", 0, offset) + 1, offset - line_start
    return f"ERROR: <input>:{row}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"
