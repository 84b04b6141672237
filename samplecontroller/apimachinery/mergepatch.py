"""JSON Merge Patch (RFC 7386): ``apply_merge_patch`` and ``create_merge_patch``.

``null`` in a patch deletes the key; objects merge recursively; anything else (arrays included)
replaces. Inputs are never modified.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["apply_merge_patch", "create_merge_patch"]


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: dict[str, Any] = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns ``original`` into ``modified``."""
    if not isinstance(original, dict) or not isinstance(modified, dict):
        return copy.deepcopy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
        elif original[key] != value:
            if isinstance(original[key], dict) and isinstance(value, dict):
                patch[key] = create_merge_patch(original[key], value)
            else:
                patch[key] = copy.deepcopy(value)
    return patch
