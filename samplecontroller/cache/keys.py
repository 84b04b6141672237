"""Key functions (client-go's MetaNamespaceKeyFunc and friends) and the deletion tombstone.

A key is ``namespace/name``, or ``name`` for cluster-scoped objects. A string passed to a key
function is taken to be a key already (Go's ExplicitKey).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from samplecontroller.apimachinery import meta

KeyFunc = Callable[[Any], str]
T_co = TypeVar("T_co", covariant=True)


class KeyFuncError(KeyError):
    """A key function could not compute a key for an object (for example it has no name)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "could not compute a key"


KeyError_ = KeyFuncError  # older name


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown(Generic[T_co]):
    """A tombstone: the object was deleted while the watch was down, so the final state is
    unknown; ``obj`` is the last state the cache saw (may be stale)."""

    key: str
    obj: T_co


def meta_namespace_key_func(obj: Any) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects; a string is its own key.

    Raises KeyFuncError when the object has no ``metadata.name``.
    """
    if isinstance(obj, str):
        return obj
    name = meta.get_name(obj)
    if not name:
        raise KeyFuncError(f"object has no metadata.name: {type(obj).__name__}")
    ns = meta.get_namespace(obj)
    return f"{ns}/{name}" if ns else name


def deletion_handling_meta_namespace_key_func(obj: Any) -> str:
    """Like ``meta_namespace_key_func`` but a tombstone gives its own key."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key_func(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``(namespace, name)`` of a key (namespace "" when cluster-scoped).

    Raises ValueError for a key with more than one "/" (Go's SplitMetaNamespaceKey).
    """
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")
