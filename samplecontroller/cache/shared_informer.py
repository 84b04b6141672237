"""SharedIndexInformer, like client-go's tools/cache/shared_informer.go.

One Reflector fills a DeltaFIFO; one thread pops it, updates the Indexer, and fans the change out
to every registered handler. Each handler has its own delivery thread and an unbounded buffer, so
a slow handler never stalls the watch or the other handlers.

Guarantees:
- ``has_synced()`` is true once the first list has been fully processed into the Indexer.
- A handler added after start first receives an add for every cached object
  (``is_in_initial_list=True``); its registration's ``has_synced()`` is true once those and the
  informer's initial list have been delivered to it.
- Resync: every ``resync_period`` (per handler, not shorter than the informer's check period)
  the handler gets ``on_update(obj, obj)`` for every cached object.
- ``set_transform(fn)`` (before start) maps each object before it is cached and delivered (for
  example to drop managedFields).
- After the initial list, cached objects are moved out of the cyclic GC's reach (``gc.freeze()``)
  so full collections do not walk a large cache (disable with ``freeze_gc=False``).
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from samplecontroller.cache.delta_fifo import DELETED, SYNC, DeltaFIFO, FIFOClosedError
from samplecontroller.cache.handlers import ResourceEventHandler
from samplecontroller.cache.reflector import Reflector
from samplecontroller.cache.store import NAMESPACE_INDEX, Indexer, IndexFunc, meta_namespace_index_func
from samplecontroller.client.types import ListerWatcher
from samplecontroller.logs import get_logger

log = get_logger("informer")

T = TypeVar("T")

MINIMUM_RESYNC_PERIOD = 1.0
_SYNCED = object()


class _Listener:
    """One handler: a buffer, a delivery thread, and its resync schedule."""

    def __init__(self, handler: ResourceEventHandler, resync_period: float) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = time.monotonic() + resync_period if resync_period else float("inf")
        self._cond = threading.Condition(threading.Lock())
        self._buffer: deque[tuple[Any, ...]] = deque()
        self._stopped = False
        self._synced = threading.Event()
        self._thread = threading.Thread(target=self._run, name="informer-listener", daemon=True)
        self._thread.start()

    def add(self, notification: tuple[Any, ...]) -> None:
        with self._cond:
            self._buffer.append(notification)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._buffer and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                n = self._buffer.popleft()
            try:
                kind = n[0]
                if kind == "add":
                    self.handler.on_add(n[1], n[2])
                elif kind == "update":
                    self.handler.on_update(n[1], n[2])
                elif kind == "delete":
                    self.handler.on_delete(n[1])
                elif kind is _SYNCED:
                    self._synced.set()
            except Exception as err:
                log.error("Event handler failed", error=f"{type(err).__name__}: {err}")


class ResourceEventHandlerRegistration:
    """Returned by ``add_event_handler``; ``has_synced`` as described in the module docstring."""

    def __init__(self, listener: _Listener) -> None:
        self._listener = listener

    def has_synced(self) -> bool:
        return self._listener._synced.is_set()


class SharedIndexInformer(Generic[T]):
    """A shared, indexed, watched cache of one resource with event handlers."""

    def __init__(self, lister_watcher: ListerWatcher[T], object_type: type[Any], resync_period: float = 0.0,
                 indexers: Mapping[str, IndexFunc] | None = None, *, freeze_gc: bool = True) -> None:
        all_indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: meta_namespace_index_func}
        all_indexers.update(indexers or {})
        self.object_type = object_type
        self.lister_watcher = lister_watcher
        self.default_resync_period = resync_period
        self.freeze_gc = freeze_gc
        self._indexer: Indexer[T] = Indexer(indexers=all_indexers)
        self._fifo = DeltaFIFO(known_objects=self._indexer, on_synced=self._mark_synced)
        self._reflector = Reflector(lister_watcher, self._fifo, name=getattr(object_type, "__name__", "informer"))
        self._lock = threading.Lock()
        self._listeners: list[_Listener] = []
        self._transform: Callable[[Any], Any] | None = None
        self._started = False
        self._stopped = False
        self._synced = threading.Event()
        self._resync_check_period = resync_period

    # -- configuration --------------------------------------------------------------------

    def set_transform(self, fn: Callable[[Any], Any]) -> None:
        with self._lock:
            if self._started:
                raise RuntimeError("set_transform must be called before the informer starts")
            self._transform = fn

    def set_watch_error_handler(self, fn: Callable[[str, BaseException], None]) -> None:
        self._reflector.watch_error_handler = fn

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self._indexer.add_indexers(indexers)

    def get_indexer(self) -> Indexer[T]:
        return self._indexer

    def get_store(self) -> Indexer[T]:
        return self._indexer

    def add_event_handler(self, handler: ResourceEventHandler,
                          resync_period: float | None = None) -> ResourceEventHandlerRegistration:
        """Register ``handler``; returns its registration. Resync period defaults to the informer's."""
        period = self.default_resync_period if resync_period is None else resync_period
        if period and period < MINIMUM_RESYNC_PERIOD:
            period = MINIMUM_RESYNC_PERIOD
        with self._lock:
            if self._stopped:
                raise RuntimeError("handler added to a stopped informer")
            if period and (not self._resync_check_period or period < self._resync_check_period):
                self._resync_check_period = period
            listener = _Listener(handler, period)
            self._listeners.append(listener)
            if self._started:
                for obj in self._indexer.list():
                    listener.add(("add", obj, True))
            if self._synced.is_set():
                listener.add((_SYNCED,))
        return ResourceEventHandlerRegistration(listener)

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None:
        with self._lock:
            if registration._listener in self._listeners:
                self._listeners.remove(registration._listener)
                registration._listener.stop()

    # -- state ----------------------------------------------------------------------------

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def last_sync_resource_version(self) -> str:
        return self._reflector.last_sync_resource_version()

    def is_stopped(self) -> bool:
        return self._stopped

    # -- running --------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set (blocks). Starting twice is a no-op."""
        with self._lock:
            if self._started:
                return
            self._started = True
        reflector = threading.Thread(target=self._reflector.run, args=(stop,), name="reflector", daemon=True)
        reflector.start()
        resync = threading.Thread(target=self._resync_loop, args=(stop,), name="informer-resync", daemon=True)
        resync.start()
        closer = threading.Thread(target=self._close_on, args=(stop,), daemon=True)
        closer.start()
        try:
            while True:
                try:
                    self._fifo.pop(self._handle_deltas)
                except FIFOClosedError:
                    break
        finally:
            with self._lock:
                self._stopped = True
                for listener in self._listeners:
                    listener.stop()

    def _close_on(self, stop: threading.Event) -> None:
        stop.wait()
        self._fifo.close()

    def _mark_synced(self) -> None:
        if self.freeze_gc:
            gc.collect(0)
            gc.freeze()
        with self._lock:
            self._synced.set()
            for listener in self._listeners:
                listener.add((_SYNCED,))

    def _resync_loop(self, stop: threading.Event) -> None:
        while not stop.wait(max(MINIMUM_RESYNC_PERIOD, self._resync_check_period or 1.0)):
            if not self._resync_check_period:
                continue
            now = time.monotonic()
            with self._lock:
                due = any(listener.next_resync <= now for listener in self._listeners)
            if due:
                self._fifo.resync()

    def _handle_deltas(self, deltas: list[Any], is_in_initial_list: bool) -> None:
        transform = self._transform
        now = time.monotonic()
        with self._lock:
            listeners = list(self._listeners)
        syncing = [lst for lst in listeners if lst.next_resync <= now]
        if any(d.type == SYNC for d in deltas):
            for lst in syncing:
                lst.next_resync = now + lst.resync_period
        for delta in deltas:
            obj = delta.object
            if delta.type == DELETED:
                self._indexer.delete_by_key(self._fifo.key_of(obj))
                for lst in listeners:
                    lst.add(("delete", obj))
                continue
            if transform is not None:
                obj = transform(obj)
            old = self._indexer.get_by_key(self._fifo.key_of(obj))
            self._indexer.update(obj)
            if old is None:
                for lst in listeners:
                    lst.add(("add", obj, is_in_initial_list))
            elif delta.type == SYNC:
                for lst in syncing:
                    lst.add(("update", old, obj))
            else:
                for lst in listeners:
                    lst.add(("update", old, obj))


def wait_for_cache_sync(*synced: Callable[[], bool], stop: threading.Event | None = None,
                        timeout: float | None = None, poll_interval: float = 0.1) -> bool:
    """Wait until every ``synced()`` is true. False if ``stop`` is set or ``timeout`` passes first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    stop = stop or threading.Event()
    while True:
        if all(fn() for fn in synced):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        if stop.wait(poll_interval):
            return False
