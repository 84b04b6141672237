"""SIGINT/SIGTERM handling for controller processes, like sample-controller's pkg/signals.

``setup_signal_handler()`` returns a ``threading.Event`` that the first SIGINT or SIGTERM sets;
a second one exits the process at once with status 1 (``os._exit``: no cleanup, like Go's
``os.Exit``). It may be called once per process (a second call raises RuntimeError, as Go
panics), from the main thread (Python runs signal handlers there).

``run_handling_signals(fn)`` runs ``fn`` on a worker thread while the main thread only waits,
in a way every signal wakes: use it for a process's long-running body. (Python runs handlers on
the main thread, between bytecodes; a main thread blocked on a lock, as in ``Event.wait()``,
sleeps through a signal the kernel delivered to another thread, so ``stop`` would stay unset.)

``SignalHandler`` is the reusable form for tests and embedding: install it (or use it as a
context manager), read ``stop``, and ``uninstall`` to restore the previous handlers; what a
second signal does is a parameter.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType
from typing import TypeVar

__all__ = ["SHUTDOWN_SIGNALS", "SignalHandler", "run_handling_signals", "setup_signal_handler"]

T = TypeVar("T")

SHUTDOWN_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)

_Handler = Callable[[int, FrameType | None], object] | int | None


def _exit_now(signum: int) -> None:
    print(f"received {signal.Signals(signum).name} again, exiting now", file=sys.stderr, flush=True)
    os._exit(1)


class SignalHandler:
    """First signal sets ``stop``; later ones call ``on_second(signum)`` (default: exit status 1)."""

    def __init__(self, signals: Iterable[signal.Signals] = SHUTDOWN_SIGNALS,
                 on_second: Callable[[int], object] = _exit_now) -> None:
        self.signals = tuple(signals)
        self.on_second = on_second
        self.stop = threading.Event()
        self.received: list[int] = []
        self._previous: dict[signal.Signals, _Handler] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.stop.is_set():
            self.on_second(signum)
            return
        self.stop.set()

    def install(self) -> threading.Event:
        """Install the handlers (main thread only); return ``stop``."""
        if self._previous:
            raise RuntimeError("SignalHandler is already installed")
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal handlers can only be installed from the main thread")
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self.stop

    def uninstall(self) -> None:
        """Restore the handlers that were there before ``install``."""
        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def __enter__(self) -> SignalHandler:
        self.install()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.uninstall()


_only_one = threading.Lock()
_installed = False


def setup_signal_handler() -> threading.Event:
    """Install the process's shutdown handlers; return the stop event. RuntimeError when called twice."""
    global _installed
    with _only_one:
        if _installed:
            raise RuntimeError("setup_signal_handler may only be called once per process")
        stop = SignalHandler().install()
        _installed = True
        return stop


def run_handling_signals(fn: Callable[[], T]) -> T:
    """``fn()`` run on a worker thread; returns its result or raises its exception.

    Meanwhile the main thread blocks in ``select`` on the signal wakeup fd (and on a byte the
    worker writes when done), so a signal delivered to any thread wakes it and its Python
    handlers run at once. Called off the main thread (where handlers never run anyway), it is
    just ``fn()``.
    """
    if threading.current_thread() is not threading.main_thread():
        return fn()
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    done = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(fn())
        except BaseException as err:
            failure.append(err)
        finally:
            done.set()
            with contextlib.suppress(BlockingIOError):  # a full pipe wakes the main thread anyway
                os.write(write_end, b"\0")

    worker = threading.Thread(target=work, name="main-body", daemon=True)
    try:
        worker.start()
        while not done.is_set():
            select.select([read_end], [], [])  # returns on a signal or when the worker is done
            with contextlib.suppress(BlockingIOError):
                os.read(read_end, 512)
    finally:
        signal.set_wakeup_fd(previous)
        if done.is_set():  # else (an exception from a handler) the worker may still write: keep the fds
            worker.join()
            os.close(read_end)
            os.close(write_end)
    if failure:
        raise failure[0]
    return outcome[0]
