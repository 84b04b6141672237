"""SIGINT/SIGTERM handling for controller processes, like sample-controller's pkg/signals.

``setup_signal_handler()`` returns a ``threading.Event`` set by the first SIGINT or SIGTERM; a
second signal exits the process at once with status 1. It may be called once per process, from
the main thread (Python only delivers signals there).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

__all__ = ["setup_signal_handler"]

_installed = False


def setup_signal_handler() -> threading.Event:
    """Install the handlers; return the stop event. Raises RuntimeError when called twice."""
    global _installed
    if _installed:
        raise RuntimeError("setup_signal_handler called twice")
    _installed = True
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            print(f"received {signal.Signals(signum).name} again, exiting now", file=sys.stderr, flush=True)
            os._exit(1)
        stop.set()

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)
    return stop
