"""Kubernetes Events from controllers (client-go's tools/record).

Typical use::

    broadcaster = new_broadcaster()  # bounded queue of 1000, drops when full
    broadcaster.start_structured_logging()
    broadcaster.start_recording_to_sink(ResourceEventSink(rest_client))
    recorder = broadcaster.new_recorder("sample-controller")
    recorder.eventf(foo, EVENT_TYPE_NORMAL, "Synced", "Foo %s synced", name)
    ...
    broadcaster.shutdown()

Recording never blocks or raises; delivery is best effort (Go's semantics: the correlator may
aggregate, count or drop events, and a queue that is full drops them). Tests use ``FakeRecorder``.
"""

from samplecontroller.record.correlator import CorrelationResult, EventCorrelator
from samplecontroller.record.event import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    EventBroadcaster,
    EventRecorder,
    EventSink,
    new_broadcaster,
    record_event,
)
from samplecontroller.record.fake import FakeRecorder
from samplecontroller.record.sink import EVENTS, ResourceEventSink

__all__ = [
    "EVENTS",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "CorrelationResult",
    "EventBroadcaster",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "FakeRecorder",
    "ResourceEventSink",
    "new_broadcaster",
    "record_event",
]
