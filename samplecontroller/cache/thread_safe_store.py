"""ThreadSafeStore: the keyed, indexed, thread-safe map under every informer cache
(client-go's thread_safe_store.go plus the key-function wrapper of store.go).

Contracts:
- Every method is atomic with respect to the others (one lock); returned lists are snapshots.
- Objects are stored as given and shared with every reader: treat them as immutable.
- Index functions run under the lock: they must be pure and must not call back into the store.
- ``by_index``/``index_keys``/``list_index_func_values``/``index`` raise KeyError for an
  unknown index name; ``add_indexers`` raises ValueError for a name already in use, and indexes
  what is stored already.
"""

from __future__ import annotations

import builtins
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

from samplecontroller.cache.index import IndexFunc
from samplecontroller.cache.keys import DeletedFinalStateUnknown, KeyFunc, meta_namespace_key_func

T = TypeVar("T")

_Keys = str | set[str]
"""The keys under one index value: one key alone, or a set of two or more."""


def _keys(entry: _Keys | None) -> Iterable[str]:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else entry


def _add(index: dict[str, _Keys], value: str, key: str) -> None:
    entry = index.get(value)
    if entry is None:
        index[sys.intern(value)] = key
    elif isinstance(entry, str):
        if entry != key:
            index[value] = {entry, key}
    else:
        entry.add(key)


def _remove(index: dict[str, _Keys], value: str, key: str) -> None:
    entry = index.get(value)
    if entry is None:
        return
    if isinstance(entry, str):
        if entry == key:
            del index[value]
        return
    entry.discard(key)
    if len(entry) == 1:
        index[value] = next(iter(entry))
    elif not entry:
        del index[value]


class ThreadSafeStore(Generic[T]):
    """Implements the ``Indexer`` protocol (and so ``Store``)."""

    def __init__(self, key_func: KeyFunc = meta_namespace_key_func,
                 indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self.key_func = key_func
        self._lock = threading.Lock()
        self._items: dict[str, T] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        # index name -> value -> the key, or a set of keys when more than one object has that value
        # (most values of a field index name one object: a str costs nothing, a set ~200 bytes)
        self._indices: dict[str, dict[str, _Keys]] = {name: {} for name in self._indexers}

    # -- index maintenance (callers hold the lock) ------------------------------------------

    def _update_indices(self, old: T | None, new: T | None, key: str) -> None:
        for name, fn in self._indexers.items():
            old_values = fn(old) if old is not None else []
            new_values = fn(new) if new is not None else []
            if old_values == new_values:
                continue
            index = self._indices[name]
            for v in old_values:
                _remove(index, v, key)
            for v in new_values:
                _add(index, v, key)

    def _index(self, name: str) -> dict[str, _Keys]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"index with name {name!r} does not exist") from None

    # -- Store ----------------------------------------------------------------------------

    def add(self, obj: T) -> None:
        """Insert or replace the object under its key."""
        self.update(obj)

    def update(self, obj: T) -> None:
        """Insert or replace the object under its key (same as ``add``)."""
        key = sys.intern(self.key_func(obj))  # the same "ns/name" in every store and index is one string
        self.add_by_key(key, obj)

    def add_by_key(self, key: str, obj: T) -> T | None:
        """Insert or replace ``obj`` under an explicit key; returns the object it replaced (None: new)."""
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            self._update_indices(old, obj, key)
        return old

    def delete(self, obj: Any) -> None:
        """Remove the object's key (a tombstone removes its own key); absent keys are ignored."""
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else self.key_func(obj)
        self.delete_by_key(key)

    def delete_by_key(self, key: str) -> None:
        """Remove the object stored under ``key`` (nothing if absent)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._update_indices(old, None, key)

    def list(self) -> builtins.list[T]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def get(self, obj: Any) -> T | None:
        """The stored object with ``obj``'s key, or None."""
        return self.get_by_key(self.key_func(obj))

    def get_by_key(self, key: str) -> T | None:
        with self._lock:
            return self._items.get(key)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def replace(self, objects: Iterable[T], resource_version: str = "") -> None:
        """Make the store hold exactly ``objects`` (every index rebuilt)."""
        items = {sys.intern(self.key_func(o)): o for o in objects}
        with self._lock:
            self._items = items
            self._indices = {name: {} for name in self._indexers}
            for key, obj in items.items():
                self._update_indices(None, obj, key)

    def resync(self) -> None:
        """A no-op: a plain store has nothing to resync (a DeltaFIFO resyncs from it)."""

    # -- Indexer --------------------------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes, computed over what is stored now. A name already in use is a ValueError."""
        with self._lock:
            clash = set(indexers) & set(self._indexers)
            if clash:
                raise ValueError(f"indexer conflict: {sorted(clash)}")
            for name, fn in indexers.items():
                index: dict[str, _Keys] = {}
                for key, obj in self._items.items():
                    for v in fn(obj):
                        _add(index, v, key)
                self._indexers[name] = fn
                self._indices[name] = index

    def get_indexers(self) -> dict[str, IndexFunc]:
        with self._lock:
            return dict(self._indexers)

    def index(self, name: str, obj: Any) -> builtins.list[T]:
        """Objects sharing any of ``obj``'s values of index ``name``."""
        with self._lock:
            index = self._index(name)
            keys: set[str] = set()
            for v in self._indexers[name](obj):
                keys.update(_keys(index.get(v)))
            return [self._items[k] for k in keys]

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """Objects whose index function for ``name`` returned ``value``."""
        with self._lock:
            return [self._items[k] for k in _keys(self._index(name).get(value))]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        with self._lock:
            return list(_keys(self._index(name).get(value)))

    def list_index_func_values(self, name: str) -> builtins.list[str]:
        """Every value index ``name`` currently holds."""
        with self._lock:
            return list(self._index(name))
