"""RFC 6902 JSON Patch, as the API server applies ``application/json-patch+json`` bodies.

Contract: ``apply_patch(doc, ops)`` returns a new document and never mutates ``doc`` or
``ops``. Any malformed patch, missing path or failed ``test`` raises ``PatchError`` (a
``ValueError``) with a message naming the operation; nothing else is raised for JSON input.
``max_copy_bytes`` bounds the JSON size ``copy`` operations may add in total (json-patch's
AccumulatedCopySizeLimit, which kube-apiserver sets to 3 MiB), so a few copies of a copy
cannot grow a document exponentially.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

__all__ = ["PatchError", "apply_patch", "parse_pointer"]


class PatchError(ValueError):
    """A JSON patch that cannot be applied (malformed, bad path, failed test)."""


_MISSING = object()


def parse_pointer(pointer: Any) -> list[str]:
    """Split an RFC 6901 JSON pointer into unescaped tokens (``~1`` -> ``/``, ``~0`` -> ``~``)."""
    if not isinstance(pointer, str):
        raise PatchError(f"path must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}: must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index {token!r}")
    idx = int(token)
    limit = len(container) if for_add else len(container) - 1
    if idx > limit:
        raise PatchError(f"array index {idx} out of bounds (length {len(container)})")
    return idx


def _parent(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for tok in tokens[:-1]:
        if isinstance(cur, dict):
            if tok not in cur:
                raise PatchError(f"path segment {tok!r} does not exist")
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(cur, tok, for_add=False)]
        else:
            raise PatchError(f"cannot traverse into a {type(cur).__name__} at {tok!r}")
    return cur


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path segment {last!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, for_add=False)]
    raise PatchError(f"cannot read {last!r} from a {type(parent).__name__}")


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, for_add=True), value)
    else:
        raise PatchError(f"cannot add {last!r} to a {type(parent).__name__}")
    return doc


def _remove(doc: Any, tokens: list[str]) -> tuple[Any, Any]:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key: {last}")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, for_add=False))
    raise PatchError(f"cannot remove {last!r} from a {type(parent).__name__}")


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    try:
        return bool(a == b)
    except RecursionError:  # nested beyond the interpreter's C recursion (1,500 levels on 3.12)
        pass
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            pairs.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            pairs.extend(zip(x, y, strict=True))
        elif isinstance(x, (dict, list)) or isinstance(y, (dict, list)):
            return False
        elif isinstance(x, bool) or isinstance(y, bool):
            if type(x) is not type(y) or x != y:
                return False
        elif x != y:
            return False
    return True


def _apply_one(doc: Any, op: Any, i: int, copied: list[int], max_copy_bytes: int) -> Any:
    if not isinstance(op, dict):
        raise PatchError(f"operation {i} is not an object")
    kind = op.get("op")
    if "path" not in op:
        raise PatchError(f"operation {i} ({kind}) is missing 'path'")
    path = parse_pointer(op["path"])
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"operation {i} ({kind}) is missing 'value'")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind == "remove":
        return _remove(doc, path)[0]
    if kind == "replace":
        _get(doc, path)
        if not path:
            return copy.deepcopy(op["value"])
        doc, _ = _remove(doc, path)
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind in ("move", "copy"):
        if "from" not in op:
            raise PatchError(f"operation {i} ({kind}) is missing 'from'")
        src = parse_pointer(op["from"])
        if kind == "move":
            if path[: len(src)] == src and len(path) > len(src):
                raise PatchError(f"operation {i} (move): cannot move a value into one of its children")
            doc, value = _remove(doc, src)
        else:
            value = copy.deepcopy(_get(doc, src))
            if max_copy_bytes:
                copied[0] += len(msgspec.json.encode(value))
                if copied[0] > max_copy_bytes:
                    raise PatchError(f"Unable to complete the copy, the accumulated size increase of copy is "
                                     f"{copied[0]}, exceeding the limit {max_copy_bytes}")
        return _add(doc, path, value)
    if kind == "test":
        if not _json_equal(_get(doc, path), op["value"]):
            raise PatchError(f"testing value {op['path']} failed")
        return doc
    raise PatchError(f"operation {i}: unsupported op {kind!r}")


def apply_patch(doc: Any, ops: Any, max_copy_bytes: int = 0) -> Any:
    """Apply the JSON patch ``ops`` (a list of operation objects) to a copy of ``doc``;
    ``max_copy_bytes`` (0: unbounded) limits what ``copy`` operations add in total."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    result = copy.deepcopy(doc)
    copied = [0]
    for i, op in enumerate(ops):
        result = _apply_one(result, op, i, copied, max_copy_bytes)
    return result
