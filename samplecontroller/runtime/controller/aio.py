"""Async reconciles: the controller's queue drained by tasks on one event loop.

Same queue, same result and error handling (``Controller._on_result`` / ``_on_error``), same
metrics as the worker threads; what differs is only who waits:

- one dispatcher task takes a Request from the queue whenever fewer than
  ``max_concurrent_reconciles`` reconciles are in flight and starts a task for it. The queue is
  the thread-safe work queue the informers feed: an item already waiting is taken at once;
  otherwise the queue calls back from the thread that adds the next item, waking the loop
  (``Queue.get_or_notify``, ``AsyncGetter``). So a thousand reconciles in flight are a thousand
  tasks on the loop's one thread, not a thousand threads;
- every reconcile ends with ``queue.done``, so a request is never reconciled twice at once;
- stop: ``Queue.shut_down_in_flight`` (waiting items dropped, those in flight may finish) bounded
  by ``shutdown_timeout``; the reconciles still running at the deadline are cancelled
  (``asyncio.CancelledError`` inside them, like Go's cancelled context) rather than abandoned;
- a panic without ``recover_panic`` stops the controller, whose ``start`` re-raises it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from samplecontroller.logs import get_logger
from samplecontroller.runtime.eventloop import EventLoop
from samplecontroller.runtime.reconcile import Request, check_result
from samplecontroller.wait import Context, with_cancel
from samplecontroller.workqueue import Got, Queue

if TYPE_CHECKING:
    from samplecontroller.runtime.controller import Controller

log = get_logger("runtime.controller")

__all__ = ["AsyncGetter", "ReconciliationTimeoutError", "run_tasks"]


class ReconciliationTimeoutError(TimeoutError):
    """An async reconcile was cancelled at ``reconciliation_timeout``: handled as an error (requeued
    with backoff), as Go's reconciler returning its context's deadline error."""


class AsyncGetter:
    """An awaitable ``get`` on a thread-safe ``Queue``, on the running loop: an item waiting is
    taken at once; otherwise the queue calls back (``Queue.get_or_notify``) from the thread that
    adds the next one, which wakes this loop. No thread of its own, the loop never blocks. One
    getter serves one task at a time (the dispatcher)."""

    def __init__(self, queue: Queue[Any]) -> None:
        self.queue = queue
        self._loop: asyncio.AbstractEventLoop | None = None
        self._woken: asyncio.Future[None] | None = None

    async def get(self) -> Got[Any]:
        """The next ``(item, shutdown)`` of the queue, as ``Queue.get`` but awaited: an item waiting is
        taken at once, else the loop waits (unblocked) until one is added or the queue shuts down."""
        loop = self._loop = asyncio.get_running_loop()  # before the queue may call _notify
        while True:
            got = self.queue.get_or_notify(self._notify)
            if got is not None:
                return got
            # _notify (another thread) only schedules _wake on this loop, which runs it after this
            # task awaits the future made here: a wake-up is never lost, at worst one is spurious.
            woken = self._woken = loop.create_future()
            try:
                await woken
            finally:
                self._woken = None

    def _notify(self) -> None:
        """Called by the thread that adds an item (queue lock held): only hands over to the loop."""
        loop = self._loop
        assert loop is not None  # set by get before it hands this callback to the queue
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # the loop closed meanwhile: nobody waits any more
            pass

    def _wake(self) -> None:
        woken = self._woken
        if woken is not None and not woken.done():
            woken.set_result(None)


def run_tasks(ctrl: Controller, stop: Any) -> None:
    """Run ``ctrl``'s async reconciles until ``stop`` (or a fatal panic), then stop within
    ``shutdown_timeout``. Blocks the calling thread (the controller's ``start``)."""
    own = ctrl.event_loop is None
    loop = EventLoop(f"{ctrl.name}-event-loop") if own else ctrl.event_loop
    assert loop is not None
    n = ctrl.options.max_concurrent_reconciles
    ctrl.metrics.max_concurrent.labels(ctrl.name).set(n)
    log.info("Starting workers", controller=ctrl.name, worker_count=n, style="async")
    ending = with_cancel(stop)  # stop, or a reconcile panicked without recovery
    pool = _TaskPool(ctrl, ending)
    dispatcher = loop.submit(pool.dispatch())
    dispatcher.add_done_callback(lambda f: _dispatcher_ended(ctrl, ending, f))
    try:
        ending.wait()
        log.info("Shutdown signal received, waiting for the reconciles in progress", controller=ctrl.name,
                 waiting=ctrl.queue.len())
        deadline = time.monotonic() + ctrl.options.shutdown_timeout
        finished = ctrl.queue.shut_down_in_flight(ctrl.options.shutdown_timeout)
        try:
            dispatcher.result(max(0.0, deadline - time.monotonic()) if finished else 0.0)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            finished = False
        if not finished:
            log.error("Shutdown timeout reached; cancelling the reconciles still in progress", controller=ctrl.name,
                      timeout=ctrl.options.shutdown_timeout)
            dispatcher.cancel()
            _wait_cancelled(loop, pool)
    finally:
        if own:
            loop.close()


def _dispatcher_ended(ctrl: Controller, ending: Context, done: concurrent.futures.Future[None]) -> None:
    """A dispatcher that ended (normally only after the stop) ends the run; a failure is logged
    and re-raised by ``start``, as a worker's panic."""
    if not done.cancelled() and done.exception() is not None:
        err = done.exception()
        log.error("Reconcile dispatcher failed", controller=ctrl.name, error=f"{type(err).__name__}: {err}")
        if ctrl._panic is None:
            ctrl._panic = err
    ending.cancel()


def _wait_cancelled(loop: EventLoop, pool: _TaskPool) -> None:
    """Cancel every reconcile task and wait (briefly) until they have run their cleanup."""
    try:
        loop.run(pool.cancel_all())
    except (RuntimeError, concurrent.futures.CancelledError):  # the loop is closing too
        pass


class _TaskPool:
    def __init__(self, ctrl: Controller, ending: Context) -> None:
        self.ctrl = ctrl
        self.ending = ending
        self.getter = AsyncGetter(ctrl.queue)
        self.tasks: set[asyncio.Task[None]] = set()

    async def dispatch(self) -> None:
        """Start a task per request, at most ``max_concurrent_reconciles`` at once, until the
        queue shuts down; then wait for the tasks in flight."""
        slots = asyncio.Semaphore(self.ctrl.options.max_concurrent_reconciles)
        tasks = self.tasks

        def finished(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            slots.release()

        try:
            while True:
                await slots.acquire()
                got = await self.getter.get()
                if got[1]:
                    break
                task = asyncio.create_task(self.process(got[0]))
                self.tasks.add(task)
                task.add_done_callback(finished)
            if self.tasks:
                await asyncio.wait(list(self.tasks))
        except asyncio.CancelledError:
            await self.cancel_all()
            raise

    async def cancel_all(self) -> None:
        tasks = list(self.tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)

    async def process(self, item: Hashable) -> None:
        ctrl = self.ctrl
        ctrl._active.inc()
        try:
            await reconcile_handler(ctrl, item)
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # a panic without recovery: the controller stops
            ctrl._panic = err
            self.ending.cancel()
        finally:
            ctrl._active.dec()
            ctrl.queue.done(item)


async def reconcile_handler(ctrl: Controller, item: Hashable) -> None:
    """``Controller._reconcile_handler`` for an async reconciler: the same handling, awaited."""
    if not ctrl._is_request(item) or ctrl.held(item):
        return
    request: Request = item
    started = time.monotonic()
    timeout = ctrl.options.reconciliation_timeout
    try:
        with ctrl.reconciling(request):
            if timeout > 0:
                deadline = asyncio.timeout(timeout)
                try:
                    async with deadline:
                        result = check_result(ctrl.reconciler,
                                              await ctrl.reconciler.reconcile(request))  # type: ignore[misc]
                except TimeoutError:
                    if not deadline.expired():  # the reconciler's own TimeoutError
                        raise
                    ctrl.report_timeout(request, True)
                    raise ReconciliationTimeoutError(
                        f"reconcile cancelled after the reconciliation timeout ({timeout:g}s)") from None
            else:
                result = check_result(ctrl.reconciler, await ctrl.reconciler.reconcile(request))  # type: ignore[misc]
    except asyncio.CancelledError:
        raise
    except Exception as err:
        ctrl._on_error(request, err)
        return
    finally:
        ctrl._reconcile_time.observe(time.monotonic() - started)
    ctrl._on_result(request, result)
