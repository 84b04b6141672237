"""The ``Store`` and ``Indexer`` protocols (client-go's tools/cache store.go and index.go) and
their constructors. ``ThreadSafeStore`` is the implementation.

Key functions, the tombstone and index functions live in ``keys`` and ``index``; they are
re-exported here for convenience.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from samplecontroller.cache.index import NAMESPACE_INDEX, Indexers, IndexFunc, meta_namespace_index_func
from samplecontroller.cache.keys import (
    DeletedFinalStateUnknown,
    KeyError_,
    KeyFunc,
    KeyFuncError,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from samplecontroller.cache.thread_safe_store import ThreadSafeStore

__all__ = [
    "NAMESPACE_INDEX", "DeletedFinalStateUnknown", "IndexFunc", "Indexer", "Indexers", "KeyError_", "KeyFunc",
    "KeyFuncError", "Store", "ThreadSafeStore", "deletion_handling_meta_namespace_key_func",
    "meta_namespace_index_func", "meta_namespace_key_func", "new_indexer", "new_store", "split_meta_namespace_key",
]

T = TypeVar("T")


class Store(Protocol[T]):
    """A keyed object store. ``get``/``get_by_key`` return None for a missing key."""

    def add(self, obj: T) -> None:
        """Store ``obj`` under its key."""

    def update(self, obj: T) -> None:
        """Store ``obj`` under its key, replacing the previous version."""

    def delete(self, obj: Any) -> None:
        """Remove the object with ``obj``'s key (a tombstone's key counts)."""

    def list(self) -> builtins.list[T]:
        """Every stored object (a snapshot)."""

    def list_keys(self) -> builtins.list[str]:
        """Every key (a snapshot)."""

    def get(self, obj: Any) -> T | None:
        """The stored object with ``obj``'s key, or None."""

    def get_by_key(self, key: str) -> T | None:
        """The object stored under ``key`` (``namespace/name`` or ``name``), or None."""

    def replace(self, objects: Iterable[T], resource_version: str = "") -> None:
        """Make ``objects`` the whole content (a re-list)."""

    def resync(self) -> None:
        """Nothing for a plain store (a DeltaFIFO queues Sync deltas)."""


class Indexer(Store[T], Protocol[T]):
    """A Store with secondary indexes. Unknown index names raise KeyError."""

    def index(self, name: str, obj: Any) -> builtins.list[T]:
        """The objects that share an index value with ``obj`` in index ``name``."""

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        """The keys of the objects whose index ``name`` has ``value``."""

    def list_index_func_values(self, name: str) -> builtins.list[str]:
        """Every value of index ``name``."""

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """The objects whose index ``name`` has ``value`` (KeyError for an unknown index)."""

    def get_indexers(self) -> dict[str, IndexFunc]:
        """The index functions by name."""

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions (ValueError for a name in use); stored objects are indexed at once."""


def new_store(key_func: KeyFunc = meta_namespace_key_func) -> ThreadSafeStore[Any]:
    """A thread-safe store without indexes."""
    return ThreadSafeStore(key_func)


def new_indexer(key_func: KeyFunc = meta_namespace_key_func,
                indexers: Mapping[str, IndexFunc] | None = None) -> ThreadSafeStore[Any]:
    """A thread-safe store with the given indexes."""
    return ThreadSafeStore(key_func, indexers)
