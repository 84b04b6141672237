"""Informer transforms (client-go's tools/cache TransformFunc helpers)."""

from __future__ import annotations

from typing import Any

import msgspec

from samplecontroller.apimachinery import meta

__all__ = ["strip_managed_fields"]


def strip_managed_fields(obj: Any) -> Any:
    """``obj`` without ``metadata.managedFields`` (client-go's TransformStripManagedFields).

    For a cache whose readers never look at managedFields: it saves their bytes and, for
    objects decoded from a watch, the whole event line that a ``msgspec.Raw`` field points into.
    Works on generated structs and on dicts; other objects (tombstones, keys) pass unchanged.
    """
    md = meta.metadata(obj)
    if isinstance(obj, dict):
        if isinstance(md, dict) and "managedFields" in md:
            return {**obj, "metadata": {k: v for k, v in md.items() if k != "managedFields"}}
        return obj
    if not isinstance(obj, msgspec.Struct) or md is None or getattr(md, "managed_fields", msgspec.UNSET) is msgspec.UNSET:
        return obj
    return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(md, managed_fields=msgspec.UNSET))
