"""DeltaFIFO, like client-go's tools/cache/delta_fifo.go (with emitDeltaTypeReplaced on).

A queue of keys, each with the list of changes (deltas) seen since it was last popped.

Contracts:
- Delta types: Added, Updated, Deleted, Replaced (from a re-list) and Sync (a resync).
- A key is queued once however many deltas it collects; ``pop`` hands one key's deltas, oldest
  first, to a function, in FIFO order of keys.
- Two deletions in a row collapse into one, keeping the real object over a tombstone.
- ``delete`` of an object neither known (``known_objects``) nor queued is ignored.
- ``replace(list)`` queues Replaced for each listed object and a Deleted with a
  ``DeletedFinalStateUnknown`` tombstone for each queued or known key the list lacks.
- ``resync`` queues Sync for every known object that has no pending deltas.
- ``has_synced`` is true once everything from the first ``replace`` (or any earlier add) has
  been popped. ``pop`` tells its function whether the key belongs to that initial population.
- A producer wakes a blocked ``pop`` only when it queues a new key and a ``pop`` is waiting
  (more deltas for a queued key, or a queue nobody waits on, need no wakeup). ``pop_nowait``
  never waits: a consumer may drain the queue on the producer's own thread.
- A transform (``transformer``) maps each incoming object (not tombstones, not Sync objects,
  which come from the already transformed store) before it is queued.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from samplecontroller.cache.keys import DeletedFinalStateUnknown, KeyFunc, meta_namespace_key_func

DeltaType = Literal["Added", "Updated", "Deleted", "Replaced", "Sync"]
ADDED: DeltaType = "Added"
UPDATED: DeltaType = "Updated"
DELETED: DeltaType = "Deleted"
REPLACED: DeltaType = "Replaced"
SYNC: DeltaType = "Sync"

Added, Updated, Deleted, Replaced, Sync = ADDED, UPDATED, DELETED, REPLACED, SYNC


@dataclass(frozen=True, slots=True)
class Delta:
    """One change: its type and the object after it (for Deleted: the last known state or a tombstone)."""

    type: DeltaType
    object: Any


class KnownObjects(Protocol):
    """What DeltaFIFO reads of the informer's indexer."""

    def list_keys(self) -> list[str]:
        """The keys of every object in the informer's cache."""

    def get_by_key(self, key: str) -> Any:
        """The cached object under ``key``, or None."""


class FIFOClosedError(Exception):
    """``pop`` on a closed, empty queue."""


def _dedup(deltas: list[Delta]) -> None:
    """Collapse a trailing pair of deletions (Go's dedupDeltas/isDeletionDup)."""
    if len(deltas) < 2:
        return
    a, b = deltas[-2], deltas[-1]
    if a.type != DELETED or b.type != DELETED:
        return
    keep = a if isinstance(b.object, DeletedFinalStateUnknown) else b
    deltas[-2:] = [keep]


class DeltaFIFO:
    """Producer: a Reflector (add/update/delete/replace/resync). Consumer: one thread calling ``pop``,
    or callers of ``pop_nowait`` serialized by the consumer (one at a time, so keys stay in order)."""

    def __init__(self, key_func: KeyFunc = meta_namespace_key_func, known_objects: KnownObjects | None = None,
                 transformer: Callable[[Any], Any] | None = None) -> None:
        self._key_func = key_func
        self._known = known_objects
        self.transformer = transformer
        self._cond = threading.Condition(threading.Lock())
        self._items: dict[str, list[Delta]] = {}
        self._queue: deque[str] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._closed = False
        self._waiting = 0  # pops blocked in _cond.wait: a new key wakes one only then

    def key_of(self, obj: Any) -> str:
        """The key of an object, a Delta (its object's) or a tombstone (its own)."""
        if isinstance(obj, Delta):
            obj = obj.object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self._key_func(obj)

    # -- producers (hold the lock) ------------------------------------------------------------

    def _queue_action(self, kind: DeltaType, obj: Any, key: str | None = None) -> None:
        if self.transformer is not None and kind != SYNC and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self.transformer(obj)
        if key is None:
            key = self.key_of(obj)
        deltas = self._items.get(key)
        if deltas is None:
            self._push_new(key, Delta(kind, obj))
        else:
            deltas.append(Delta(kind, obj))
            _dedup(deltas)

    def _push_new(self, key: str, delta: Delta) -> None:
        """Queue ``key`` (not queued yet) with its first delta; wake a waiting ``pop``. Lock held."""
        self._items[key] = [delta]
        self._queue.append(key)
        if self._waiting:
            self._cond.notify()

    def add(self, obj: Any) -> None:
        """Queue an Added delta for ``obj``."""
        with self._cond:
            self._populated = True
            self._queue_action(ADDED, obj)

    def update(self, obj: Any) -> None:
        """Queue an Updated delta for ``obj``."""
        with self._cond:
            self._populated = True
            self._queue_action(UPDATED, obj)

    def delete(self, obj: Any) -> None:
        """Queue a deletion, unless the key is neither known nor queued."""
        key = self.key_of(obj)
        with self._cond:
            self._populated = True
            if key not in self._items and (self._known is None or self._known.get_by_key(key) is None):
                return
            self._queue_action(DELETED, obj, key)

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        """Queue Replaced for each object, and tombstones for queued or known keys not listed."""
        with self._cond:
            keys: set[str] = set()
            for obj in objects:
                if self.transformer is not None:
                    obj = self.transformer(obj)
                key = self.key_of(obj)
                keys.add(key)
                self._queue_replaced(key, obj)
            deletions = 0
            for key, deltas in list(self._items.items()):
                if key in keys:
                    continue
                last = deltas[-1].object if deltas else None
                if isinstance(last, DeletedFinalStateUnknown):
                    last = last.obj
                deletions += 1
                self._queue_action(DELETED, DeletedFinalStateUnknown(key, last), key)
            if self._known is not None:
                for key in self._known.list_keys():
                    if key in keys or self._items.get(key):
                        continue
                    deletions += 1
                    self._queue_action(DELETED, DeletedFinalStateUnknown(key, self._known.get_by_key(key)), key)
            if not self._populated:
                self._populated = True
                self._initial_population_count = len(keys) + deletions

    def _queue_replaced(self, key: str, obj: Any) -> None:
        deltas = self._items.get(key)
        if deltas is None:
            self._push_new(key, Delta(REPLACED, obj))
        else:
            deltas.append(Delta(REPLACED, obj))

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
                    self._queue_action(SYNC, obj, key)

    # -- consumer ------------------------------------------------------------------------------

    def pop(self, process: Callable[[list[Delta], bool], None], timeout: float | None = None) -> bool:
        """Block for the next key; call ``process(deltas, is_in_initial_list)`` outside the lock.

        Returns False on timeout; raises FIFOClosedError once closed (pending items are
        dropped). An exception from ``process`` propagates (the key is not re-queued).
        """
        with self._cond:
            while not self._queue:
                if self._closed:
                    raise FIFOClosedError()
                self._waiting += 1
                try:
                    woken = self._cond.wait(timeout)
                finally:
                    self._waiting -= 1
                if not woken:
                    return False
            deltas, in_initial = self._take()
        process(deltas, in_initial)
        return True

    def pop_nowait(self, process: Callable[[list[Delta], bool], None]) -> bool:
        """Like ``pop`` but never blocks: False at once when no key is queued.

        For a consumer that handles the deltas on the producer's thread, right after queueing
        them (the informer does: no thread hand-off per change). Raises FIFOClosedError once
        closed.
        """
        with self._cond:
            if not self._queue:
                if self._closed:
                    raise FIFOClosedError()
                return False
            deltas, in_initial = self._take()
        process(deltas, in_initial)
        return True

    def _take(self) -> tuple[list[Delta], bool]:
        """The first key's deltas and whether it belongs to the initial population. Lock held, queue not empty."""
        if self._closed:
            raise FIFOClosedError()
        key = self._queue.popleft()
        deltas = self._items.pop(key)
        in_initial = self._initial_population_count > 0
        if in_initial:
            self._initial_population_count -= 1
        return deltas, in_initial

    # -- reads ---------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once everything of the first ``replace`` (or earlier adds) has been popped."""
        with self._cond:
            return self._populated and self._initial_population_count == 0

    def list_keys(self) -> list[str]:
        """Queued keys, in queue order."""
        with self._cond:
            return list(self._queue)

    def get_by_key(self, key: str) -> list[Delta] | None:
        """A copy of the pending deltas of ``key``, or None."""
        with self._cond:
            deltas = self._items.get(key)
            return list(deltas) if deltas is not None else None

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def is_closed(self) -> bool:
        """True after ``close``."""
        with self._cond:
            return self._closed

    def close(self) -> None:
        """Wake every ``pop``; they raise FIFOClosedError."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
