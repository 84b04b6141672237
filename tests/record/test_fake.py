"""FakeRecorder: Go's "Type Reason Message" strings, never blocking."""

from __future__ import annotations

import threading

from samplecontroller.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder, FakeRecorder
from tests.record.conftest import foo


def test_strings_like_go() -> None:
    r = FakeRecorder(10)
    rec: EventRecorder = r  # satisfies the protocol
    rec.event(foo(), EVENT_TYPE_NORMAL, "Synced", "Foo synced successfully")
    rec.eventf(foo(), EVENT_TYPE_WARNING, "ErrResourceExists", "Resource %r already exists", "dep")
    rec.annotated_eventf(foo(), {"b": "2", "a": "1"}, EVENT_TYPE_NORMAL, "R", "n=%d", 5)
    assert r.drain() == [
        "Normal Synced Foo synced successfully",
        "Warning ErrResourceExists Resource 'dep' already exists",
        "Normal R n=5 map[a:1 b:2]",
    ]
    assert r.events.empty()


def test_include_object() -> None:
    r = FakeRecorder(1, include_object=True)
    r.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    assert r.events.get_nowait() == "Normal R m involvedObject{kind=Foo,apiVersion=samplecontroller.k8s.io/v1alpha1}"


def test_full_buffer_drops_instead_of_blocking() -> None:
    r = FakeRecorder(2)
    done = threading.Event()

    def spam() -> None:
        for i in range(5):
            r.event(foo(), EVENT_TYPE_NORMAL, "R", str(i))
        done.set()

    threading.Thread(target=spam, daemon=True).start()
    assert done.wait(30)
    assert r.drain() == ["Normal R 0", "Normal R 1"] and r.dropped == 3


def test_none_discards_and_zero_drops() -> None:
    discard = FakeRecorder(None)
    discard.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    assert discard.drain() == [] and discard.dropped == 0
    zero = FakeRecorder(0)
    zero.event(foo(), EVENT_TYPE_NORMAL, "R", "m")
    assert zero.drain() == [] and zero.dropped == 1
