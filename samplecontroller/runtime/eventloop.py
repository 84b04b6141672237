"""One asyncio event loop on its own thread, shared by a Manager's async parts.

The Manager owns one ``EventLoop``: every async controller runs its reconciles as tasks on it
and the Manager's async client sends its requests from it, so the async transport's connections, a cache read
and a reconcile all live on the same loop. The loop thread starts on first use (a Manager with
only sync controllers never starts it).

- ``run(coro)`` runs a coroutine on the loop and blocks the calling thread until it finishes,
  returning its result or raising its exception (never call it from the loop thread itself:
  RuntimeError).
- ``submit(coro)`` schedules it and returns a ``concurrent.futures.Future``.
- ``close(timeout)`` cancels the tasks still on the loop, closes async generators, stops the
  loop and joins its thread (bounded by ``timeout``); afterwards ``run``/``submit`` raise
  RuntimeError. ``close`` is idempotent.
- ``until_set(event)`` (a coroutine, on the loop) waits for a ``threading.Event`` or
  ``wait.Context`` without blocking the loop: a Context wakes it through a done-callback,
  a plain Event through the Context bridge of ``wait.as_context``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from samplecontroller.logs import get_logger
from samplecontroller.wait import as_context

log = get_logger("runtime.eventloop")

T = TypeVar("T")

__all__ = ["EventLoop", "until_set"]


class EventLoop:
    """See the module docstring."""

    def __init__(self, name: str = "manager-event-loop") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (its thread is started on the first call)."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"event loop {self.name} is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                self._thread = threading.Thread(target=self._serve, args=(loop, ready), name=self.name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def started(self) -> bool:
        """True once the loop thread has been started (by the first ``loop``, ``submit`` or ``run``);
        it stays True after ``close``."""
        return self._loop is not None

    def in_loop_thread(self) -> bool:
        """True when called on the loop's own thread (where ``run`` would deadlock: await instead)."""
        return self._thread is not None and threading.current_thread() is self._thread

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; its result through the returned future."""
        try:
            loop = self.loop()
        except RuntimeError:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it (from any thread but the loop's own)."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("EventLoop.run called on the loop's own thread: await the coroutine instead")
        return self.submit(coro).result()

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the loop, stop it and join its thread (at most ``timeout`` s)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def cancel_all() -> None:
            me = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not me]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        if not loop.is_closed():
            try:
                asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout)
            except (concurrent.futures.TimeoutError, RuntimeError):
                log.error("Tasks still running on the event loop at close", loop=self.name, timeout=timeout)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


async def until_set(event: threading.Event) -> None:
    """Wait on the running loop until ``event`` is set (a Context, or any threading.Event)."""
    ctx = as_context(event)
    if ctx.is_set():
        return
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(woken.set)

    handle = ctx.add_done_callback(wake)
    try:
        await woken.wait()
    finally:
        ctx.remove_done_callback(handle)
