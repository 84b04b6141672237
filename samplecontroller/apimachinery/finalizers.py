"""Finalizers, as controller-runtime's controllerutil, for immutable objects (both controller styles).

Objects are frozen msgspec Structs (any package's generated models) or wire-form dicts. Where Go
mutates the object and returns whether it changed, these return ``(copy, changed)`` and leave the
argument alone; when nothing changes the copy is the argument itself, so ``changed`` tells whether
a write is due::

    foo, changed = add_finalizer(foo, FINALIZER)
    if changed:
        # or client.update(foo)
        foo = clientset.samplecontroller_v1alpha1().foos(ns).update(foo)

An empty finalizer list is written as absent (the API server does the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from samplecontroller.apimachinery import meta

__all__ = ["add_finalizer", "contains_finalizer", "remove_finalizer", "with_finalizers"]

T = TypeVar("T")


def contains_finalizer(obj: Any, finalizer: str) -> bool:
    """True when ``obj``'s metadata.finalizers holds ``finalizer``."""
    return finalizer in meta.get_finalizers(obj)


def with_finalizers(obj: T, finalizers: Sequence[str]) -> T:
    """A copy of ``obj`` whose metadata.finalizers is ``finalizers`` (empty: absent)."""
    if isinstance(obj, dict):
        metadata = dict(obj.get("metadata") or {})
        if finalizers:
            metadata["finalizers"] = list(finalizers)
        else:
            metadata.pop("finalizers", None)
        return {**obj, "metadata": metadata}  # type: ignore[return-value]
    if not isinstance(obj, msgspec.Struct):
        raise TypeError(f"{type(obj).__name__} is neither a msgspec Struct nor a dict")
    object_meta = getattr(obj, "metadata", None)
    if not isinstance(object_meta, msgspec.Struct):
        raise TypeError(f"{type(obj).__name__} has no metadata struct")
    new_metadata = msgspec.structs.replace(object_meta, finalizers=tuple(finalizers) if finalizers else msgspec.UNSET)
    return msgspec.structs.replace(obj, metadata=new_metadata)


def add_finalizer(obj: T, finalizer: str) -> tuple[T, bool]:
    """(``obj`` with ``finalizer`` appended, True), or (``obj``, False) when it is there already."""
    current = meta.get_finalizers(obj)
    if finalizer in current:
        return obj, False
    return with_finalizers(obj, [*current, finalizer]), True


def remove_finalizer(obj: T, finalizer: str) -> tuple[T, bool]:
    """(``obj`` without ``finalizer``, True), or (``obj``, False) when it has no such finalizer."""
    current = meta.get_finalizers(obj)
    if finalizer not in current:
        return obj, False
    return with_finalizers(obj, [f for f in current if f != finalizer]), True
