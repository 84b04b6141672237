"""A controller: sources feed a rate-limited queue of Requests; workers call the Reconciler
(pkg/controller and pkg/internal/controller).

Defaults are Go's (controller-runtime 0.23+): ``max_concurrent_reconciles`` 1, ``recover_panic``
on, ``cache_sync_timeout`` 120 s, ``use_priority_queue`` on (``workqueue.PriorityQueue``: the
initial list's and resyncs' requests at low priority, so a user's change is answered first; a
request is requeued at the priority it was handed out with) with its rate limiter (per-item
exponential 5 ms..1000 s); ``use_priority_queue=False``: the FIFO ``RateLimitingQueue`` with
the default controller rate limiter (that, plus an overall 10 qps burst 100).

``reconciliation_timeout`` (seconds, 0: none; Go's ``ReconciliationTimeout``): an async reconcile
still running past it is cancelled (``asyncio.CancelledError`` inside it, as Go's context
deadline) and handled as an error (requeued with backoff); a sync one cannot be cancelled, so it is
reported: an error logged while it still runs and counted, and it goes on. Both count in
controller_runtime_reconcile_timeouts_total.

Result handling, exactly as Go's ``reconcileHandler``:
- raised ``TerminalError``: counted as an error and a terminal error, never requeued;
- raised ``ConflictError`` or ``AlreadyExistsError`` (409: a write based on a stale read, or a
  create the lagging cache did not know was done, lost a race): not an error here,
  unlike Go: ``add_rate_limited`` (backoff), counted in reconcile_conflicts_total and as a
  "requeue" result, logged at debug level only (it is expected and retried from a fresher cache);
- raised ``TemporaryError(delay=s)`` (kopf's): counted as an error and as a retry (the rate
  limiter's count grows), ``add_after(s)``; ``delay=None``: ``add_rate_limited``;
- raised anything else: counted as an error, ``add_rate_limited`` (backoff);
- ``Result(requeue_after=s)``: ``forget`` then ``add_after(s)``;
- ``Result(requeue=True)``: ``add_rate_limited``;
- otherwise ``forget``.
API errors (``StatusError``), transport errors (``OSError``/``TransportError``) and
``TerminalError``/``TemporaryError`` are ordinary errors. Any other exception is a *panic* (a
bug): with ``recover_panic`` it is counted in reconcile_panics_total and handled as an error,
and the worker lives on; without it the worker dies and ``start`` re-raises it after stopping
the controller. Every failure is logged once: one "Reconciler error" record (``error=``, and
``traceback=`` for a panic; ``retry_after=`` for a TemporaryError's delay).

``Options.keep_requested_delay`` (opt-in, kopf's behaviour): events for a request waiting for
the delay of a ``TemporaryError(delay=s)`` coalesce into that retry (``DelayKeepingQueue``)
instead of reconciling it at once, as controller-runtime does by default. Other delays
(``Result(requeue_after=)``, the rate limiter's backoff) are unchanged: events still reconcile.
Its queue is FIFO: it takes precedence over ``use_priority_queue``.
A request is never reconciled by two workers at once (the queue guarantees it).

Read your own writes (``runtime.consistency``, on by default through the builder): a request whose
previous reconcile wrote something the cache has not shown yet is held back (not reconciled, not
counted) until it has, or until ``ReadYourWrites.timeout``; other requests go on.

A reconciler whose ``reconcile`` is ``async def`` (``reconcile.is_async``) gets the same handling
from the same queue and the same code, but its reconciles are tasks on an event loop (the
Manager's, passed as ``event_loop``; a controller without one runs its own) instead of worker
threads: ``max_concurrent_reconciles`` then bounds the tasks in flight, and the thread count
does not grow with it (see ``runtime.controller.aio``). A sync ``reconcile`` returning a
coroutine or anything but a Result is a panic (TypeError naming the fix).
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

from samplecontroller.apimachinery.errors import AlreadyExistsError, ConflictError, StatusError
from samplecontroller.logs import get_logger
from samplecontroller.rest import TransportError
from samplecontroller.runtime import log as runtime_log
from samplecontroller.runtime import metrics as runtime_metrics
from samplecontroller.runtime.consistency import ObservedWrites, ReadYourWrites
from samplecontroller.runtime.eventloop import EventLoop
from samplecontroller.runtime.reconcile import (
    AsyncReconciler,
    Reconciler,
    Request,
    Result,
    TemporaryError,
    check_result,
    is_async,
    is_terminal,
)
from samplecontroller.runtime.reconcile.context import Contexts
from samplecontroller.runtime.source import Source
from samplecontroller.wait import Context, with_cancel
from samplecontroller.workqueue import (
    PriorityQueue,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
    shut_down_workers,
)

log = get_logger("runtime.controller")

DEFAULT_CACHE_SYNC_TIMEOUT = 120.0


@dataclass
class Options:
    """Controller options (Go's controller.Options)."""

    max_concurrent_reconciles: int = 1
    recover_panic: bool = True
    cache_sync_timeout: float = DEFAULT_CACHE_SYNC_TIMEOUT
    rate_limiter: RateLimiter[Any] | None = None
    need_leader_election: bool = True
    shutdown_timeout: float = 30.0
    # None: the manager's (runtime.manager.Options.read_your_writes), applied by the builder
    read_your_writes: ReadYourWrites | None = None
    # True: the builder's watches call their predicates and event handlers on the informers'
    # threads instead of a thread per handler (``SharedIndexInformer.add_event_handler(inline=True)``),
    # saving a thread hand-off per event. Only for handlers, predicates and map functions that
    # are quick and never block (reads from the cache are fine; API calls are not).
    inline_event_handlers: bool = False
    # True (opt-in, kopf's behaviour): the delay of a ``TemporaryError(delay=s)`` is kept. An
    # event for a request waiting for it coalesces into that pending retry instead of
    # reconciling it at once, and an event seen while it was being reconciled is dropped once
    # that reconcile raised it. ``Result(requeue_after=)`` and the rate limiter's backoff are
    # not kept. False (controller-runtime's): any event reconciles the request at once.
    keep_requested_delay: bool = False
    # controller-runtime's UsePriorityQueue (on by default since 0.23): see the module docstring
    use_priority_queue: bool = True
    # controller-runtime's ReconciliationTimeout, in seconds (0: none): see the module docstring
    reconciliation_timeout: float = 0.0


class SourceSyncError(RuntimeError):
    """A watched source did not sync within ``cache_sync_timeout``."""


def _is_panic(err: BaseException) -> bool:
    """An unexpected exception (a bug, as a Go panic): counted in reconcile_panics_total and,
    without ``recover_panic``, fatal. Still logged once, as any reconcile error."""
    return not (isinstance(err, (StatusError, TransportError, OSError, TemporaryError)) or is_terminal(err))


class Controller:
    """Runs ``reconciler`` for the Requests its sources enqueue. ``start`` blocks until ``stop``."""

    def __init__(self, name: str, reconciler: Reconciler | AsyncReconciler, options: Options | None = None, *,
                 event_loop: EventLoop | None = None) -> None:
        if not name:
            raise ValueError("a controller needs a name")
        self.name = name
        self.reconciler = reconciler
        self.is_async = is_async(reconciler)
        self.event_loop = event_loop
        self.options = options or Options()
        if self.options.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        if self.options.reconciliation_timeout < 0:
            raise ValueError("reconciliation_timeout must not be negative (0: no timeout)")
        self.metrics = runtime_metrics.install()
        self.queue: RateLimitingQueue[Hashable]
        if self.options.keep_requested_delay:  # opt-in, kopf's: a FIFO queue that keeps a requested delay
            self.queue = DelayKeepingQueue(self.options.rate_limiter or default_controller_rate_limiter(), name=name)
        elif self.options.use_priority_queue:
            self.queue = PriorityQueue(self.options.rate_limiter, name=name)
        else:
            self.queue = RateLimitingQueue(self.options.rate_limiter or default_controller_rate_limiter(), name=name)
        self._timeouts = self.metrics.reconcile_timeouts.labels(name)
        self._lock = threading.Lock()
        self._sources: list[Source] = []
        self._stop: threading.Event | None = None
        self._started = False
        self._panic: BaseException | None = None
        self._active = self.metrics.active_workers.labels(name)
        self._reconcile_time = self.metrics.reconcile_time.labels(name)
        self._totals = {r: self.metrics.reconcile_total.labels(name, r)
                        for r in ("success", "error", "requeue", "requeue_after")}
        self._errors = self.metrics.reconcile_errors.labels(name)
        self._conflicts = self.metrics.reconcile_conflicts.labels(name)
        self.observed_writes: ObservedWrites | None = None  # read your own writes: observe_writes
        self.contexts = Contexts(name)  # reconcile.context.current(): retries, logger (the builder adds more)

    def observe_writes(self, cache: Any, options: ReadYourWrites) -> None:
        """Hold each request back until ``cache`` has observed its previous reconcile's writes
        (``runtime.consistency``); nothing when ``options.enabled`` is False. Before ``start``."""
        self.observed_writes = ObservedWrites(self.name, cache, options.timeout) if options.enabled else None

    def need_leader_election(self) -> bool:
        """The ``need_leader_election`` option: True (the default) runs the controller only on the leader."""
        return self.options.need_leader_election

    def watch(self, src: Source) -> None:
        """Add a source. Before ``start`` it is started by ``start``; afterwards at once."""
        with self._lock:
            if self._started and self._stop is not None:
                src.start(self.queue, self._stop)
            self._sources.append(src)

    def reconcile(self, request: Request) -> Any:
        """Call the reconciler once (no queue, metrics or panic handling): a Result, or for an
        async reconciler the coroutine to await."""
        return self.reconciler.reconcile(request)

    # -- running ---------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start the sources, wait for them to sync, run the workers until ``stop``, then stop.

        On stop no new request is handed out (waiting ones are dropped); reconciles in progress
        may finish; the whole stop takes at most ``options.shutdown_timeout`` seconds.

        Raises ``SourceSyncError`` when a source does not sync within ``cache_sync_timeout`` and
        RuntimeError when started twice.
        """
        with self._lock:
            if self._started:
                raise RuntimeError(f"controller {self.name} was already started")
            self._started = True
            self._stop = stop
            sources = list(self._sources)
            for src in sources:
                src.start(self.queue, stop)
        log.info("Starting Controller", controller=self.name)
        if self.observed_writes is not None:
            self.observed_writes.start(self.queue, stop)
        try:
            self._wait_for_sources(sources, stop)
            if stop.is_set():
                return
            self._run_workers(stop)
        finally:
            self.queue.shut_down()
            log.info("All workers finished", controller=self.name)
        if self._panic is not None:
            raise self._panic

    def _wait_for_sources(self, sources: list[Source], stop: threading.Event) -> None:
        deadline = time.monotonic() + self.options.cache_sync_timeout
        for src in sources:
            while not src.wait_for_sync(0.05):
                if stop.is_set():
                    return
                if time.monotonic() >= deadline:
                    raise SourceSyncError(f"controller {self.name}: timed out waiting for source {src!r} to sync "
                                          f"after {self.options.cache_sync_timeout:g}s")

    def _run_workers(self, stop: threading.Event) -> None:
        if self.is_async:
            from samplecontroller.runtime.controller import aio

            aio.run_tasks(self, stop)
            return
        n = self.options.max_concurrent_reconciles
        self.metrics.max_concurrent.labels(self.name).set(n)
        log.info("Starting workers", controller=self.name, worker_count=n)
        ending = with_cancel(stop)  # stop, or a worker died: whichever comes first
        workers = [threading.Thread(target=self._worker, args=(ending,), name=f"{self.name}-worker-{i}", daemon=True)
                   for i in range(n)]
        for w in workers:
            w.start()
        ending.wait()
        log.info("Shutdown signal received, waiting for the reconciles in progress", controller=self.name,
                 waiting=self.queue.len())
        if not shut_down_workers(self.queue, workers, self.options.shutdown_timeout):
            log.error("Shutdown timeout reached; abandoning the reconciles still in progress", controller=self.name,
                      timeout=self.options.shutdown_timeout)

    def _worker(self, died: Context) -> None:
        try:
            while self.process_next_work_item():
                pass
        except BaseException as err:
            self._panic = err
            died.cancel()

    def process_next_work_item(self) -> bool:
        """Reconcile one queued item; False once the queue has shut down."""
        got = self.queue.get()
        if got[1]:
            return False
        item = got[0]
        self._active.inc()
        try:
            self._reconcile_handler(item)
        finally:
            self._active.dec()
            self.queue.done(item)
        return True

    def _reconcile_handler(self, item: Hashable) -> None:
        if not self._is_request(item) or self.held(item):
            return
        started = time.monotonic()
        watchdog = self._watchdog(item)
        try:
            with self.reconciling(item):
                result = check_result(self.reconciler, self.reconciler.reconcile(item))
        except Exception as err:
            self._on_error(item, err)
            return
        finally:
            if watchdog is not None:
                watchdog.cancel()
            self._reconcile_time.observe(time.monotonic() - started)
        self._on_result(item, result)

    def _watchdog(self, request: Request) -> threading.Timer | None:
        """For a sync reconcile with ``reconciliation_timeout``: a timer that reports it once it
        runs past the timeout (a thread cannot be cancelled); None without a timeout."""
        timeout = self.options.reconciliation_timeout
        if timeout <= 0:
            return None
        timer = threading.Timer(timeout, self.report_timeout, args=(request, False))
        timer.daemon = True
        timer.start()
        return timer

    def report_timeout(self, request: Request, cancelled: bool) -> None:
        """Count and log a reconcile that ran past ``reconciliation_timeout``."""
        log.error("Reconcile ran past the reconciliation timeout" + ("; cancelled" if cancelled else
                  " (a sync reconcile cannot be cancelled: it goes on)"), controller=self.name,
                  request=str(request), timeout=self.options.reconciliation_timeout)
        self._timeouts.inc()

    def held(self, request: Request) -> bool:
        """True when the cache has not observed ``request``'s last writes yet (read your own
        writes): it is not reconciled now and comes back when it has."""
        writes = self.observed_writes
        return writes is not None and writes.hold(request)

    @contextlib.contextmanager
    def reconciling(self, request: Request) -> Iterator[None]:
        """The scope of one reconcile of ``request``, sync or async: its bound logger
        (``runtime.log``), ``reconcile.context.current()``, and the recording of its writes."""
        writes = self.observed_writes
        with runtime_log.reconcile_scope(self.name, request), \
                self.contexts.entered(request, self.queue.num_requeues(request)), \
                writes.reconciling(request) if writes is not None else contextlib.nullcontext():
            yield

    def _is_request(self, item: Hashable) -> TypeGuard[Request]:
        if isinstance(item, Request):
            return True
        log.error("Queue item was not a Request", controller=self.name, item=repr(item))
        self.queue.forget(item)
        return False

    def _on_result(self, item: Request, result: Result) -> None:
        """The queue and metrics after a reconcile that returned ``result`` (shared by both styles)."""
        if result.requeue_after > 0:
            self.queue.forget(item)
            self._requeue(item, after=result.requeue_after)
            self._totals["requeue_after"].inc()
        elif result.requeue:
            self._requeue(item)
            self._totals["requeue"].inc()
        else:
            self.queue.forget(item)
            self._totals["success"].inc()

    def _requeue(self, item: Request, after: float = 0.0) -> None:
        """Add ``item`` back after ``after`` seconds, or rate-limited when 0; with a priority
        queue at the priority it was handed out with (Go's reconcileHandler)."""
        queue = self.queue
        if isinstance(queue, PriorityQueue):
            queue.add_with_opts(item, priority=queue.priority_of(item), after=after, rate_limited=after <= 0)
        elif after > 0:
            queue.add_after(item, after)
        else:
            queue.add_rate_limited(item)

    def _on_error(self, item: Request, err: Exception) -> None:
        if isinstance(err, ConflictError | AlreadyExistsError):
            self._conflicts.inc()
            self._totals["requeue"].inc()
            self._requeue(item)
            log.debug("Reconciler conflict, requeuing", controller=self.name, request=str(item), error=str(err))
            return
        extra: dict[str, Any] = {}
        if _is_panic(err):
            self.metrics.reconcile_panics.labels(self.name).inc()
            if not self.options.recover_panic:
                raise err
        if _is_panic(err) or (err.__cause__ is not None and _is_panic(err.__cause__)):
            # one record per failure (controller-runtime's "Reconciler error"); where an unexpected
            # exception came from (also one a TemporaryError/TerminalError was raised from) is part
            # of it, not a second line
            extra["traceback"] = "".join(traceback.format_exception(err))
        self._errors.inc()
        self._totals["error"].inc()
        error = f"{type(err).__name__}: {err}"
        if is_terminal(err):
            self.metrics.terminal_errors.labels(self.name).inc()
            self.queue.forget(item)
            log.error("Reconciler error (terminal, not requeued)", controller=self.name, request=str(item),
                      error=error, **extra)
            return
        if isinstance(err, TemporaryError) and err.delay is not None:
            self.queue.rate_limiter.when(item)  # counted as a retry (context.current().retries) ...
            if isinstance(self.queue, DelayKeepingQueue):
                self.queue.keep_after(item, err.delay)  # ... after the delay, events coalescing into it
            else:
                self._requeue(item, after=err.delay)  # ... but after the delay it asked for
            extra["retry_after"] = err.delay
        else:
            self._requeue(item)
        log.error("Reconciler error", controller=self.name, request=str(item), error=error, **extra)


class DelayKeepingQueue(RateLimitingQueue[Hashable]):
    """The queue of a controller with ``keep_requested_delay``: an ``add`` (an event) for an item
    waiting for a kept delay (``keep_after``) is dropped (the pending retry covers it); one for
    an item being processed is remembered and added at ``done`` unless that reconcile asked for
    a kept delay. Delays from ``add_after`` (requeue_after, backoff) are not kept."""

    def __init__(self, rate_limiter: RateLimiter[Any], name: str = "") -> None:
        super().__init__(rate_limiter, name)
        self._seen_while_processing: set[Hashable] = set()
        self._kept: set[Hashable] = set()  # items whose pending delay is kept (under _timer_cond)

    def keep_after(self, item: Hashable, seconds: float) -> None:
        """``add_after``, and until then events for ``item`` coalesce into it."""
        with self._timer_cond:
            self._kept.add(item)
        self.add_after(item, seconds)

    def _waiting_kept(self, item: Hashable) -> bool:
        with self._timer_cond:
            if item in self._kept and item in self._ready_at:
                return True
            self._kept.discard(item)  # its delay is over (or it was never kept)
            return False

    def add(self, item: Hashable) -> None:
        if self._waiting_kept(item):
            return
        with self._lock:
            if item in self._processing and not self._shutting_down:
                self._seen_while_processing.add(item)
                return
        super().add(item)

    def done(self, item: Hashable) -> None:
        with self._lock:
            seen = item in self._seen_while_processing
            self._seen_while_processing.discard(item)
        super().done(item)
        if seen and not self._waiting_kept(item):
            super().add(item)


__all__ = ["DEFAULT_CACHE_SYNC_TIMEOUT", "Controller", "DelayKeepingQueue", "Options", "SourceSyncError"]
