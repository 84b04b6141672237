"""SharedIndexInformer, like client-go's tools/cache/shared_informer.go.

One Reflector fills a DeltaFIFO; the deltas it queues are handled on its own thread right after
(the Indexer updated, the change fanned out to every registered handler, each on its own thread
with an unbounded buffer), so a watch event costs no thread hand-off before its handlers' own.

Guarantees:
- ``has_synced()`` is true once the first list is in the Indexer.
- A handler added after start first receives an add for every cached object
  (``is_in_initial_list=True``), consistently with later notifications (deltas are held while
  it is added); its registration's ``has_synced()`` is true once the informer has synced and
  the handler has been given every object of the initial list.
- Resync: once synced, a handler whose resync period has passed since its last resync (or its
  registration) gets ``on_update(obj, obj)`` for every cached object; the thread that called
  ``run`` waits for the earliest due time (no periodic check, no extra thread) and handles the
  resync's deltas itself. Updates that do not
  change the resourceVersion (resyncs, unchanged objects of a re-list) go only to handlers
  being resynced, as in Go.
- ``set_transform(fn)`` (before start) maps each incoming object before it is cached and
  delivered (for example to drop managedFields); it is not applied to Sync objects, which come
  from the cache.
- After the first sync, ``gc.freeze()`` moves every object alive (the cache included) out of
  the cyclic garbage collector's generations, so full collections no longer walk the cache
  (``freeze_gc=False`` to opt out). Measured (benchmarks/bench_informer.py, 100k Deployments):
  the generated gc=False models already leave the cache untracked (the collector tracks ~50k
  objects at 10k and at 100k cached: the interpreter's own), and ``gc.freeze()`` costs a few
  microseconds and also removes those, taking a full collection from ~50-150 ms to ~0.1 ms. Dict
  caches (dynamic informers) are tracked, so for them the freeze is what keeps full collections
  short. Frozen objects are still freed by reference counting when dropped.
- Compaction: objects from the reflector are compacted (``cache.compact``: equal strings and
  equal immutable sub-objects shared between cached objects, ``managedFields`` copied out of the
  list page or watch event they were decoded from) before the transform; the cached objects
  compare equal to the decoded ones. Listed objects are compacted page by page, so the list's
  buffers do not pile up before the first object is cached. An object already cached in an
  earlier version is compacted against it (``compact(obj, like=cached)``): the parts an update
  left equal are taken from the cached version instead of being walked again.
  ``compact_objects=False`` (a constructor argument) turns it off.
- ``run(stop)`` blocks until ``stop`` is set; then listeners stop and ``is_stopped()`` is true.
  An informer runs once. Threads: the reflector's (list, watch, and handling what they
  queue), the caller's (resyncs) and one per handler; deltas are handled by one thread at a
  time, in queue order. ``stop`` (a ``wait.Context``; a plain Event is adapted with
  ``wait.as_context``) closes the queue and the watch through done-callbacks.
"""

from __future__ import annotations

import gc
import math
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from samplecontroller.apimachinery import meta
from samplecontroller.cache.compaction import compact
from samplecontroller.cache.delta_fifo import DELETED, Delta, DeltaFIFO, FIFOClosedError
from samplecontroller.cache.handlers import ResourceEventHandler
from samplecontroller.cache.index import NAMESPACE_INDEX, IndexFunc, meta_namespace_index_func
from samplecontroller.cache.keys import KeyFuncError
from samplecontroller.cache.processor import ADD, DELETE, SYNCED, UPDATE, Listener
from samplecontroller.cache.reflector import Reflector, WatchErrorHandler
from samplecontroller.cache.thread_safe_store import ThreadSafeStore
from samplecontroller.client.types import ListerWatcher
from samplecontroller.logs import get_logger
from samplecontroller.wait import BackoffManager, as_context

log = get_logger("informer")

T = TypeVar("T")

MINIMUM_RESYNC_PERIOD = 1.0


class ResourceEventHandlerRegistration:
    """Returned by ``add_event_handler``; pass it to ``remove_event_handler``."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def has_synced(self) -> bool:
        """The informer has synced and this handler has been given the whole initial list."""
        return self._listener.synced.is_set()


class _Feed:
    """The store the Reflector writes to: the DeltaFIFO, whose deltas the informer then handles
    on the reflector's thread."""

    def __init__(self, informer: SharedIndexInformer[Any]) -> None:
        self._handle_queued = informer._handle_queued
        self._fifo = informer._fifo

    def add(self, obj: Any) -> None:
        self._fifo.add(obj)
        self._handle_queued()

    def update(self, obj: Any) -> None:
        self._fifo.update(obj)
        self._handle_queued()

    def delete(self, obj: Any) -> None:
        self._fifo.delete(obj)
        self._handle_queued()

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        self._fifo.replace(objects if isinstance(objects, list) else list(objects), resource_version)
        self._handle_queued()


class SharedIndexInformer(Generic[T]):
    """A shared, indexed, watched cache of one resource with event handlers."""

    def __init__(self, lister_watcher: ListerWatcher[T], object_type: type[Any], resync_period: float = 0.0,
                 indexers: Mapping[str, IndexFunc] | None = None, *, name: str = "", freeze_gc: bool = True,
                 backoff: BackoffManager | None = None, compact_objects: bool = True) -> None:
        all_indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: meta_namespace_index_func}
        all_indexers.update(indexers or {})
        self.object_type = object_type
        self.name = name or getattr(object_type, "__name__", "informer")
        self.lister_watcher = lister_watcher
        self.default_resync_period = resync_period
        self.freeze_gc = freeze_gc
        self.compact_objects = compact_objects  # read-only: the reflector was given it
        self._indexer: ThreadSafeStore[T] = ThreadSafeStore(indexers=all_indexers)
        self._fifo = DeltaFIFO(known_objects=self._indexer)
        self._reflector = Reflector(lister_watcher, _Feed(self), name=self.name, backoff=backoff,
                                    compact=self._compact if compact_objects else None)
        self._lock = threading.Lock()
        self._block_deltas = threading.Lock()  # held while deltas are handled (one thread at a time)
        self._wakeup = threading.Event()  # the resync wait looks again: handlers changed, synced, stopped
        self._listeners: list[Listener] = []
        self._next_resync = 0.0  # no resync is due before this (monotonic clock; inf: none at all)
        self._syncing: list[Listener] = []
        self._started = False
        self._stopped = False
        self._synced = threading.Event()

    # -- configuration --------------------------------------------------------------------

    def set_transform(self, fn: Callable[[Any], Any]) -> None:
        """Map every incoming object before caching; only before start (RuntimeError after)."""
        with self._lock:
            if self._started:
                raise RuntimeError(f"informer {self.name}: set_transform must be called before it starts")
            self._fifo.transformer = fn

    def set_watch_error_handler(self, fn: WatchErrorHandler) -> None:
        """``fn(name, error)`` is called for every list/watch failure (default: log it)."""
        self._reflector.watch_error_handler = fn

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes (also after start: existing objects are indexed). ValueError on a name clash."""
        self._indexer.add_indexers(indexers)

    def get_indexer(self) -> ThreadSafeStore[T]:
        """The informer's cache (an Indexer): read it, never write it."""
        return self._indexer

    def get_store(self) -> ThreadSafeStore[T]:
        """The informer's cache, as a Store (the same object as ``get_indexer``)."""
        return self._indexer

    def add_event_handler(self, handler: ResourceEventHandler[T], resync_period: float | None = None, *,
                          inline: bool = False) -> ResourceEventHandlerRegistration:
        """Register ``handler``. ``resync_period`` defaults to the informer's; 0 = no resync;
        shorter than 1 s is raised to 1 s. RuntimeError on a stopped informer.

        ``inline=True``: the handler is called on the thread handling the informer's deltas
        (the reflector's; for the initial objects of a late registration, the caller's), with
        the informer's locks held, instead of on a thread of its own. For handlers that only
        look at the object and put keys on a work queue: it saves a thread hand-off per event.
        Such a handler must return quickly, must never block (no API calls, no waiting) and
        must not add or remove handlers; while it runs, the informer and its other handlers
        wait.
        """
        period = self.default_resync_period if resync_period is None else resync_period
        if period and period < MINIMUM_RESYNC_PERIOD:
            period = MINIMUM_RESYNC_PERIOD
        with self._block_deltas, self._lock:
            if self._stopped:
                raise RuntimeError(f"informer {self.name} has stopped; handler not added")
            listener = Listener(handler, period, self.name, inline=inline)
            self._listeners.append(listener)
            self._next_resync = 0.0  # the processing thread looks at every handler again
            if period:
                self._wakeup.set()  # the resync wait re-computes its next resync time
            if self._started:
                for obj in self._indexer.list():
                    listener.add((ADD, obj, True))
            if self._synced.is_set():
                listener.add((SYNCED,))
        return ResourceEventHandlerRegistration(listener)

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None:
        """Stop delivering to that handler (pending notifications are dropped). Unknown: no-op."""
        with self._lock:
            listener = registration._listener
            if listener in self._listeners:
                self._listeners.remove(listener)
                if listener in self._syncing:
                    self._syncing.remove(listener)
                listener.stop()

    # -- state ----------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the first list is in the cache."""
        return self._synced.is_set()

    def last_sync_resource_version(self) -> str:
        """The reflector's last synced resourceVersion."""
        return self._reflector.last_sync_resource_version()

    def is_stopped(self) -> bool:
        """True once ``run`` has returned."""
        return self._stopped

    # -- running --------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set (blocks). A second call (or a call after stop) returns at once."""
        with self._lock:
            if self._started or self._stopped:
                log.warning("Informer already started or stopped", informer=self.name)
                return
            self._started = True
        ctx = as_context(stop)
        reflector = threading.Thread(target=self._reflector.run, args=(ctx,), name=f"reflector-{self.name}",
                                     daemon=True)
        reflector.start()
        handle = ctx.add_done_callback(self._close)
        try:
            self._resync_loop()
        finally:
            ctx.remove_done_callback(handle)
            with self._lock:
                self._stopped = True
                listeners = list(self._listeners)
            for listener in listeners:
                listener.stop()
            reflector.join(5.0)

    def _compact(self, obj: Any) -> Any:
        """``obj`` compacted, against its cached version when there is one (see the module docstring)."""
        try:
            cached = self._indexer.get(obj)
        except KeyFuncError:  # no name: compacted on its own
            cached = None
        return compact(obj, cached)

    def _close(self) -> None:
        self._fifo.close()
        self._wakeup.set()

    def _resync_loop(self) -> None:
        """Until the queue closes: wait for the next due resync, queue it and handle it."""
        fifo = self._fifo
        while True:
            self._wakeup.clear()  # before looking: a wakeup from now on ends the wait below at once
            if fifo.is_closed():
                return
            wait_for = self._resync_due()
            if len(fifo):  # a resync was queued
                self._handle_queued()
            self._wakeup.wait(wait_for)

    def _handle_queued(self) -> None:
        """Handle every queued delta, in queue order, on the calling thread; mark the informer
        synced once the initial population has been handled. Nothing once the queue is closed."""
        fifo = self._fifo
        with self._block_deltas:
            try:
                while fifo.pop_nowait(self._handle_deltas):
                    pass
            except FIFOClosedError:
                return
        if not self._synced.is_set() and fifo.has_synced():
            self._mark_synced()

    def _resync_due(self) -> float | None:
        """Queue a resync if a handler is due; return the seconds until the next one is (None: none).
        Until the earliest next resync computed last time, nothing can be due (a handler added
        meanwhile clears it): one clock read per wakeup, not a look at every handler."""
        now = time.monotonic()
        cached = self._next_resync
        if now < cached:
            return None if cached == math.inf else cached - now
        with self._lock:
            if not self._synced.is_set():
                return None
            syncing = [lst for lst in self._listeners if lst.should_resync(now)]
            if syncing:
                self._syncing = syncing
            next_at = min((lst.next_resync for lst in self._listeners), default=math.inf)
            self._next_resync = next_at  # inf: none until a handler is added
        if syncing:
            self._fifo.resync()
        return None if next_at == math.inf else max(0.0, next_at - time.monotonic())

    def _mark_synced(self) -> None:
        with self._lock:
            if self._synced.is_set():
                return
            if self.freeze_gc:
                gc.freeze()
            self._synced.set()
            for listener in self._listeners:
                listener.add((SYNCED,))
        self._wakeup.set()  # the resync wait checks for due resyncs now

    def _handle_deltas(self, deltas: list[Delta], is_in_initial_list: bool) -> None:
        """One key's deltas into the indexer and out to the handlers. ``_block_deltas`` held."""
        indexer = self._indexer
        for delta in deltas:
            obj = delta.object
            if delta.type == DELETED:
                indexer.delete(obj)
                self._distribute((DELETE, obj), False)
                continue
            old = indexer.add_by_key(sys.intern(indexer.key_func(obj)), obj)  # one key, one lock
            if old is None:
                self._distribute((ADD, obj, is_in_initial_list), False)
            else:
                is_sync = meta.get_resource_version(old) == meta.get_resource_version(obj)
                self._distribute((UPDATE, old, obj), is_sync)

    def _distribute(self, notification: tuple[Any, ...], sync: bool) -> None:
        with self._lock:
            targets = self._syncing if sync else self._listeners
            for listener in targets:
                listener.add(notification)


def wait_for_cache_sync(*synced: Any, stop: threading.Event | None = None,
                        timeout: float | None = None, poll_interval: float = 0.1) -> bool:
    """Wait until every argument has synced: an informer (or registration) with ``has_synced()``,
    or a ``() -> bool`` function. False if ``stop`` is set or ``timeout`` passes first."""
    checks: list[Callable[[], bool]] = [s.has_synced if hasattr(s, "has_synced") else s for s in synced]
    deadline = None if timeout is None else time.monotonic() + timeout
    stop = stop or threading.Event()
    while True:
        if all(fn() for fn in checks):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        wait_for = poll_interval if deadline is None else min(poll_interval, max(0.0, deadline - time.monotonic()))
        if stop.wait(wait_for):
            return False
