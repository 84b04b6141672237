"""RFC 7386 JSON merge patch (``application/merge-patch+json``), like jsonpatch.MergePatch.

Contract: ``apply_merge_patch`` returns a new value and never mutates its inputs; a ``null``
in the patch deletes the key; lists and scalars replace. ``create_merge_patch(a, b)`` returns
a patch ``p`` such that ``apply_merge_patch(a, p) == b`` whenever ``a`` and ``b`` are JSON
objects (values equal to ``None`` inside ``b`` cannot be expressed and are deleted instead).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from samplecontroller.apimachinery.jsonpatch import PatchError

__all__ = ["PatchError", "apply_merge_patch", "create_merge_patch"]


def apply_merge_patch(doc: Any, patch: Any, *, in_place: bool = False) -> Any:
    """Merge ``patch`` into a copy of ``doc`` following RFC 7386. ``in_place``: ``doc`` and
    ``patch`` are the caller's to give up (freshly decoded): ``doc`` is merged into and returned,
    ``patch``'s values are moved into it, nothing is copied."""
    if not isinstance(patch, dict):
        return patch if in_place else copy.deepcopy(patch)
    if in_place:
        result: dict[str, Any] = doc if isinstance(doc, dict) else {}
        _merge_into(result, patch, lambda value: value)
        return result
    result = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    _merge_into(result, patch, copy.deepcopy)
    return result


def _merge_into(target: dict[str, Any], patch: dict[str, Any], take: Callable[[Any], Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            cur = target.get(key)
            if not isinstance(cur, dict):
                cur = {}
                target[key] = cur
            _merge_into(cur, value, take)
        else:
            target[key] = take(value)


def create_merge_patch(original: Any, modified: Any) -> Any:
    """Return the smallest merge patch turning ``original`` into ``modified``.

    Raises ``PatchError`` if either document is not a JSON object.
    """
    if not isinstance(original, dict) or not isinstance(modified, dict):
        raise PatchError("a merge patch can only be computed between two JSON objects")
    return _diff(original, modified)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _diff(original: dict[str, Any], modified: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in modified.items():
        old = original.get(key, _ABSENT)
        if isinstance(new, dict) and isinstance(old, dict):
            sub = _diff(old, new)
            if sub:
                patch[key] = sub
        elif isinstance(new, dict):
            patch[key] = _strip_nulls(new)
        elif old is _ABSENT or not _same(old, new):
            patch[key] = copy.deepcopy(new)
    return patch


def _strip_nulls(value: dict[str, Any]) -> dict[str, Any]:
    return {k: (_strip_nulls(v) if isinstance(v, dict) else copy.deepcopy(v)) for k, v in value.items() if v is not None}


_ABSENT: Any = object()
