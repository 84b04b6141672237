"""Per-object daemons and timers (kopf's ``@kopf.daemon`` and ``@kopf.timer``).

    from samplecontroller.runtime import daemon

    def watch_pressure(d: daemon.Context) -> None:  # one thread per matching object
        while not d.stopped.is_set():
            # d.object: the latest cached version
            d.logger.info("pressure", value=d.object.spec.pressure)
            d.sleep(10)  # True once it should stop

    # one task per matching object, on the manager's event loop
    async def watch_level(d: daemon.Context) -> None:
        while True:
            d.logger.info("level", value=d.object.spec.level)
            await asyncio.sleep(10)  # cancelled (CancelledError) once it should stop

    daemon.add_daemon(mgr, Tank, watch_pressure, when=lambda t: t.spec.monitored,
                      cancellation_timeout=5, finalizer="example.com/pressure-daemon")
    daemon.add_timer(mgr, Tank, lambda d: check(d.object), interval=30, idle=10,
                     initial_delay=5)

Contract (both run on the leader only, from when the Manager's cache has synced):

- A daemon starts for each object of the type (in the cache's namespaces) that matches ``when``
  (default: all) and is not being deleted. It is asked to stop (``Context.stopped`` is set) when the
  object is deleted or marked for deletion, stops matching ``when``, or the Manager stops. It
  then has ``cancellation_timeout`` seconds to return; after that it is abandoned (a warning, a
  metric; a Python thread cannot be killed) and its finalizer released.
- ``async def`` functions (daemons and timers) run as asyncio tasks on the Manager's event loop
  (``mgr.get_event_loop()``), not a thread per object. Stopping one sets ``stopped`` and cancels
  the task (``asyncio.CancelledError`` at its current ``await``, like kopf's async daemons); it
  has ``cancellation_timeout`` seconds to finish (cleanup in ``except``/``finally`` may await),
  else it is abandoned as above. ``Context.sleep_async(seconds)`` is ``sleep`` awaited. A sync
  function that returns a coroutine is an error (logged, naming the fix: ``async def``); that
  object's daemon or timer then ends, as if it had returned.
- ``fn(ctx)`` returning ends that object's daemon (it is not started again for that object
  until the Manager restarts, as kopf). ``fn`` raising is logged once and retried, as kopf:
  ``reconcile.TemporaryError(msg, delay=s)`` after ``s`` seconds (no traceback); any other
  exception after ``backoff`` seconds (with its traceback); ``reconcile.PermanentError`` (or
  ``TerminalError``) is not retried: that object's daemon ends. With ``retries=N`` the Nth
  failure in a row ends it too. ``ctx.retries`` counts the failures since the last success
  (kopf's ``retry``). An exception raised once it was asked to stop is logged and ends it.
- A timer calls ``fn(ctx)`` every ``interval`` seconds (never two calls at once for one object,
  the interval counted from the end of the previous call), first after ``initial_delay``; with
  ``idle``, only once the object has not changed for ``idle`` seconds. A failure is retried
  after its ``TemporaryError`` delay, else after ``backoff`` (default: the interval); a
  ``PermanentError`` (or running out of ``retries``) waits for the next tick as usual; a success
  resets ``ctx.retries``. Timers stop as daemons do (their ``cancellation_timeout`` bounds
  the wait for a call in progress).
- One line per object and step (logger ``runtime.daemon``, ``[ns/name] Daemon ...`` or
  ``Timer ...`` with ``daemon=``): ``started``, ``stopping`` (``reason=``: the object is being
  deleted, was deleted, no longer matches ``when``, or the manager is stopping), ``stopped``,
  ``cancelled`` (an async one), ``returned; not restarted for this object``, ``failed ...;
  retrying in Ns`` (``retry=``), ``failed permanently``, ``failed while stopping``, and the
  abandonment warning.
- ``finalizer`` (optional, daemons and timers): added to the object when its daemon starts, removed once
  the daemon has stopped (or been abandoned), so a deletion waits for the daemon. Objects that are
  deleted while no daemon runs (the operator was down) have the finalizer removed at once.
- ``Context``: ``object`` (the latest version the cache has delivered), ``request``
  (namespace/name), ``retries``, ``stop_reason``, ``stopped`` (an Event), ``sleep(seconds)`` (returns True early once stopped),
  ``logger`` (a ``reconcile.context.ObjectLogger``: ``[ns/name]`` lines, ``event=`` posts an Event).
- Metrics (label ``daemon``, the name): ``controller_runtime_daemons_running`` (gauge),
  ``controller_runtime_daemon_runs_total{result}`` (daemon: ``returned``/``error``; timer:
  ``success``/``error``), ``controller_runtime_daemons_abandoned_total``.

One core for both kinds: the informer handler, the bookkeeping of who runs and who is stopping, the
finalizer, the metrics and the restart/tick decisions are shared; a ``_Worker`` is started as a
thread (sync ``fn``) or a task (async ``fn``) and stopped by setting ``stopped`` (plus
``task.cancel`` for a task). A sync daemon costs a thread per object (fine for hundreds); an async
one a task. Adding the finalizer from a task runs the sync client on the loop's default executor
(a small shared pool); stopping one object's daemon waits on a short-lived thread, as for sync ones.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter, Gauge

from samplecontroller.apimachinery import errors, meta
from samplecontroller.apimachinery.finalizers import add_finalizer, contains_finalizer, remove_finalizer
from samplecontroller.cache import DeletedFinalStateUnknown
from samplecontroller.logs import get_logger
from samplecontroller.runtime.client import MergeFrom
from samplecontroller.runtime.eventloop import EventLoop, until_set
from samplecontroller.runtime.reconcile import Request, TemporaryError, is_terminal
from samplecontroller.runtime.reconcile.context import ObjectLogger
from samplecontroller.wait import Context as StopContext

log = get_logger("runtime.daemon")

__all__ = ["Context", "NotAwaitedError", "ObjectDaemons", "add_daemon", "add_timer"]

DaemonFunc = Callable[["Context"], Any]
"""``fn(ctx)``, a plain function or an ``async def`` one (``Callable[[Context], Awaitable[Any]]``)."""


class NotAwaitedError(TypeError):
    """A sync daemon or timer function returned a coroutine (it should have been ``async def``)."""


class _Metrics:
    def __init__(self) -> None:
        self.running = Gauge("controller_runtime_daemons_running", "Per-object daemons and timers running",
                             ["daemon"])
        self.runs = Counter("controller_runtime_daemon_runs", "Daemon and timer calls that ended, by result",
                            ["daemon", "result"])
        self.abandoned = Counter("controller_runtime_daemons_abandoned",
                                 "Daemons that did not stop within their cancellation timeout", ["daemon"])


_metrics: _Metrics | None = None
_metrics_lock = threading.Lock()


def _get_metrics() -> _Metrics:
    global _metrics
    with _metrics_lock:
        if _metrics is None:
            _metrics = _Metrics()
        return _metrics


class Context:
    """What a daemon or timer function gets (see the module docstring)."""

    def __init__(self, request: Request, obj: Any, logger: ObjectLogger) -> None:
        self.request = request
        self.stopped: threading.Event = StopContext()  # a wait.Context: awaitable without a thread
        self.logger = logger
        self._object = obj
        self._lock = threading.Lock()
        self.changed_at = time.monotonic()
        self.retries = 0  # failed calls since the last success (kopf's ``retry``)
        self.stop_reason = ""  # why it was asked to stop, once it was

    @property
    def object(self) -> Any:
        with self._lock:
            return self._object

    def _update(self, obj: Any) -> None:
        with self._lock:
            if meta.get_resource_version(obj) != meta.get_resource_version(self._object):
                self.changed_at = time.monotonic()
            self._object = obj

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; True (at once) when the daemon should stop."""
        return self.stopped.wait(seconds) if seconds > 0 else self.stopped.is_set()

    async def sleep_async(self, seconds: float) -> bool:
        """``sleep`` for async daemons: awaits ``seconds`` on the running loop; True (at once) when
        the daemon should stop. (A stopping async daemon is also cancelled at its ``await``.)"""
        if seconds > 0 and not self.stopped.is_set():
            try:
                await asyncio.wait_for(until_set(self.stopped), seconds)
            except TimeoutError:
                pass
        return self.stopped.is_set()


@dataclass
class _Spec:
    name: str
    model: type[Any]
    fn: DaemonFunc
    when: Callable[[Any], bool] | None
    initial_delay: float
    cancellation_timeout: float
    finalizer: str | None
    backoff: float | None  # a timer's None: its interval
    interval: float | None = None  # a timer
    idle: float = 0.0
    is_async: bool = False
    retries: int | None = None

    @property
    def kind(self) -> str:
        return "Timer" if self.interval is not None else "Daemon"


def _is_async(fn: Any) -> bool:
    """``async def`` functions, and objects whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    return callable(fn) and not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


@dataclass
class _Worker:
    """One object's daemon or timer: a thread (sync ``fn``) or a task on the Manager's loop."""

    ctx: Context
    thread: threading.Thread | None = None
    loop: asyncio.AbstractEventLoop | None = None  # set for a task (the task itself lives on the loop)
    task: asyncio.Task[None] | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def signal_stop(self) -> None:
        """Ask it to stop: ``stopped`` for both kinds, and a task is cancelled too (on its loop)."""
        self.ctx.stopped.set()
        if self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self._cancel)
            except RuntimeError:  # the loop closed: its tasks were cancelled with it
                self.done.set()

    def _cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()


class ObjectDaemons:
    """A Manager runnable running ``spec``'s daemon or timer per matching object."""

    def __init__(self, mgr: Any, spec: _Spec) -> None:
        self.mgr = mgr
        self.spec = spec
        self._lock = threading.Lock()
        self._workers: dict[Request, _Worker] = {}
        self._stopping: set[Request] = set()
        self._ended: set[Request] = set()
        self._stop: threading.Event | None = None
        m = _get_metrics()
        self._running = m.running.labels(spec.name)
        self._runs = {r: m.runs.labels(spec.name, r) for r in ("returned", "error", "success")}
        self._abandoned = m.abandoned.labels(spec.name)
        self._recorder: Callable[[], Any] | None = (
            (lambda: mgr.get_event_recorder_for(spec.name)) if hasattr(mgr, "get_event_recorder_for") else None)
        self._loop: EventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # strong references (the loop keeps weak ones only)
        if spec.is_async:
            if not hasattr(mgr, "get_event_loop"):
                raise TypeError(f"the async daemon {spec.name!r} needs a Manager with an event loop "
                                f"(get_event_loop), got {type(mgr).__name__}")
            self._loop = mgr.get_event_loop()

    def need_leader_election(self) -> bool:
        """Always true: daemons and timers act on objects, so they run only on the leader."""
        return True

    def start(self, stop: threading.Event) -> None:
        """Watch the type and run daemons until ``stop``; then stop them all (bounded)."""
        self._stop = stop
        informer = self.mgr.get_cache().get_informer(self.spec.model)
        reg = informer.add_event_handler(self, 0)
        log.info("Starting daemons", daemon=self.spec.name, kind=self.spec.model.__name__)
        stop.wait()
        del reg
        with self._lock:  # those already stopping are waited for by their own stopper
            workers = [(r, w) for r, w in self._workers.items() if r not in self._stopping]
            self._stopping.update(r for r, _ in workers)
        for _, worker in workers:
            self._stopping_line(worker, "the manager is stopping")
            worker.signal_stop()
        deadline = time.monotonic() + self.spec.cancellation_timeout
        for request, worker in workers:
            self._await_stop(request, worker, max(0.0, deadline - time.monotonic()))
            with self._lock:
                if self._workers.get(request) is worker:
                    del self._workers[request]
                self._stopping.discard(request)
        log.info("All daemons stopped", daemon=self.spec.name)

    # -- informer events ------------------------------------------------------------------------

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._sync(obj)

    def on_update(self, old: Any, new: Any) -> None:
        self._sync(new)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        request = Request(meta.get_namespace(obj), meta.get_name(obj))
        with self._lock:
            self._ended.discard(request)
        self._stop_async(request, release=False, reason="the object was deleted")

    def _sync(self, obj: Any) -> None:
        if self._stop is not None and self._stop.is_set():
            return
        request = Request(meta.get_namespace(obj), meta.get_name(obj))
        deleting = bool(meta.get_deletion_timestamp(obj))
        wanted = not deleting and (self.spec.when is None or bool(self.spec.when(obj)))
        with self._lock:
            worker = self._workers.get(request)
            if worker is not None:
                worker.ctx._update(obj)
            start = wanted and worker is None and request not in self._stopping and request not in self._ended
            if start:
                worker = self._new_worker(request, obj)
        if start and worker is not None:
            self._launch(worker)
        elif not wanted and worker is not None:
            self._stop_async(request, release=True, reason="the object is being deleted" if deleting
                             else "the object no longer matches `when`")
        elif not wanted and self.spec.finalizer and contains_finalizer(obj, self.spec.finalizer):
            with self._lock:
                busy = request in self._stopping
            if not busy:  # no daemon (it ended, or the operator was down): release the object now
                threading.Thread(target=self._release, args=(request,), daemon=True).start()

    def _new_worker(self, request: Request, obj: Any) -> _Worker:
        logger = ObjectLogger(self.spec.name, request, recorder=self._recorder).bind(obj)
        worker = _Worker(Context(request, obj, logger))
        if not self.spec.is_async:
            target = self._run_timer if self.spec.interval is not None else self._run_daemon
            worker.thread = threading.Thread(target=self._run, args=(worker, target),
                                             name=f"{self.spec.name}-{request}", daemon=True)
        self._workers[request] = worker
        return worker

    def _launch(self, worker: _Worker) -> None:
        if worker.thread is not None:
            worker.thread.start()
            return
        assert self._loop is not None
        try:
            worker.loop = self._loop.loop()
            worker.loop.call_soon_threadsafe(self._create_task, worker)
        except RuntimeError as err:  # the Manager's loop closed: it is stopping
            log.error(f"[{worker.ctx.request}] Daemon not started", daemon=self.spec.name, error=str(err))
            worker.done.set()

    def _create_task(self, worker: _Worker) -> None:
        """On the loop: start ``worker``'s task (a stop signalled before this ran cancels it next)."""
        target = self._run_timer_async if self.spec.interval is not None else self._run_daemon_async
        worker.task = task = asyncio.ensure_future(self._run_task(worker, target))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: worker.done.set())  # also when cancelled before it ran
        if worker.ctx.stopped.is_set():
            worker.task.cancel()

    # -- running one object's daemon --------------------------------------------------------------

    def _run(self, worker: _Worker, target: Callable[[_Worker], None]) -> None:
        self._running.inc()
        try:
            if self.spec.finalizer and not self._ensure_finalizer(worker.ctx):
                return
            self._line(worker.ctx, "info", "started")
            if not worker.ctx.sleep(self.spec.initial_delay):
                target(worker)
            self._ended_line(worker.ctx)
        finally:
            self._finish(worker)

    async def _run_task(self, worker: _Worker, target: Callable[[_Worker], Awaitable[None]]) -> None:
        """``_run`` as a task: the same steps, awaited (the finalizer's sync client on the executor)."""
        self._running.inc()
        try:
            if self.spec.finalizer and not await self._ensure_finalizer_async(worker.ctx):
                return
            self._line(worker.ctx, "info", "started")
            try:
                if not await worker.ctx.sleep_async(self.spec.initial_delay):
                    await target(worker)
            except asyncio.CancelledError:
                self._line(worker.ctx, "info", "cancelled", reason=worker.ctx.stop_reason or "cancelled")
                raise
            self._ended_line(worker.ctx)
        finally:
            self._finish(worker)

    def _finish(self, worker: _Worker) -> None:
        self._running.dec()
        worker.done.set()
        with self._lock:
            if self._workers.get(worker.ctx.request) is worker and not worker.ctx.stopped.is_set():
                # returned on its own: not started again for this object
                del self._workers[worker.ctx.request]
                self._ended.add(worker.ctx.request)

    def _run_daemon(self, worker: _Worker) -> None:
        ctx = worker.ctx
        while not ctx.stopped.is_set():
            try:
                self._not_awaitable(self.spec.fn(ctx))
            except NotAwaitedError as err:
                self._misdeclared(ctx, err)
                return
            except Exception as err:
                delay = self._failed(ctx, err)
                if delay is None or ctx.sleep(delay):
                    return
                continue
            self._returned(ctx)
            return

    async def _run_daemon_async(self, worker: _Worker) -> None:
        ctx = worker.ctx
        while not ctx.stopped.is_set():
            try:
                await self.spec.fn(ctx)
            except Exception as err:  # not CancelledError: that is the stop, it ends the task
                delay = self._failed(ctx, err)
                if delay is None or await ctx.sleep_async(delay):
                    return
                continue
            self._returned(ctx)
            return

    def _run_timer(self, worker: _Worker) -> None:
        ctx, spec = worker.ctx, self.spec
        assert spec.interval is not None
        while not ctx.stopped.is_set():
            idle_left = self._idle_left(ctx)
            if idle_left > 0:
                if ctx.sleep(idle_left):
                    return
                continue
            try:
                self._not_awaitable(spec.fn(ctx))
                wait = self._ticked(ctx)
            except NotAwaitedError as err:
                self._misdeclared(ctx, err)
                return
            except Exception as err:
                retry = self._timer_failed(ctx, err)
                if retry is None:
                    return
                wait = retry
            if ctx.sleep(wait):
                return

    async def _run_timer_async(self, worker: _Worker) -> None:
        ctx, spec = worker.ctx, self.spec
        assert spec.interval is not None
        while not ctx.stopped.is_set():
            idle_left = self._idle_left(ctx)
            if idle_left > 0:
                if await ctx.sleep_async(idle_left):
                    return
                continue
            try:
                await spec.fn(ctx)
                wait = self._ticked(ctx)
            except Exception as err:
                retry = self._timer_failed(ctx, err)
                if retry is None:
                    return
                wait = retry
            if await ctx.sleep_async(wait):
                return

    # -- what both kinds decide alike ----------------------------------------------------------------

    def _idle_left(self, ctx: Context) -> float:
        """Seconds until the object has been unchanged for ``idle`` (0: tick now)."""
        if self.spec.idle <= 0:
            return 0.0
        return max(0.0, self.spec.idle - (time.monotonic() - ctx.changed_at))

    def _line(self, ctx: Context, level: str, what: str, **kv: Any) -> None:
        """One per-object line: ``[ns/name] Daemon <what>`` (or ``Timer``), with ``daemon=``."""
        getattr(log, level)(f"[{ctx.request}] {self.spec.kind} {what}", daemon=self.spec.name, **kv)

    def _stopping_line(self, worker: _Worker, reason: str) -> None:
        if not worker.ctx.stopped.is_set():
            worker.ctx.stop_reason = reason
            self._line(worker.ctx, "info", "stopping", reason=reason)

    def _ended_line(self, ctx: Context) -> None:
        """After the function ended: on request (a stop) or on its own (already logged)."""
        if ctx.stopped.is_set():
            self._line(ctx, "info", "stopped", reason=ctx.stop_reason or "stopped")

    def _returned(self, ctx: Context) -> None:
        self._runs["returned"].inc()
        if not ctx.stopped.is_set():
            self._line(ctx, "info", "returned; not restarted for this object")

    def _ticked(self, ctx: Context) -> float:
        self._runs["success"].inc()
        ctx.retries = 0
        assert self.spec.interval is not None
        return self.spec.interval

    def _failed(self, ctx: Context, err: Exception) -> float | None:
        """Log a failed call (once) and count it; the seconds until the next attempt, or None
        when there is none: it was asked to stop, raised a ``PermanentError``/``TerminalError``,
        or ran out of ``retries``. A ``TemporaryError`` gives its own ``delay``."""
        self._runs["error"].inc()
        spec, error = self.spec, f"{type(err).__name__}: {err}"
        if ctx.stopped.is_set():
            self._line(ctx, "error", "failed while stopping; not restarted", error=error,
                       traceback="".join(traceback.format_exception(err)))
            return None
        if is_terminal(err):
            self._line(ctx, "error", "failed permanently", error=error)
            return None
        if spec.retries is not None and ctx.retries + 1 >= spec.retries:
            self._line(ctx, "error", f"failed; giving up after {ctx.retries + 1} attempts", error=error,
                       retries=spec.retries)
            return None
        backoff = spec.backoff if spec.backoff is not None else spec.interval or 0.0
        if isinstance(err, TemporaryError):
            delay = backoff if err.delay is None else err.delay
            self._line(ctx, "error", f"failed temporarily; retrying in {delay:g}s", error=error,
                       retry=ctx.retries + 1)
        else:
            delay = backoff
            self._line(ctx, "error", f"failed; retrying in {delay:g}s", error=error, retry=ctx.retries + 1,
                       traceback="".join(traceback.format_exception(err)))
        ctx.retries += 1
        return delay

    def _timer_failed(self, ctx: Context, err: Exception) -> float | None:
        """A timer's next wait after a failure: the retry delay, else (permanent, out of
        retries) the interval with the retry count reset; None once it should stop."""
        delay = self._failed(ctx, err)
        if delay is not None:
            return delay
        if ctx.stopped.is_set():
            return None
        ctx.retries = 0
        assert self.spec.interval is not None
        return self.spec.interval

    def _not_awaitable(self, result: Any) -> None:
        """A sync ``fn``'s result: a coroutine means it should have been ``async def`` (closed, so
        Python does not also warn that it was never awaited)."""
        if not inspect.isawaitable(result):
            return
        close = getattr(result, "close", None)
        if close is not None:
            close()
        fn = getattr(self.spec.fn, "__name__", repr(self.spec.fn))
        raise NotAwaitedError(
            f"{fn} returned a coroutine that was never awaited: declare it 'async def {fn}(ctx)' "
            f"(add_daemon/add_timer then run it as a task on the manager's event loop), "
            f"or await the coroutine inside an async function")

    def _misdeclared(self, ctx: Context, err: NotAwaitedError) -> None:
        self._runs["error"].inc()
        log.error(f"[{ctx.request}] {err}; this object's {'timer' if self.spec.interval else 'daemon'} ends",
                  daemon=self.spec.name)

    # -- stopping ---------------------------------------------------------------------------------

    def _stop_async(self, request: Request, *, release: bool, reason: str) -> None:
        with self._lock:
            worker = self._workers.get(request)
            if worker is None or request in self._stopping:
                return
            self._stopping.add(request)
        # The worker is taken here, under the lock: it may return on its own (and leave
        # ``_workers``) before the stopper runs, which must still release its finalizer.
        self._stopping_line(worker, reason)
        threading.Thread(target=self._stop_worker, args=(request, worker, release), daemon=True).start()

    def _stop_worker(self, request: Request, worker: _Worker, release: bool) -> None:
        """Ask the daemon to stop, wait ``cancellation_timeout``, then release its finalizer."""
        try:
            worker.signal_stop()
            self._await_stop(request, worker, self.spec.cancellation_timeout)
            if release and self.spec.finalizer:
                self._release(request)
        finally:
            with self._lock:
                if self._workers.get(request) is worker:
                    del self._workers[request]
                self._stopping.discard(request)

    def _await_stop(self, request: Request, worker: _Worker, timeout: float) -> bool:
        """Wait for a signalled worker to end; past ``timeout`` it is abandoned (False)."""
        if worker.done.wait(timeout):
            return True
        self._abandoned.inc()
        log.warning(f"[{request}] Daemon did not stop within its cancellation timeout; abandoned",
                    daemon=self.spec.name, timeout=timeout)
        return False

    # -- the finalizer ----------------------------------------------------------------------------

    def _ensure_finalizer(self, ctx: Context) -> bool:
        """Add the finalizer before the daemon runs; False when the object went away meanwhile."""
        assert self.spec.finalizer is not None
        return self._edit(ctx.request, lambda o: add_finalizer(o, self.spec.finalizer or ""), adding=True)

    async def _ensure_finalizer_async(self, ctx: Context) -> bool:
        """``_ensure_finalizer`` on the loop's executor, finished even when the task is cancelled
        meanwhile (as a thread finishes it before its stop), so a release never precedes the add."""
        added = asyncio.get_running_loop().run_in_executor(None, self._ensure_finalizer, ctx)
        cancelled = False
        while not added.done():
            try:
                await asyncio.shield(added)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError
        return added.result()

    def _release(self, request: Request) -> None:
        assert self.spec.finalizer is not None
        self._edit(request, lambda o: remove_finalizer(o, self.spec.finalizer or ""), adding=False)

    def _edit(self, request: Request, change: Callable[[Any], tuple[Any, bool]], *, adding: bool) -> bool:
        reader, writer = self.mgr.get_api_reader(), self.mgr.get_client()
        for _ in range(10):
            try:
                live = reader.get(self.spec.model, request.namespace, request.name)
            except errors.NotFoundError:
                return False
            if adding and meta.get_deletion_timestamp(live):
                return False
            changed, needed = change(live)
            if not needed:
                return True
            try:
                writer.patch(changed, MergeFrom(live, optimistic_lock=True))
                return True
            except errors.ConflictError:
                continue
            except errors.NotFoundError:
                return False
        log.error(f"[{request}] Could not update the daemon's finalizer after 10 conflicts", daemon=self.spec.name)
        return False


def _add(mgr: Any, spec: _Spec) -> ObjectDaemons:
    if spec.cancellation_timeout < 0 or spec.initial_delay < 0 or (spec.backoff or 0) < 0:
        raise ValueError("initial_delay, cancellation_timeout and backoff must not be negative")
    if spec.retries is not None and spec.retries < 1:
        raise ValueError("retries must be at least 1 (the number of attempts), or None for no limit")
    runnable = ObjectDaemons(mgr, spec)
    mgr.add(runnable)
    return runnable


def add_daemon(mgr: Any, model: type[Any], fn: DaemonFunc, *, name: str | None = None,
               when: Callable[[Any], bool] | None = None, initial_delay: float = 0.0,
               cancellation_timeout: float = 60.0, finalizer: str | None = None,
               backoff: float = 60.0, retries: int | None = None) -> ObjectDaemons:
    """Run ``fn(ctx)`` per matching object of ``model``: on a thread, or as a task on the Manager's
    event loop when ``fn`` is ``async def`` (see the module docstring)."""
    return _add(mgr, _Spec(name or str(getattr(fn, "__name__", "daemon")), model, fn, when, initial_delay,
                           cancellation_timeout, finalizer, backoff, is_async=_is_async(fn), retries=retries))


def add_timer(mgr: Any, model: type[Any], fn: DaemonFunc, *, interval: float, name: str | None = None,
              when: Callable[[Any], bool] | None = None, idle: float = 0.0, initial_delay: float = 0.0,
              cancellation_timeout: float = 60.0, finalizer: str | None = None, backoff: float | None = None,
              retries: int | None = None) -> ObjectDaemons:
    """Call ``fn(ctx)`` every ``interval`` seconds per matching object of ``model`` (awaited on the
    Manager's event loop when ``fn`` is ``async def``; see the module docstring)."""
    if interval <= 0:
        raise ValueError("a timer's interval must be positive")
    if idle < 0:
        raise ValueError("idle must not be negative")
    return _add(mgr, _Spec(name or str(getattr(fn, "__name__", "timer")), model, fn, when, initial_delay,
                           cancellation_timeout, finalizer, backoff, interval, idle, is_async=_is_async(fn),
                           retries=retries))
