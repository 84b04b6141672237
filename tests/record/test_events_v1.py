"""The events.k8s.io/v1 recorder against the embedded API server: one Event per new occurrence, a series
for repeats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.record.events_v1 import EventRecorder, EventWriter
from samplecontroller.rest import RESTClient
from tests.live import ns, rest

__all__ = ["ns", "rest"]


def test_events_v1_recorder(rest: RESTClient, ns: str) -> None:
    cs = Clientset(rest)
    cm = cs.core_v1().configmaps(ns).create(ConfigMap(metadata=ObjectMeta(name="target")))
    times = iter([datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(10)])
    recorder = EventRecorder(EventWriter.for_clientset(cs), "example.com/backup-operator", "replica-1",
                             scheme=SCHEME, clock=lambda: next(times))
    try:
        recorder.eventf(cm, None, "Normal", "Synced", "Reconcile", "synced %d keys", 3)
        recorder.eventf(cm, None, "Normal", "Synced", "Reconcile", "synced %d keys", 3)
        recorder.eventf(cm, None, "Normal", "Synced", "Reconcile", "synced %d keys", 4)
        recorder.eventf(cm, None, "Warning", "Failed", "Reconcile", "x" * 2000)
        recorder.flush()
    finally:
        recorder.shutdown()
    events = sorted(cs.events_v1().events(ns).list().items, key=lambda e: str(e.reason))
    assert [(e.reason, e.type) for e in events] == [("Failed", "Warning"), ("Synced", "Normal")]
    failed, synced = events
    assert len(str(failed.note)) == 1024
    assert synced.regarding is not msgspec.UNSET and synced.regarding.kind == "ConfigMap"
    assert synced.regarding.uid == cm.metadata.uid
    assert (synced.reporting_controller, synced.reporting_instance, synced.action) == (
        "example.com/backup-operator", "replica-1", "Reconcile")
    assert synced.event_time == "2024-01-01T00:00:00.000000Z"
    assert synced.series is not msgspec.UNSET and synced.series.count == 3
    assert synced.series.last_observed_time == "2024-01-01T00:00:02.000000Z"


def test_bad_type_is_refused() -> None:
    recorder = EventRecorder(EventWriter(lambda ns: None), "ctl")
    try:
        with pytest.raises(ValueError, match="Normal or Warning"):
            recorder.eventf({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, None, "Info", "R", "A", "n")
    finally:
        recorder.shutdown()
