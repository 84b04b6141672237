"""Cancellable contexts with done-callbacks: the part of Go's ``context.Context`` the machinery uses.

A ``Context`` is a ``threading.Event`` (so every API that takes a stop event takes one) that
also runs callbacks when it is cancelled and can have children. Contract:

- ``cancel()`` (or ``set()``, its Event spelling) marks the context done once; later calls do
  nothing. ``done()`` (= ``is_set()``) is then true for ever; ``clear()`` raises RuntimeError.
  ``wait(timeout)`` blocks until done or ``timeout`` seconds pass and returns ``done()``.
- ``err()`` is None while running, then ``Canceled()`` or ``DeadlineExceeded()`` (the first cause).
- ``add_done_callback(fn)`` registers ``fn()`` to run once when the context is cancelled and
  returns a handle for ``remove_done_callback``. If the context is already done, ``fn`` runs at
  once in the caller's thread (and the handle is inert). Otherwise callbacks run in the thread
  that cancels, in registration order, after ``done()`` became true and before ``cancel`` returns;
  so they must be short and must not block. An exception from a callback is logged and the other
  callbacks still run.
- ``with_cancel(parent)`` returns a child cancelled when ``parent`` is (at once if it already is)
  or on its own ``cancel()``; a cancelled child unregisters from its parent, so short-lived
  children of a long-lived context do not accumulate. ``with_timeout(parent, seconds)`` is a
  child also cancelled (with ``DeadlineExceeded``) ``seconds`` later, by one timer thread shared
  by every timed context of the process.
- ``as_context(stop)`` adapts what callers pass as a stop signal: a ``Context`` is returned as
  is; ``None`` gives a fresh, never-cancelled Context; a plain ``threading.Event`` is bridged by
  one parked thread per distinct event (an Event has no callbacks), shared by every caller that
  adapts the same event, ending when the event is set. Pass a Context to avoid that thread.
- ``sleep(stop, seconds, clock)`` waits ``seconds`` of ``clock`` time or until ``stop`` is
  set, whichever comes first, and returns whether ``stop`` is set: with a ``FakeClock`` the wait
  ends when the test steps the clock (a done-callback wakes it on ``stop``; no polling).
- All methods are thread-safe.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import weakref
from collections.abc import Callable

from samplecontroller.logs import get_logger
from samplecontroller.wait.clock import REAL_CLOCK, Clock

__all__ = ["Canceled", "Context", "DeadlineExceeded", "as_context", "sleep", "with_cancel", "with_timeout"]

log = get_logger("context")

DoneCallback = Callable[[], object]


class Canceled(Exception):
    """The context was cancelled (Go's context.Canceled)."""

    def __init__(self) -> None:
        super().__init__("context canceled")


class DeadlineExceeded(Exception):
    """The context's deadline passed (Go's context.DeadlineExceeded)."""

    def __init__(self) -> None:
        super().__init__("context deadline exceeded")


class Context(threading.Event):
    """A cancellable stop signal with done-callbacks; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._ctx_lock = threading.Lock()
        self._callbacks: dict[int, DoneCallback] = {}
        self._handles = itertools.count(1)
        self._err: BaseException | None = None

    def done(self) -> bool:
        """True once cancelled."""
        return self.is_set()

    def err(self) -> BaseException | None:
        """None while running; then why it ended (``Canceled`` or ``DeadlineExceeded``)."""
        with self._ctx_lock:
            return self._err

    def cancel(self, cause: BaseException | None = None) -> None:
        """Mark done (``cause`` defaults to ``Canceled()``) and run the callbacks; idempotent."""
        with self._ctx_lock:
            if self._err is not None:
                return
            self._err = cause or Canceled()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        super().set()
        for fn in callbacks:
            _run(fn)

    def set(self) -> None:
        """``cancel()`` under threading.Event's name."""
        self.cancel()

    def clear(self) -> None:
        """Refused (RuntimeError): a cancelled Context stays cancelled."""
        raise RuntimeError("a Context cannot be un-cancelled")

    def add_done_callback(self, fn: DoneCallback) -> int:
        """Run ``fn()`` once when cancelled (now, in this thread, if already done); returns a handle."""
        with self._ctx_lock:
            if self._err is None:
                handle = next(self._handles)
                self._callbacks[handle] = fn
                return handle
        _run(fn)
        return 0

    def remove_done_callback(self, handle: int) -> None:
        """Forget a callback that has not run yet (unknown or already run handles: no-op)."""
        with self._ctx_lock:
            self._callbacks.pop(handle, None)

    def __repr__(self) -> str:
        return f"<Context done={self.done()} err={self.err()!r}>"


def _run(fn: DoneCallback) -> None:
    try:
        fn()
    except Exception as err:
        log.error("Context done-callback failed", callback=repr(fn), error=f"{type(err).__name__}: {err}")


def with_cancel(parent: threading.Event | None = None) -> Context:
    """A child of ``parent`` (adapted with ``as_context``): done when the parent is, or on ``cancel()``."""
    child = Context()
    if parent is None:
        return child
    ctx = as_context(parent)
    handle = ctx.add_done_callback(lambda: child.cancel(ctx.err()))
    if handle:
        child.add_done_callback(lambda: ctx.remove_done_callback(handle))
    return child


def with_timeout(parent: threading.Event | None, seconds: float) -> Context:
    """A child of ``parent`` that is also cancelled with ``DeadlineExceeded`` after ``seconds``."""
    child = with_cancel(parent)
    if seconds <= 0:
        child.cancel(DeadlineExceeded())
    elif not child.done():
        _TIMERS.schedule(time.monotonic() + seconds, child)
    return child


class _Timers:
    """One daemon thread cancelling timed contexts at their deadlines (started on first use)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, weakref.ref[Context]]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, deadline: float, ctx: Context) -> None:
        with self._cond:
            heapq.heappush(self._heap, (deadline, next(self._seq), weakref.ref(ctx)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="context-timers", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _due(self) -> list[Context]:
        """Block until at least one entry is due; pop and return the due, still-alive contexts."""
        with self._cond:
            while True:
                now = time.monotonic()
                if self._heap and self._heap[0][0] <= now:
                    break
                self._cond.wait(self._heap[0][0] - now if self._heap else None)
            due: list[Context] = []
            while self._heap and self._heap[0][0] <= now:
                ctx = heapq.heappop(self._heap)[2]()
                if ctx is not None and not ctx.done():
                    due.append(ctx)
            return due

    def _run(self) -> None:
        while True:
            for ctx in self._due():
                ctx.cancel(DeadlineExceeded())


_TIMERS = _Timers()

_bridges: weakref.WeakKeyDictionary[threading.Event, Context] = weakref.WeakKeyDictionary()
_bridges_lock = threading.Lock()


def as_context(stop: threading.Event | None) -> Context:
    """``stop`` as a Context (see the module docstring: a plain Event costs one shared thread)."""
    if isinstance(stop, Context):
        return stop
    if stop is None:
        return Context()
    with _bridges_lock:
        ctx = _bridges.get(stop)
        if ctx is not None:
            return ctx
        ctx = Context()
        _bridges[stop] = ctx
    if stop.is_set():
        ctx.cancel()
    else:
        threading.Thread(target=_bridge, args=(stop, ctx), name="context-from-event", daemon=True).start()
    return ctx


def _bridge(stop: threading.Event, ctx: Context) -> None:
    stop.wait()
    ctx.cancel()


def sleep(stop: threading.Event, seconds: float, clock: Clock = REAL_CLOCK) -> bool:
    """Wait ``seconds`` on ``clock`` or until ``stop`` is set; True if ``stop`` is set."""
    if clock is REAL_CLOCK:
        return stop.wait(max(0.0, seconds))
    ctx = as_context(stop)
    cond = threading.Condition(threading.Lock())

    def wake() -> None:
        with cond:
            cond.notify_all()

    deadline = clock.now() + seconds
    handle = ctx.add_done_callback(wake)
    try:
        with cond:
            while not ctx.done() and clock.now() < deadline:
                clock.wait(cond, deadline)
    finally:
        ctx.remove_done_callback(handle)
    return ctx.done()
