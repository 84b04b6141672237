"""JSON Patch (RFC 6902): ``apply_patch(doc, ops)`` returns a new document; ``doc`` is untouched.

Raises ``PatchError`` (a ValueError) naming the failing operation for a bad path, a failed
``test`` or a malformed operation.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PatchError", "apply_patch"]


class PatchError(ValueError):
    """The patch is malformed or cannot be applied."""


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}: must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(container: list[Any], token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(f"array index {i} out of range")
    return i


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for t in tokens[:-1]:
        if isinstance(node, dict):
            if t not in node:
                raise PatchError(f"path {path!r} does not exist")
            node = node[t]
        elif isinstance(node, list):
            node = node[_index(node, t, allow_end=False)]
        else:
            raise PatchError(f"path {path!r} does not exist")
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False)]
    raise PatchError(f"path {path!r} does not exist")


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _tokens(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key {last!r} at {path!r}")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False))
    raise PatchError(f"path {path!r} does not exist")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError(f"path {path!r} does not exist")
    return doc


def apply_patch(doc: Any, ops: Any) -> Any:
    """Apply the operations in order; all or nothing."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be an array of operations")
    doc = copy.deepcopy(doc)
    for n, op in enumerate(ops):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            raise PatchError(f"operation {n} must be an object with string 'op' and 'path'")
        kind, path = op["op"], op["path"]
        try:
            if kind == "add":
                doc = _add(doc, path, copy.deepcopy(_value(op)))
            elif kind == "remove":
                doc, _ = _remove(doc, path)
            elif kind == "replace":
                _get(doc, path)
                if _tokens(path):
                    doc, _ = _remove(doc, path)
                doc = _add(doc, path, copy.deepcopy(_value(op)))
            elif kind == "move":
                frm = _from(op)
                if path.startswith(frm + "/"):
                    raise PatchError("cannot move a value into one of its children")
                doc, value = _remove(doc, frm)
                doc = _add(doc, path, value)
            elif kind == "copy":
                doc = _add(doc, path, copy.deepcopy(_get(doc, _from(op))))
            elif kind == "test":
                if _get(doc, path) != _value(op):
                    raise PatchError(f"test failed at {path!r}")
            else:
                raise PatchError(f"unknown operation {kind!r}")
        except PatchError as err:
            raise PatchError(f"operation {n} ({kind} {path}): {err}") from None
    return doc


def _value(op: dict[str, Any]) -> Any:
    if "value" not in op:
        raise PatchError("missing 'value'")
    return op["value"]


def _from(op: dict[str, Any]) -> str:
    frm = op.get("from")
    if not isinstance(frm, str):
        raise PatchError("missing 'from'")
    return frm
