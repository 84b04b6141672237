"""Create RFC 6902 JSON patches between two JSON documents (what mutating webhooks answer).

``create_patch(original, modified)`` returns add/replace/remove operations such that applying them
to ``original`` gives ``modified``. Objects are diffed key by key (recursively); arrays that
differ are replaced whole (simple and always correct).
"""

from __future__ import annotations

from typing import Any


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def create_patch(original: Any, modified: Any, path: str = "") -> list[dict[str, Any]]:
    """RFC 6902 operations that turn ``original`` into ``modified`` (both JSON values).

    Objects are compared key by key, recursively: ``remove`` for a key only ``original`` has,
    ``add`` for a key only ``modified`` has. Any other difference, including any difference in
    an array, is one ``replace`` of the whole value at that place (never index-level array
    operations). Values of different JSON types differ (``1`` and ``1.0``, ``1`` and ``True``).
    ``path`` is the JSON pointer of the documents within a larger one ("" for the root);
    object keys are escaped (``~0``, ``~1``). Equal documents give ``[]``.
    """
    if isinstance(original, dict) and isinstance(modified, dict):
        ops: list[dict[str, Any]] = []
        for key in original:
            if key not in modified:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in modified.items():
            sub = f"{path}/{_escape(key)}"
            if key not in original:
                ops.append({"op": "add", "path": sub, "value": value})
            else:
                ops.extend(create_patch(original[key], value, sub))
        return ops
    if _same(original, modified):
        return []
    return [{"op": "replace", "path": path, "value": modified}]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b
