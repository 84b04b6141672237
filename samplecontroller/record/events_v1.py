"""An events.k8s.io/v1 recorder (client-go's k8s.io/client-go/tools/events, controller-runtime's new
``GetEventRecorder``), beside the core/v1 one of ``samplecontroller.record``.

``EventRecorder.eventf(regarding, related, type, reason, action, note, *args)`` records one
occurrence: the first of a kind is created as an ``events.k8s.io/v1`` Event named
``<regarding name>.<hex nanoseconds>`` in the regarding object's namespace (``default`` for a
cluster-scoped one), with ``eventTime`` (MicroTime), ``reportingController``,
``reportingInstance``, ``action``, ``reason``, ``regarding``, ``related``, ``note`` (at most 1 KiB)
and ``type`` (``Normal`` or ``Warning``; anything else is a ValueError). Isomorphic occurrences
(same regarding, related, action, reason, type and reporting controller/instance) update that
Event's ``series`` (count from 2, ``lastObservedTime``) with a merge patch, as client-go's
series do, instead of creating more Events; ``series_window`` seconds after the last occurrence
a new Event is started.

Writing happens on one background thread (``eventf`` never blocks a reconcile); ``flush()`` waits
until everything recorded so far is written, ``shutdown()`` stops it. A write that fails is logged
and dropped, as client-go drops it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec

from samplecontroller.apimachinery import errors, meta, metatime, objects
from samplecontroller.client.reference import get_reference
from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes.apis.events.v1 import Event, EventSeries
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.logs import get_logger

__all__ = ["MAX_NOTE_LENGTH", "EventRecorder", "EventWriter"]

log = get_logger("record.events_v1")

MAX_NOTE_LENGTH = 1024
TYPES = ("Normal", "Warning")
MERGE_PATCH = "application/merge-patch+json"


class EventWriter:
    """What the recorder writes through: ``events(namespace)`` of a typed clientset's events.k8s.io/v1
    group (a ``ResourceInterface[Event, EventList]`` with create and patch)."""

    def __init__(self, events_for: Callable[[str], Any]) -> None:
        self.events_for = events_for

    @classmethod
    def for_clientset(cls, clientset: Any) -> EventWriter:
        """A writer over a clientset's ``events_v1()`` client."""
        return cls(lambda namespace: clientset.events_v1().events(namespace))


@dataclass
class _Series:
    event: Event
    count: int
    last: float


class EventRecorder:
    """See the module docstring."""

    def __init__(self, writer: EventWriter, reporting_controller: str, reporting_instance: str = "",
                 scheme: Scheme | None = None, series_window: float = 6 * 60.0,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        if not reporting_controller:
            raise ValueError("reporting_controller is required (like example.com/my-operator)")
        self.writer = writer
        self.reporting_controller = reporting_controller
        self.reporting_instance = reporting_instance or reporting_controller
        self.scheme = scheme
        self.series_window = series_window
        self.clock = clock
        self._series: dict[tuple[Any, ...], _Series] = {}
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name="events-v1-recorder", daemon=True)
        self._worker.start()

    # -- recording ------------------------------------------------------------------------------

    def eventf(self, regarding: Any, related: Any, type_: str, reason: str, action: str, note: str,
               *args: Any) -> None:
        """Record one occurrence (``note % args`` when args are given); see the module docstring."""
        if type_ not in TYPES:
            raise ValueError(f"event type {type_!r}: must be Normal or Warning")
        regarding_ref = get_reference(regarding, self.scheme)
        related_ref = get_reference(related, self.scheme) if related is not None else None
        text = (note % args if args else note)[:MAX_NOTE_LENGTH]
        now = self.clock()
        key = (objects.encode(regarding_ref), objects.encode(related_ref) if related_ref else b"", action, reason,
               type_, self.reporting_controller, self.reporting_instance)
        series = self._series.get(key)
        if series is not None and now.timestamp() - series.last <= self.series_window:
            series.count += 1
            series.last = now.timestamp()
            self._queue.put(self._patch_series(series.event, series.count, now))
            return
        namespace = _opt(regarding_ref.namespace) or "default"
        name = f"{_opt(regarding_ref.name) or 'event'}.{time.time_ns():x}"
        event = Event(metadata=ObjectMeta(name=name, namespace=namespace), event_time=metatime.format_micro_time(now),
                      reporting_controller=self.reporting_controller, reporting_instance=self.reporting_instance,
                      action=action, reason=reason, regarding=regarding_ref, note=text, type=type_,
                      related=related_ref if related_ref is not None else msgspec.UNSET)
        self._series[key] = _Series(event, 1, now.timestamp())
        self._queue.put(self._create(event))

    def _create(self, event: Event) -> Callable[[], None]:
        def write() -> None:
            self.writer.events_for(meta.get_namespace(event)).create(event)
        return write

    def _patch_series(self, event: Event, count: int, now: datetime) -> Callable[[], None]:
        def write() -> None:
            series = EventSeries(count=count, last_observed_time=metatime.format_micro_time(now) or "")
            body = objects.encode({"series": msgspec.to_builtins(series)})
            self.writer.events_for(meta.get_namespace(event)).patch(meta.get_name(event), body, MERGE_PATCH)
        return write

    # -- the writer thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                try:
                    item()
                except (errors.StatusError, OSError) as err:
                    log.error("Could not write an event; dropped", error=str(err))
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every occurrence recorded so far is written (or dropped)."""
        self._queue.join()

    def shutdown(self) -> None:
        """Stop sending: flush what is queued and stop the background writer."""
        self._queue.put(None)
        self._worker.join(10)


def _opt(value: Any) -> str:
    return value if isinstance(value, str) else ""
