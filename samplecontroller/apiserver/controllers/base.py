"""What the controllers share: the scheduler they run callbacks with and their common state."""

from __future__ import annotations

from collections.abc import Callable

from samplecontroller.apiserver.core import Core

__all__ = ["Controller", "Reconcile", "Schedule"]

Schedule = Callable[..., None]
"""``schedule(fn, *args, delay=0.0)``: run ``fn(*args)`` on the server loop later."""
Reconcile = Callable[[str, str, str], None]
"""``reconcile(storage_key, namespace, name)``: finish what an object's state asks for."""


class Controller:
    """A controller over ``core`` and its store, scheduling work with ``schedule``."""

    def __init__(self, core: Core, schedule: Schedule) -> None:
        self.core = core
        self.store = core.store
        self.schedule = schedule
