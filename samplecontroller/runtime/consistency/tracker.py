"""Read your own writes: a controller does not reconcile a key again until its cache has seen
what the previous reconcile of that key wrote (KEP-5647's per-object staleness mitigation).

``ObservedWrites`` belongs to one controller. Around each reconcile, ``reconciling(request)``
records (``recorder``) the writes made through the runtime client; when it ends (also when the
reconcile raised) the writes that the cache can show are remembered for that request:

- a create, update, patch, apply or status write is observed once the cache holds that object at
  that resourceVersion or later, or has delivered any event of that type at that version or
  later (the informer's watermark: the object may have been deleted since);
- a delete is observed once the cache no longer has the object (by uid), or has it marked for
  deletion (finalizers hold it);
- a write the cache cannot show is not waited for: types with no informer in the cache (never
  read through it; a metadata-only informer, ``client.metadata.only_metadata``, counts), namespaces outside the cache's, objects outside the type's label selector,
  types cached with a field selector, and resourceVersions that are not integers (the API
  server's are; anything else is taken as already observed).

When the controller's queue hands out a request (``hold``) whose writes are not all observed,
the request is set aside instead of reconciled: only that key waits, other keys go on. It is
added back to the queue as soon as the last of its writes is observed (informer events wake it),
or when ``timeout`` seconds have passed since the writes; then it is reconciled anyway,
``controller_runtime_read_your_writes_timeouts_total{controller}`` is incremented and one
warning names the writes not seen. ``controller_runtime_read_your_writes_deferred_total`` counts
the hand-outs held back and ``controller_runtime_read_your_writes_wait_seconds`` how long a held
key waited.

``hold``, ``reconciling`` and ``expect`` never block (an async controller can call them from its
event loop; ``reconciling`` is a ContextVar, so it follows one asyncio task); released requests are
added to the queue from informer threads and the deadline thread (the queue must be thread-safe).

Within one reconcile the cache still lags its own writes (a list right after a create may not
show it): this guards the next reconcile, as KEP-5647 does, not each read (controller-runtime's
read-your-own-write client). Writes through anything but the runtime client (a typed clientset,
the event recorder) are not seen.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from prometheus_client import Counter, Histogram

from samplecontroller.apimachinery import labels, meta
from samplecontroller.cache import DeletedFinalStateUnknown
from samplecontroller.client.metadata import OnlyMetadata
from samplecontroller.logs import get_logger
from samplecontroller.runtime.consistency.recorder import Write, recording
from samplecontroller.wait import Clock, as_context
from samplecontroller.wait.clock import REAL_CLOCK

log = get_logger("runtime.consistency")

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class ReadYourWrites:
    """Read-your-own-writes options: on by default; ``timeout`` bounds how long a key waits."""

    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT


class _Queue(Protocol):
    def add(self, item: Any) -> None: ...


class _Informer(Protocol):
    def add_event_handler(self, handler: Any, resync_period: float | None = None, *, inline: bool = False) -> Any: ...
    def get_indexer(self) -> Any: ...


class _Metrics:
    def __init__(self) -> None:
        self.deferred = Counter("controller_runtime_read_your_writes_deferred",
                                "Requests held back because the cache had not observed the writes of the "
                                "request's previous reconcile, per controller", ["controller"])
        self.timeouts = Counter("controller_runtime_read_your_writes_timeouts",
                                "Requests reconciled although the cache had not observed the writes of their "
                                "previous reconcile within the bound, per controller", ["controller"])
        self.wait = Histogram("controller_runtime_read_your_writes_wait_seconds",
                              "How long a held-back request waited for the cache to observe its writes",
                              ["controller"], buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                                       5, 10, 30))


_metrics: _Metrics | None = None
_metrics_lock = threading.Lock()


def metrics() -> _Metrics:
    """The read-your-writes collectors (registered once per process)."""
    global _metrics
    with _metrics_lock:
        if _metrics is None:
            _metrics = _Metrics()
        return _metrics


def _rv(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


@dataclass
class _Pending:
    """A request's unobserved writes."""

    request: Hashable
    writes: list[_Entry]
    deadline: float
    parked_at: float | None = None
    outstanding: int = 0


@dataclass(eq=False)
class _Entry:
    write: Write
    pending: _Pending
    rv: int = 0
    done: bool = False


@dataclass
class _InformerWatch:
    """One informer's watermark and the writes waiting on it (guarded by the tracker's lock)."""

    informer: Any
    watermark: int = 0
    by_rv: list[tuple[int, int, _Entry]] = field(default_factory=list)
    deletes: dict[str, list[_Entry]] = field(default_factory=dict)


class _Handler:
    """The informer event handler that feeds one ``_InformerWatch``."""

    def __init__(self, tracker: ObservedWrites, watch: _InformerWatch) -> None:
        self.tracker = tracker
        self.watch = watch

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.tracker._seen(self.watch, obj, False)

    def on_update(self, old: Any, new: Any) -> None:
        self.tracker._seen(self.watch, new, False)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.tracker._seen(self.watch, obj, True)


def _store_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


class ObservedWrites:
    """The per-controller tracker (see the module docstring). ``cache`` is the runtime cache the
    reconciler reads (``runtime.cache.Cache``)."""

    def __init__(self, controller: str, cache: Any, timeout: float = DEFAULT_TIMEOUT, *,
                 clock: Clock = REAL_CLOCK) -> None:
        if timeout <= 0:
            raise ValueError("the read-your-writes timeout must be positive")
        self.controller = controller
        self.cache = cache
        self.timeout = timeout
        self.clock = clock
        self._lock = threading.Condition()
        self._pending: dict[Hashable, _Pending] = {}
        self._watches: dict[int, _InformerWatch] = {}
        self._timers: list[tuple[float, int, Hashable]] = []
        self._seq = itertools.count()
        self._queue: _Queue | None = None
        self._stopped = False
        self._warned_opaque = False
        m = metrics()
        self._deferred = m.deferred.labels(controller)
        self._timeouts = m.timeouts.labels(controller)
        self._wait = m.wait.labels(controller)

    # -- the controller's side ----------------------------------------------------------------

    def start(self, queue: _Queue, stop: threading.Event) -> None:
        """Release held requests into ``queue`` from now on; a thread handles the deadlines until ``stop``."""
        with self._lock:
            self._queue = queue
        ctx = as_context(stop)
        ctx.add_done_callback(self._stop)
        threading.Thread(target=self._run_timers, name=f"{self.controller}-ryow-timers", daemon=True).start()

    @contextlib.contextmanager
    def reconciling(self, request: Hashable) -> Iterator[None]:
        """Record the writes of the reconcile in this block, then wait for them (see the module doc)."""
        with recording() as rec:
            try:
                yield
            finally:
                if rec.writes:
                    self.expect(request, rec.writes)

    def hold(self, request: Hashable) -> bool:
        """True: the cache has not yet observed ``request``'s writes; do not reconcile it now (it is
        added back to the queue when they are observed or the bound passes). False: go ahead."""
        with self._lock:
            pending = self._pending.get(request)
            if pending is None or self._queue is None:  # not started: nothing could bring it back
                return False
            now = self.clock.now()
            if now < pending.deadline:
                if pending.parked_at is None:
                    pending.parked_at = now
                    heapq.heappush(self._timers, (pending.deadline, next(self._seq), request))
                    self._lock.notify_all()
                self._deferred.inc()
                return True
            missing = [str(e.write) for e in pending.writes if not e.done]
            self._drop(pending)
        self._timeouts.inc()
        log.warning("The cache did not observe the writes of the previous reconcile in time; reconciling anyway",
                    controller=self.controller, request=str(request), timeout=self.timeout,
                    not_observed=", ".join(missing))
        return False

    def pending(self, request: Hashable) -> list[Write]:
        """The writes of ``request`` the cache has not observed yet (for tests and debugging)."""
        with self._lock:
            p = self._pending.get(request)
            return [] if p is None else [e.write for e in p.writes if not e.done]

    # -- remembering writes -------------------------------------------------------------------

    def expect(self, request: Hashable, writes: Sequence[Write]) -> None:
        """Remember ``writes`` (made by reconciling ``request``) until the cache observes them."""
        last: dict[tuple[str, str, str, str], Write] = {}
        for w in writes:
            last[(w.info.group, w.info.resource, w.namespace, w.name)] = w
        targets = [(w, watch) for w in last.values() if (watch := self._watch_for(w)) is not None]
        release = False
        with self._lock:
            pending = self._pending.get(request)
            if pending is None:
                pending = _Pending(request, [], self.clock.now() + self.timeout)
            else:
                pending.deadline = self.clock.now() + self.timeout
            for w, watch in targets:
                self._expect_one(pending, w, watch)
            if pending.outstanding:
                self._pending[request] = pending
            elif request in self._pending:
                release = self._release_locked(pending)
        if release:
            self._add(request)

    def _expect_one(self, pending: _Pending, w: Write, watch: _InformerWatch) -> None:
        entry = _Entry(w, pending)
        current = watch.informer.get_indexer().get_by_key(_store_key(w.namespace, w.name))
        if w.deleted:
            if _delete_observed(current, w.uid):
                return
            watch.deletes.setdefault(_store_key(w.namespace, w.name), []).append(entry)
        else:
            rv = _rv(w.resource_version)
            if rv is None:
                self._opaque(w)
                return
            cached = _rv(meta.get_resource_version(current)) if current is not None else None
            if rv <= watch.watermark or (cached is not None and cached >= rv):
                return
            entry.rv = rv
            heapq.heappush(watch.by_rv, (rv, next(self._seq), entry))
        pending.writes.append(entry)
        pending.outstanding += 1

    def _opaque(self, w: Write) -> None:
        if not self._warned_opaque:
            self._warned_opaque = True
            log.warning("A resourceVersion is not an integer; such writes are taken as observed at once",
                        controller=self.controller, write=str(w))

    def _watch_for(self, w: Write) -> _InformerWatch | None:
        """The informer that would show ``w``, watched (None: the cache cannot show it)."""
        existing = getattr(self.cache, "existing_informer", None)
        model: Any = w.info.model
        if model is dict:  # a write of an unstructured kind: its informer is keyed by Unstructured
            from samplecontroller.client.unstructured import Unstructured

            api_version = f"{w.info.group}/{w.info.version}" if w.info.group else w.info.version
            model = Unstructured(api_version, w.info.kind, w.info.resource, w.info.namespaced)
        group = existing(model) if existing is not None else None
        if group is None and existing is not None:  # a metadata-only informer shows the write as well
            group = existing(OnlyMetadata(model))
        if group is None or not _visible(self.cache, w):
            return None
        try:
            informer = group.informer_for_namespace(w.namespace if w.info.namespaced else "")
        except ValueError:
            return None
        with self._lock:
            watch = self._watches.get(id(informer))
            if watch is not None:
                return watch
            watch = _InformerWatch(informer)
            self._watches[id(informer)] = watch
        try:
            informer.add_event_handler(_Handler(self, watch), 0, inline=True)  # it never blocks: no thread of its own
        except RuntimeError:  # the informer has stopped (the manager is stopping): it will show no write
            with self._lock:
                if self._watches.get(id(informer)) is watch:
                    del self._watches[id(informer)]
            return None
        return watch

    # -- observing ----------------------------------------------------------------------------

    def _seen(self, watch: _InformerWatch, obj: Any, deleted: bool) -> None:
        released: list[Hashable] = []
        with self._lock:
            rv = _rv(meta.get_resource_version(obj))
            if rv is not None and rv > watch.watermark:
                watch.watermark = rv
                while watch.by_rv and watch.by_rv[0][0] <= rv:
                    self._observed(heapq.heappop(watch.by_rv)[2], released)
            key = _store_key(meta.get_namespace(obj), meta.get_name(obj)) if watch.deletes else ""
            waiting = watch.deletes.get(key) if key else None  # the key only when some delete waits
            if waiting and (deleted or _delete_observed(obj, "")):
                for entry in waiting:
                    if deleted or _delete_observed(obj, entry.write.uid):
                        self._observed(entry, released)
                waiting[:] = [e for e in waiting if not e.done]
                if not waiting:
                    del watch.deletes[key]
        for request in released:
            self._add(request)

    def _observed(self, entry: _Entry, released: list[Hashable]) -> None:
        if entry.done:
            return
        entry.done = True
        pending = entry.pending
        pending.outstanding -= 1
        if pending.outstanding == 0 and self._pending.get(pending.request) is pending and \
                self._release_locked(pending):
            released.append(pending.request)

    def _release_locked(self, pending: _Pending) -> bool:
        """Forget ``pending``; True when its request was held back (so must be queued again)."""
        self._pending.pop(pending.request, None)
        if pending.parked_at is None:
            return False
        self._wait.observe(max(0.0, self.clock.now() - pending.parked_at))
        return True

    def _drop(self, pending: _Pending) -> None:
        for e in pending.writes:
            e.done = True
        self._pending.pop(pending.request, None)

    def _add(self, request: Hashable) -> None:
        queue = self._queue
        if queue is not None:
            queue.add(request)

    # -- deadlines ----------------------------------------------------------------------------

    def _stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()

    def _run_timers(self) -> None:
        """Add each held request back to the queue when its deadline comes (``hold`` then times out)."""
        with self._lock:
            while not self._stopped:
                due: list[Hashable] = []
                now = self.clock.now()
                while self._timers and self._timers[0][0] <= now:
                    _, _, request = heapq.heappop(self._timers)
                    pending = self._pending.get(request)
                    if pending is not None and pending.parked_at is not None:
                        due.append(request)
                if due:
                    self._lock.release()
                    try:
                        for request in due:
                            self._add(request)
                    finally:
                        self._lock.acquire()
                    continue
                self.clock.wait(self._lock, self._timers[0][0] if self._timers else None)


def _delete_observed(current: Any, uid: str) -> bool:
    """The cache shows a delete of the object with ``uid``: gone, replaced or being deleted."""
    if current is None:
        return True
    if uid and meta.get_uid(current) and meta.get_uid(current) != uid:
        return True
    return bool(meta.get_deletion_timestamp(current))


def _visible(cache: Any, w: Write) -> bool:
    """False when the cache's selectors for the type may hide ``w``'s object."""
    selectors = getattr(cache, "selectors_for", None)
    if selectors is None:
        return True
    label_selector, field_selector = selectors(w.info.model)
    if field_selector:
        return False
    if not label_selector:
        return True
    if w.labels is None:
        return False
    return labels.parse(label_selector).matches(w.labels)


__all__ = ["DEFAULT_TIMEOUT", "ObservedWrites", "ReadYourWrites", "metrics"]
