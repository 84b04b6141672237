"""Kubernetes Events from controllers (client-go's tools/record)."""

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
