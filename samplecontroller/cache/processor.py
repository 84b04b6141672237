"""Per-handler delivery, like client-go's processorListener and sharedProcessor.

Each registered handler gets a ``Listener``: an unbounded buffer and its own thread, so a slow
handler never stalls the informer or the other handlers. Notifications are delivered one at a
time in the order they were added. An exception from a handler is logged and delivery goes on.

An inline listener (``inline=True``) has no buffer and no thread: ``add`` calls the handler on the
caller's thread, the informer's (Python threads cost a context switch per hand-off, which for a
handler that only puts a key on a work queue costs more than the handler). Its handler must be
quick and must never block: it holds up the informer and every other handler while it runs.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from samplecontroller.cache.handlers import ResourceEventHandler
from samplecontroller.logs import get_logger

log = get_logger("informer")

# Notification kinds (tuples: (kind, ...args)).
ADD = "add"
UPDATE = "update"
DELETE = "delete"
SYNCED = "synced"

Notification = tuple[Any, ...]


class Listener:
    """One handler: a buffer, a delivery thread, and its resync schedule.

    ``resync_period`` 0 means no resync. ``synced`` is set once the SYNCED marker (queued by the
    informer after the initial list's notifications) has been reached.
    """

    def __init__(self, handler: ResourceEventHandler[Any], resync_period: float, name: str = "", *,
                 inline: bool = False) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = time.monotonic() + resync_period if resync_period else float("inf")
        self.synced = threading.Event()
        self.inline = inline
        self._cond = threading.Condition(threading.Lock())
        self._buffer: deque[Notification] = deque()
        self._stopped = False
        self._thread: threading.Thread | None = None
        if not inline:
            self._thread = threading.Thread(target=self._run, name=f"informer-listener-{name}", daemon=True)
            self._thread.start()

    def add(self, notification: Notification) -> None:
        """Buffer ``notification`` for delivery on the listener's thread (never blocks); an inline
        listener delivers it now, on the caller's thread (nothing once stopped)."""
        if self.inline:
            if not self._stopped:
                self._deliver_logged(notification)
            return
        with self._cond:
            self._buffer.append(notification)
            if len(self._buffer) == 1:
                self._cond.notify()

    def pending(self) -> int:
        """How many notifications wait in the buffer."""
        with self._cond:
            return len(self._buffer)

    def should_resync(self, now: float) -> bool:
        """Due for a resync at ``now``; if so, schedules the next one (Go's shouldResync)."""
        if not self.resync_period or now < self.next_resync:
            return False
        self.next_resync = now + self.resync_period
        return True

    def stop(self) -> None:
        """Stop after the notification being delivered now; the rest of the buffer is dropped."""
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the listener's thread to end (after ``stop``), at most ``timeout`` seconds."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _next(self) -> Notification | None:
        with self._cond:
            while not self._buffer and not self._stopped:
                self._cond.wait()
            if self._stopped:
                return None
            return self._buffer.popleft()

    def _run(self) -> None:
        while True:
            n = self._next()
            if n is None:
                return
            self._deliver_logged(n)

    def _deliver_logged(self, n: Notification) -> None:
        try:
            self._deliver(n)
        except Exception as err:
            log.error("Event handler failed", error=f"{type(err).__name__}: {err}")

    def _deliver(self, n: Notification) -> None:
        kind = n[0]
        if kind == ADD:
            self.handler.on_add(n[1], n[2])
        elif kind == UPDATE:
            self.handler.on_update(n[1], n[2])
        elif kind == DELETE:
            self.handler.on_delete(n[1])
        elif kind == SYNCED:
            self.synced.set()
