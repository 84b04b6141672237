"""Thread-safe stores and indexers, like client-go's tools/cache store.go, index.go, thread_safe_store.go.

An ``Indexer`` keeps objects by key (``namespace/name``, or ``name`` when cluster-scoped) and
maintains named indexes: an index function maps an object to index values, and
``by_index(index, value)`` returns the objects with that value. Every method is atomic with
respect to the others; returned lists are snapshots. Objects are stored as given: they are
shared, so treat them as immutable (generated models are frozen).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from samplecontroller.apimachinery import meta

T = TypeVar("T")

IndexFunc = Callable[[Any], list[str]]
KeyFunc = Callable[[Any], str]

NAMESPACE_INDEX = "namespace"


class KeyError_(KeyError):
    """The key function could not compute a key for an object."""


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A tombstone: the object was deleted while the watch was down; ``obj`` may be stale."""

    key: str
    obj: Any


def meta_namespace_key_func(obj: Any) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects; a string is its own key."""
    if isinstance(obj, str):
        return obj
    ns = meta.get_namespace(obj)
    name = meta.get_name(obj)
    if not name:
        raise KeyError_("object has no metadata.name")
    return f"{ns}/{name}" if ns else name


def deletion_handling_meta_namespace_key_func(obj: Any) -> str:
    """Like ``meta_namespace_key_func`` but returns a tombstone's own key."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key_func(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``(namespace, name)`` of a key; ValueError for a malformed one."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


def meta_namespace_index_func(obj: Any) -> list[str]:
    """The namespace index: ``[namespace]``."""
    return [meta.get_namespace(obj)]


class Indexer(Generic[T]):
    """A thread-safe keyed store with secondary indexes."""

    def __init__(self, key_func: KeyFunc = meta_namespace_key_func,
                 indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self.key_func = key_func
        self._lock = threading.RLock()
        self._items: dict[str, T] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    # -- index maintenance (callers hold the lock) --------------------------------------------

    def _update_indices(self, old: T | None, new: T | None, key: str) -> None:
        for name, fn in self._indexers.items():
            old_values = fn(old) if old is not None else []
            new_values = fn(new) if new is not None else []
            if old_values == new_values:
                continue
            index = self._indices[name]
            for v in old_values:
                keys = index.get(v)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[v]
            for v in new_values:
                index.setdefault(v, set()).add(key)

    # -- Store --------------------------------------------------------------------------------

    def add(self, obj: T) -> None:
        self.update(obj)

    def update(self, obj: T) -> None:
        key = self.key_func(obj)
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            self._update_indices(old, obj, key)

    def delete(self, obj: T | DeletedFinalStateUnknown) -> None:
        key = deletion_handling_meta_namespace_key_func(obj) if isinstance(obj, DeletedFinalStateUnknown) \
            else self.key_func(obj)
        self.delete_by_key(key)

    def delete_by_key(self, key: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._update_indices(old, None, key)

    def list(self) -> list[T]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def get(self, obj: Any) -> T | None:
        return self.get_by_key(self.key_func(obj))

    def get_by_key(self, key: str) -> T | None:
        with self._lock:
            return self._items.get(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def replace(self, objects: Iterable[T], resource_version: str = "") -> None:
        """Make the store hold exactly ``objects`` (indexes rebuilt)."""
        items = {self.key_func(o): o for o in objects}
        with self._lock:
            self._items = items
            self._indices = {name: {} for name in self._indexers}
            for key, obj in items.items():
                self._update_indices(None, obj, key)

    def resync(self) -> None:
        """A no-op for a plain store (a DeltaFIFO resyncs from it)."""

    # -- Indexer ------------------------------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes (computed over what is stored now). A name already in use is an error."""
        with self._lock:
            clash = set(indexers) & set(self._indexers)
            if clash:
                raise ValueError(f"indexer conflict: {sorted(clash)}")
            for name, fn in indexers.items():
                self._indexers[name] = fn
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for v in fn(obj):
                        index.setdefault(v, set()).add(key)
                self._indices[name] = index

    def get_indexers(self) -> dict[str, IndexFunc]:
        with self._lock:
            return dict(self._indexers)

    def _index(self, name: str) -> dict[str, set[str]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"index {name!r} does not exist") from None

    def index(self, name: str, obj: Any) -> builtins.list[T]:
        """Objects sharing any of ``obj``'s values of index ``name``."""
        with self._lock:
            index = self._index(name)
            keys: set[str] = set()
            for v in self._indexers[name](obj):
                keys |= index.get(v, set())
            return [self._items[k] for k in keys]

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        with self._lock:
            return [self._items[k] for k in self._index(name).get(value, ())]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        with self._lock:
            return list(self._index(name).get(value, ()))

    def list_index_func_values(self, name: str) -> builtins.list[str]:
        with self._lock:
            return list(self._index(name))


Store = Indexer


def new_indexer(key_func: KeyFunc = meta_namespace_key_func,
                indexers: Mapping[str, IndexFunc] | None = None) -> Indexer[Any]:
    return Indexer(key_func, indexers)
