"""DeltaFIFO, like client-go's tools/cache/delta_fifo.go.

A queue of keys, each with the list of changes (deltas) seen since it was last popped. Delta
types: Added, Updated, Deleted, Replaced (from a re-list) and Sync (a resync). ``replace`` also
queues ``Deleted`` with a ``DeletedFinalStateUnknown`` tombstone for every object the known
store holds that the new list lacks. ``pop`` hands one key's deltas to a function, in FIFO order
of keys; ``has_synced`` is true once everything from the first ``replace`` has been popped.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from samplecontroller.cache.store import DeletedFinalStateUnknown, KeyFunc, meta_namespace_key_func

DeltaType = Literal["Added", "Updated", "Deleted", "Replaced", "Sync"]
ADDED: DeltaType = "Added"
UPDATED: DeltaType = "Updated"
DELETED: DeltaType = "Deleted"
REPLACED: DeltaType = "Replaced"
SYNC: DeltaType = "Sync"


@dataclass(frozen=True)
class Delta:
    type: DeltaType
    object: Any


class KnownObjects(Protocol):
    def list_keys(self) -> list[str]: ...
    def get_by_key(self, key: str) -> Any: ...


class FIFOClosedError(Exception):
    """``pop`` on a closed queue."""


class DeltaFIFO:
    """Producer: a Reflector (add/update/delete/replace). Consumer: one thread calling ``pop``."""

    def __init__(self, key_func: KeyFunc = meta_namespace_key_func, known_objects: KnownObjects | None = None,
                 on_synced: Callable[[], None] | None = None) -> None:
        """``on_synced`` is called once, when everything from the first ``replace`` has been
        processed (right in ``replace`` when that list was empty)."""
        self._on_synced = on_synced
        self._synced_reported = False
        self._key_func = key_func
        self._known = known_objects
        self._cond = threading.Condition(threading.Lock())
        self._items: dict[str, list[Delta]] = {}
        self._queue: deque[str] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._closed = False

    def key_of(self, obj: Any) -> str:
        if isinstance(obj, Delta):
            obj = obj.object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self._key_func(obj)

    def _queue_action(self, kind: DeltaType, obj: Any) -> None:
        key = self.key_of(obj)
        deltas = self._items.get(key)
        new = Delta(kind, obj)
        if deltas is None:
            self._items[key] = [new]
            self._queue.append(key)
        else:
            # Collapse two deletes in a row (client-go's dedupDeltas), keeping the more informative.
            if kind == DELETED and deltas[-1].type == DELETED:
                if isinstance(deltas[-1].object, DeletedFinalStateUnknown):
                    deltas[-1] = new
            else:
                deltas.append(new)
        self._cond.notify()

    def add(self, obj: Any) -> None:
        with self._cond:
            self._populated = True
            self._queue_action(ADDED, obj)

    def update(self, obj: Any) -> None:
        with self._cond:
            self._populated = True
            self._queue_action(UPDATED, obj)

    def delete(self, obj: Any) -> None:
        with self._cond:
            self._populated = True
            self._queue_action(DELETED, obj)

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """Queue Replaced for each object, and tombstones for known objects not listed."""
        with self._cond:
            keys: set[str] = set()
            for obj in objects:
                keys.add(self.key_of(obj))
                self._queue_action(REPLACED, obj)
            queued_deletions = 0
            if self._known is not None:
                for key in self._known.list_keys():
                    if key in keys:
                        continue
                    old = self._known.get_by_key(key)
                    queued_deletions += 1
                    self._queue_action(DELETED, DeletedFinalStateUnknown(key, old))
            if not self._populated:
                self._populated = True
                self._initial_population_count = len(self._queue)
            report = self._initial_population_count == 0 and not self._synced_reported
            if report:
                self._synced_reported = True
        if report and self._on_synced is not None:
            self._on_synced()

    def resync(self) -> None:
        """Queue Sync for every known object that has no pending deltas."""
        with self._cond:
            if self._known is None:
                return
            for key in self._known.list_keys():
                if key in self._items:
                    continue
                obj = self._known.get_by_key(key)
                if obj is not None:
                    self._queue_action(SYNC, obj)

    def pop(self, process: Callable[[list[Delta], bool], None], timeout: float | None = None) -> bool:
        """Block for the next key; call ``process(deltas, is_in_initial_list)``.

        Returns False on timeout; raises FIFOClosedError once closed and empty.
        """
        with self._cond:
            while not self._queue:
                if self._closed:
                    raise FIFOClosedError()
                if not self._cond.wait(timeout):
                    return False
            key = self._queue.popleft()
            deltas = self._items.pop(key)
            in_initial = self._initial_population_count > 0
            if in_initial:
                self._initial_population_count -= 1
            report = (in_initial and self._initial_population_count == 0 and self._populated
                      and not self._synced_reported)
            if report:
                self._synced_reported = True
        process(deltas, in_initial)
        if report and self._on_synced is not None:
            self._on_synced()
        return True

    def has_synced(self) -> bool:
        with self._cond:
            return self._populated and self._initial_population_count == 0

    def list_keys(self) -> list[str]:
        with self._cond:
            return list(self._queue)

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
