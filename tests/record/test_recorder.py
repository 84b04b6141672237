"""The recorder end to end: broadcaster -> correlator -> an in-test sink."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.record import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    EventBroadcaster,
    EventCorrelator,
    EventRecorder,
    new_broadcaster,
)
from tests.record.conftest import FakeClock, MemorySink, foo, sentinel_written

Cleanup = Callable[[Callable[[], None]], None]


def make(sink: MemorySink, cleanup: Cleanup, clock: FakeClock | None = None, **kw: Any) -> tuple[
        EventBroadcaster, EventRecorder]:
    b = new_broadcaster(clock=clock or time.time, **kw)
    cleanup(b.shutdown)
    b.start_recording_to_sink(sink)
    return b, b.new_recorder("sample-controller", host="node-1")


def test_event_written_with_go_shape(sink: MemorySink, clock: FakeClock, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup, clock)
    rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
    (call,) = sink.wait_calls(1)
    assert call[0] == "create"
    (ev,) = sink.events.values()
    assert re.fullmatch(r"example-foo\.[0-9a-f]+", ev["metadata"]["name"])
    assert int(ev["metadata"]["name"].split(".")[1], 16) == int(clock() * 1e9)
    assert ev["metadata"]["namespace"] == "default"
    assert ev["involvedObject"] == {"kind": "Foo", "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                                    "name": "example-foo", "namespace": "default", "uid": "uid-1",
                                    "resourceVersion": "7"}
    assert ev["source"] == {"component": "sample-controller", "host": "node-1"}
    assert ev["reportingComponent"] == "sample-controller"
    assert ev["reportingInstance"] == "node-1"
    assert (ev["type"], ev["reason"], ev["message"], ev["count"]) == ("Normal", "Synced", "Foo synced successfully", 1)
    assert ev["firstTimestamp"] == ev["lastTimestamp"] == "2023-11-14T22:13:20Z"


class Meta(msgspec.Struct, kw_only=True):
    name: str
    namespace: str | msgspec.UnsetType = msgspec.UNSET
    uid: str | msgspec.UnsetType = msgspec.UNSET


class Thing(msgspec.Struct, kw_only=True, frozen=True):
    api_version: str = "example.com/v1"
    kind: str = "Thing"
    metadata: Meta


def test_typed_objects_and_cluster_scoped_go_to_default_namespace(sink: MemorySink, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup)
    rec.eventf(Thing(metadata=Meta(name="t1", uid="u")), EVENT_TYPE_WARNING, "Bad", "value %d of %s", 3, "x")
    sink.wait_calls(1)
    (ev,) = sink.events.values()
    assert ev["metadata"]["namespace"] == "default"
    assert ev["involvedObject"] == {"kind": "Thing", "apiVersion": "example.com/v1", "name": "t1", "uid": "u"}
    assert ev["message"] == "value 3 of x" and ev["type"] == "Warning"


def test_annotated_eventf_sets_annotations(sink: MemorySink, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup)
    rec.annotated_eventf(foo(), {"a": "b"}, EVENT_TYPE_NORMAL, "R", "%s!", "hi")
    sink.wait_calls(1)
    (ev,) = sink.events.values()
    assert ev["metadata"]["annotations"] == {"a": "b"} and ev["message"] == "hi!"


def test_bad_type_kindless_object_and_bad_format_never_raise(sink: MemorySink, cleanup: Cleanup) -> None:
    b, rec = make(sink, cleanup)
    rec.event(foo(), "Critical", "R", "m")  # only Normal and Warning are valid
    rec.event({"metadata": {"name": "x"}}, EVENT_TYPE_NORMAL, "R", "m")  # no kind: no reference
    rec.eventf(foo(), EVENT_TYPE_NORMAL, "Fmt", "%d", "not-a-number")
    calls = sentinel_written(sink, rec)
    assert [c[0] for c in calls] == ["create"] and calls[0][1].startswith("example-foo.")
    (ev,) = (e for e in sink.events.values() if e["reason"] != "Sentinel")
    assert ev["reason"] == "Fmt" and ev["message"].startswith("%d %!(")
    assert b.dropped == 0


def test_identical_events_patch_the_count(sink: MemorySink, clock: FakeClock, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup, clock)
    for _ in range(3):
        rec.event(foo(), EVENT_TYPE_WARNING, "Failed", "boom")
        clock.step(1)
    calls = sink.wait_calls(3)
    assert [c[0] for c in calls] == ["create", "patch", "patch"]
    assert calls[1][1] == calls[2][1] == calls[0][1]
    assert msgspec.json.decode(calls[2][2] or b"") == {"count": 3, "lastTimestamp": "2023-11-14T22:13:22Z",
                                                     "message": "boom"}
    (ev,) = sink.events.values()
    assert ev["count"] == 3 and ev["firstTimestamp"] == "2023-11-14T22:13:20Z"


def test_aggregation_after_ten_similar_events(sink: MemorySink, clock: FakeClock, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup, clock)
    for i in range(12):
        rec.event(foo(), EVENT_TYPE_WARNING, "Failed", f"error {i}")
        clock.step(0.001)
    calls = sink.wait_calls(12)
    assert [c[0] for c in calls] == ["create"] * 10 + ["patch"] * 2
    messages = [e["message"] for e in sink.events.values()]
    assert messages[:9] == [f"error {i}" for i in range(9)]
    # The 10th distinct message turns into one aggregate event; later ones patch it.
    aggregate = sink.events[("default", calls[9][1])]
    assert aggregate["message"] == "(combined from similar events): error 11"
    assert aggregate["count"] == 3
    assert len(sink.events) == 10


def test_aggregation_window_restarts_after_ten_minutes(clock: FakeClock) -> None:
    c = EventCorrelator(clock)
    base = {"metadata": {"name": "x.1", "namespace": "default"}, "involvedObject": {"kind": "Foo", "name": "x"},
            "source": {"component": "c"}, "type": "Normal", "reason": "R", "count": 1}
    for i in range(9):
        assert not c.correlate({**base, "message": f"m{i}"}).event["message"].startswith("(combined")
        clock.step(100)  # 9 * 100 s, but never more than 600 s between two
    assert c.correlate({**base, "message": "m9"}).event["message"].startswith("(combined")
    clock.step(601)
    assert c.correlate({**base, "message": "m10"}).event["message"] == "m10"


def test_spam_filter_token_bucket(clock: FakeClock) -> None:
    c = EventCorrelator(clock)

    def ev(reason: str, name: str = "x") -> dict[str, Any]:
        return {"metadata": {"name": f"{name}.{reason}", "namespace": "default"}, "type": "Normal",
                "involvedObject": {"kind": "Foo", "name": name}, "source": {"component": "c"},
                "reason": reason, "message": "m", "count": 1}

    assert not any(c.correlate(ev(f"r{i}")).skip for i in range(25))
    assert c.correlate(ev("r25")).skip  # the burst of 25 is spent
    assert not c.correlate(ev("r0", name="other")).skip  # per object
    clock.step(299)
    assert c.correlate(ev("r26")).skip
    clock.step(1)  # one token per 5 minutes
    assert not c.correlate(ev("r27")).skip
    assert c.correlate(ev("r28")).skip


def test_spam_filter_end_to_end(sink: MemorySink, clock: FakeClock, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup, clock)
    for i in range(30):
        rec.event(foo(), EVENT_TYPE_NORMAL, f"Reason{i}", "m")
    rec.event(foo(name="other", uid="u2"), EVENT_TYPE_NORMAL, "Reason", "m")
    calls = sentinel_written(sink, rec)
    assert len(calls) == 26
    assert calls[-1][1].startswith("other.")


def test_patch_of_a_deleted_event_creates_it_again(sink: MemorySink, clock: FakeClock, cleanup: Cleanup) -> None:
    _, rec = make(sink, cleanup, clock)
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    sink.wait_calls(1)
    with sink.lock:
        sink.events.clear()  # the event expired on the server
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    calls = sink.wait_calls(3)
    assert [c[0] for c in calls] == ["create", "patch", "create"]
    (ev,) = sink.events.values()
    assert ev["count"] == 2 and ev["metadata"]["name"] == calls[0][1]


def test_transport_errors_are_retried_with_go_sleeps(sink: MemorySink, cleanup: Cleanup) -> None:
    sleeps: list[float] = []
    sink.fail_next = [ConnectionError("down"), ConnectionError("down"), ConnectionError("down")]
    _, rec = make(sink, cleanup, sleep=sleeps.append, sleep_duration=10.0)
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    sink.wait_calls(4)
    assert len(sink.events) == 1
    assert len(sleeps) == 3 and 0 <= sleeps[0] <= 10.0 and sleeps[1:] == [10.0, 10.0]


def test_retries_give_up_after_twelve_tries(sink: MemorySink, cleanup: Cleanup) -> None:
    sink.fail_next = [ConnectionError("down")] * 12  # the next event (the sentinel) goes through
    sleeps: list[float] = []
    _, rec = make(sink, cleanup, sleep=sleeps.append)
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    calls = sentinel_written(sink, rec)
    assert len(calls) == 12 and len(sleeps) == 11
    assert [e["reason"] for e in sink.events.values()] == ["Sentinel"]


def test_api_rejections_are_not_retried(sink: MemorySink, cleanup: Cleanup) -> None:
    sleeps: list[float] = []
    sink.fail_next = [errors.from_status(errors.new_status(422, "Invalid", "bad event"))]
    _, rec = make(sink, cleanup, sleep=sleeps.append)
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "first")
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "second")
    calls = sentinel_written(sink, rec)
    assert len(calls) == 2 and sleeps == [] and calls[1][0] == "create"
    assert [e["message"] for e in sink.events.values()] == ["second", "end of test"]


def test_shutdown_interrupts_the_retry_sleep(sink: MemorySink) -> None:
    sink.fail_next = [ConnectionError("down")] * 20
    before = set(threading.enumerate())
    b = new_broadcaster(sleep_duration=3600.0)  # retries would sleep (a random part of) an hour
    b.start_recording_to_sink(sink)
    rec = b.new_recorder("c", host="h")
    threads = [t for t in threading.enumerate() if t not in before]
    assert sorted(t.name for t in threads) == ["event-watcher"]  # recorders hand events to watchers directly
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    sink.wait_calls(1)
    b.shutdown()
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "after")  # ignored, no error
    for t in threads:  # the sleeping writer wakes up and ends with the broadcaster
        t.join(30)
        assert not t.is_alive(), t.name
    assert len(sink.calls) == 1


def test_full_queue_drops_and_never_blocks(sink: MemorySink, cleanup: Cleanup) -> None:
    sink.block = threading.Event()
    cleanup(sink.block.set)
    b, rec = make(sink, cleanup, queue_size=5)

    def record_500() -> None:
        for i in range(500):
            rec.event(foo(name=f"f{i}", uid=f"u{i}"), EVENT_TYPE_NORMAL, "R", "m")

    recording = threading.Thread(target=record_500, daemon=True)
    recording.start()
    recording.join(30)  # the sink stays blocked: a recorder that waited for room would still be here
    assert not recording.is_alive() and not sink.block.is_set()
    assert b.dropped >= 500 - 5 - 5 - 2  # incoming queue + watcher buffer + the one being written
    sink.block.set()
    calls = sink.wait_calls(1)
    time.sleep(0.1)
    assert len(sink.calls) <= 12 and calls[0][1].startswith("f0.")


def test_watchers_and_structured_logging(sink: MemorySink, cleanup: Cleanup, caplog: pytest.LogCaptureFixture) -> None:
    b, rec = make(sink, cleanup)
    seen: list[dict[str, Any]] = []
    got = threading.Event()

    def watch(ev: dict[str, Any]) -> None:
        seen.append(ev)
        got.set()

    stop = b.start_event_watcher(watch)
    logged = threading.Event()
    kvs: list[dict[str, Any]] = []

    class Flag(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == "Event occurred":
                kvs.append(record.__dict__["kv"])
                logged.set()

    handler = Flag()
    logging.getLogger("record").addHandler(handler)
    cleanup(lambda: logging.getLogger("record").removeHandler(handler))
    caplog.set_level(logging.INFO, logger="record")
    b.start_structured_logging()
    rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "ok")
    assert got.wait(5) and logged.wait(5)
    assert seen[0]["reason"] == "Synced"
    kv = kvs[0]
    assert kv["object"] == "default/example-foo" and kv["kind"] == "Foo" and kv["message"] == "ok"
    stop()
    rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "again")
    sink.wait_calls(2)
    time.sleep(0.05)
    assert len(seen) == 1


def test_structured_logging_logs_on_the_recording_thread_as_the_event_is_recorded() -> None:
    threads: list[str] = []

    class Where(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == "Event occurred":
                threads.append(threading.current_thread().name)

    handler = Where()
    logger = logging.getLogger("record")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    b = new_broadcaster()
    try:
        stop = b.start_structured_logging()
        rec = b.new_recorder("test")
        rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "ok")
        assert threads == [threading.current_thread().name]  # already logged, no thread hand-off
        stop()
        rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "again")
        assert len(threads) == 1  # stopped: not logged
    finally:
        b.shutdown()
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_user_mistakes_give_clear_errors() -> None:
    with pytest.raises(ValueError, match="queue_size"):
        new_broadcaster(0)
    b = new_broadcaster()
    try:
        with pytest.raises(ValueError, match="source_component"):
            b.new_recorder("")
        with pytest.raises(ValueError, match="log level"):
            b.start_structured_logging("loud")
    finally:
        b.shutdown()


def _collector(expected: int) -> tuple[list[str], threading.Event, Callable[[dict[str, Any]], None]]:
    seen: list[str] = []
    done = threading.Event()

    def watch(event: dict[str, Any]) -> None:
        seen.append(event["message"])
        if len(seen) == expected:
            done.set()

    return seen, done, watch


@pytest.mark.parametrize("linger", [0.0, 0.05])
def test_batched_hand_over_keeps_every_event_in_order_for_every_watcher(cleanup: Cleanup, linger: float) -> None:
    b = new_broadcaster(batch_linger=linger)
    cleanup(b.shutdown)
    watchers = [_collector(600) for _ in range(2)]
    for _, _, fn in watchers:
        cleanup(b.start_event_watcher(fn))
    rec = b.new_recorder("c", host="h")
    for i in range(600):  # a burst (batches) then a trickle (one event per wakeup)
        rec.event(foo(), EVENT_TYPE_NORMAL, "R", f"m{i}")
        if i >= 590:
            time.sleep(0.01)
    for seen, done, _ in watchers:
        assert done.wait(30)
        assert seen == [f"m{i}" for i in range(600)]
    assert b.dropped == 0


def test_a_stopped_watcher_still_delivers_what_was_buffered(cleanup: Cleanup) -> None:
    b = new_broadcaster()
    cleanup(b.shutdown)
    gate = threading.Event()
    seen: list[str] = []

    def slow(event: dict[str, Any]) -> None:
        gate.wait(30)
        seen.append(event["message"])

    before = set(threading.enumerate())
    stop = b.start_event_watcher(slow)
    (thread,) = [t for t in threading.enumerate() if t not in before]
    rec = b.new_recorder("c", host="h")
    for i in range(10):
        rec.event(foo(), EVENT_TYPE_NORMAL, "R", f"m{i}")
    stop()
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "after stop")  # not for the stopped watcher
    gate.set()
    thread.join(30)
    assert not thread.is_alive() and seen == [f"m{i}" for i in range(10)]


def test_a_full_watcher_buffer_drops_for_that_watcher_only(cleanup: Cleanup) -> None:
    b = new_broadcaster(queue_size=5)
    cleanup(b.shutdown)
    gate = threading.Event()
    cleanup(gate.set)
    blocked: list[str] = []
    fast, fast_done, fast_fn = _collector(21)

    def slow(event: dict[str, Any]) -> None:
        blocked.append(event["message"])
        gate.wait(30)

    cleanup(b.start_event_watcher(slow))
    cleanup(b.start_event_watcher(fast_fn))
    rec = b.new_recorder("c", host="h")
    rec.event(foo(), EVENT_TYPE_NORMAL, "R", "m0")
    deadline = time.monotonic() + 30
    while not blocked and time.monotonic() < deadline:  # the slow watcher holds m0: its buffer is empty
        time.sleep(0.01)
    for i in range(1, 6):  # both buffers take m1..m5
        rec.event(foo(), EVENT_TYPE_NORMAL, "R", f"m{i}")
    deadline = time.monotonic() + 30
    while len(fast) < 6 and time.monotonic() < deadline:  # the fast watcher has emptied its buffer
        time.sleep(0.01)
    for first in (6, 11, 16):  # the slow watcher's buffer is full: dropped for it, not for the fast one
        for i in range(first, min(first + 5, 21)):
            rec.event(foo(), EVENT_TYPE_NORMAL, "R", f"m{i}")
        while len(fast) < min(first + 5, 21) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert fast_done.wait(30) and fast == [f"m{i}" for i in range(21)]
    assert b.dropped == 15
