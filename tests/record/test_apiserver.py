"""ResourceEventSink against the embedded API server: create, count PATCH, NotFound -> create."""

from __future__ import annotations

import time
from typing import Any

import pytest

from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.client.resource import ResourceClient
from samplecontroller.record import EVENT_TYPE_WARNING, EVENTS, ResourceEventSink, new_broadcaster
from samplecontroller.rest import RESTClient, load_rest_client
from tests.record.conftest import foo


@pytest.fixture
def rest(apiserver: LocalAPIServer) -> RESTClient:
    return load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))


def _events(rest: RESTClient, ns: str, uid: str = "uid-sink") -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = ResourceClient(rest, EVENTS, ns).list().get("items") or []
    return [e for e in items if (e.get("involvedObject") or {}).get("uid") == uid]


def _wait(pred: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_events_and_count_patches_on_the_server(rest: RESTClient) -> None:
    ns = "default"  # the shared server has it; other tests' events are told apart by the object's uid
    b = new_broadcaster()
    try:
        b.start_recording_to_sink(ResourceEventSink(rest))
        rec = b.new_recorder("sample-controller", host="h")
        obj = foo(name="record-sink-foo", namespace=ns, uid="uid-sink")
        for _ in range(3):
            rec.event(obj, EVENT_TYPE_WARNING, "Failed", "boom")
        _wait(lambda: [e.get("count") for e in _events(rest, ns)] == [3])
        (ev,) = _events(rest, ns)
        assert ev["involvedObject"]["name"] == "record-sink-foo" and ev["source"]["component"] == "sample-controller"
        assert ev["reportingComponent"] == "sample-controller" and ev["message"] == "boom"
        # The event expires on the server: the next identical one is created again with its count.
        ResourceClient(rest, EVENTS, ns).delete(ev["metadata"]["name"])
        rec.event(obj, EVENT_TYPE_WARNING, "Failed", "boom")
        _wait(lambda: [e.get("count") for e in _events(rest, ns)] == [4])
    finally:
        b.shutdown()
