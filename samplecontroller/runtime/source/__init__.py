"""Sources of events for a controller (pkg/source).

A source has ``start(queue, stop=None)``: from then on its events pass the predicates and the
event handler turns them into items on ``queue``. ``wait_for_sync(timeout)`` is True once the
source has delivered its initial state (sources without one are synced at start).

- ``Kind(cache, type, handler, *predicates)``: a type's informer in the manager's cache.
- ``Informer(informer, handler, *predicates)``: any informer (``SharedIndexInformer``).
- ``Channel(channel, handler, *predicates)``: ``GenericEvent``s put on a ``queue.Queue``.
- ``Func(fn)``: ``fn(queue, stop)`` does whatever it likes.
"""

from __future__ import annotations

import queue as stdqueue
import threading
from collections.abc import Callable
from typing import Any, Protocol

from samplecontroller.cache import DeletedFinalStateUnknown, ResourceEventHandler, wait_for_cache_sync
from samplecontroller.logs import get_logger
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from samplecontroller.runtime.handler import EventHandler, Queue
from samplecontroller.runtime.predicate import Predicate

log = get_logger("runtime.source")


class Source(Protocol):
    """Where a controller's events come from (controller-runtime's ``source.Source``)."""

    def start(self, queue: Queue, stop: threading.Event | None = None) -> None:
        """Begin delivering events, as requests on ``queue``, until ``stop``. Called once."""
    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """True once the source has delivered its initial state (False on timeout)."""


class _InformerLike(Protocol):
    def add_event_handler(self, handler: ResourceEventHandler[Any], resync_period: float | None = None, *,
                          inline: bool = False) -> Any: ...
    def has_synced(self) -> bool: ...


class EventHandlerAdapter:
    """A cache ``ResourceEventHandler`` that filters with predicates and calls an ``EventHandler``."""

    def __init__(self, handler: EventHandler, queue: Queue, predicates: tuple[Predicate, ...]) -> None:
        self.handler = handler
        self.queue = queue
        self.predicates = predicates

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        """A ``CreateEvent`` to the handler if every predicate passes it."""
        e = CreateEvent(obj, is_in_initial_list)
        if all(p.create(e) for p in self.predicates):
            self.handler.create(e, self.queue)

    def on_update(self, old: Any, new: Any) -> None:
        """An ``UpdateEvent`` to the handler if every predicate passes it."""
        e = UpdateEvent(old, new)
        if all(p.update(e) for p in self.predicates):
            self.handler.update(e, self.queue)

    def on_delete(self, obj: Any) -> None:
        """A ``DeleteEvent`` (``delete_state_unknown`` for a tombstone) to the handler if every predicate passes it."""
        unknown = isinstance(obj, DeletedFinalStateUnknown)
        if unknown:
            obj = obj.obj
        e = DeleteEvent(obj, unknown)
        if all(p.delete(e) for p in self.predicates):
            self.handler.delete(e, self.queue)


class Informer:
    """Events of an informer. ``start`` registers the handler; synced once the handler has the
    informer's initial list. ``inline=True``: the predicates and the handler run on the
    informer's thread (see ``SharedIndexInformer.add_event_handler``); they must never block."""

    def __init__(self, informer: _InformerLike, handler: EventHandler, *predicates: Predicate,
                 inline: bool = False) -> None:
        self.informer = informer
        self.handler = handler
        self.predicates = predicates
        self.inline = inline
        self._registration: Any = None
        self._started = threading.Event()

    def start(self, queue: Queue, stop: threading.Event | None = None) -> None:
        """Register the handler with the informer; RuntimeError when started twice."""
        if self._started.is_set():
            raise RuntimeError("a source can be started only once")
        adapter = EventHandlerAdapter(self.handler, queue, self.predicates)
        if self.inline:
            self._registration = self.informer.add_event_handler(adapter, inline=True)
        else:  # informers of other makes may not know the keyword
            self._registration = self.informer.add_event_handler(adapter)
        self._started.set()

    def has_synced(self) -> bool:
        """True once the handler has been given the informer's initial list."""
        return self._registration is not None and bool(self._registration.has_synced())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` seconds) until ``has_synced``; False on timeout."""
        if not self._started.wait(timeout):
            return False
        return wait_for_cache_sync(self.has_synced, timeout=timeout, poll_interval=0.02)


class Kind(Informer):
    """Events of one type from the manager's cache: ``Kind(cache, Foo, handler, *predicates)``."""

    def __init__(self, cache: Any, model: type[Any], handler: EventHandler, *predicates: Predicate,
                 inline: bool = False) -> None:
        self.cache = cache
        self.model = model
        super().__init__(cache.get_informer(model), handler, *predicates, inline=inline)

    def __repr__(self) -> str:
        return f"Kind({self.model.__name__})"


class Channel:
    """``GenericEvent``s read from a ``queue.Queue`` on a daemon thread until ``stop``."""

    def __init__(self, channel: stdqueue.Queue[GenericEvent], handler: EventHandler, *predicates: Predicate) -> None:
        self.channel = channel
        self.handler = handler
        self.predicates = predicates
        self._thread: threading.Thread | None = None

    def start(self, queue: Queue, stop: threading.Event | None = None) -> None:
        """Start the thread that reads the channel; RuntimeError when started twice."""
        if self._thread is not None:
            raise RuntimeError("a source can be started only once")
        stop_event = stop or threading.Event()
        self._thread = threading.Thread(target=self._run, args=(queue, stop_event), name="source-channel",
                                        daemon=True)
        self._thread.start()

    def _run(self, queue: Queue, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                e = self.channel.get(timeout=0.1)
            except stdqueue.Empty:
                continue
            try:
                if all(p.generic(e) for p in self.predicates):
                    self.handler.generic(e, queue)
            except Exception as err:
                log.error("Channel source handler failed", error=f"{type(err).__name__}: {err}")

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Always True: a channel has no initial state."""
        return True


class Func:
    """A source from a function ``fn(queue, stop)`` called once at start (on the caller's thread)."""

    def __init__(self, fn: Callable[[Queue, threading.Event], None]) -> None:
        self.fn = fn

    def start(self, queue: Queue, stop: threading.Event | None = None) -> None:
        """Call the function with ``queue`` and the stop event."""
        self.fn(queue, stop or threading.Event())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Always True."""
        return True


__all__ = ["Channel", "EventHandlerAdapter", "Func", "Informer", "Kind", "Source"]
