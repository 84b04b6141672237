"""ResourceClient and RESTClient against the loopback MiniServer (see conftest.py)."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.client import ResourceClient
from samplecontroller.client.types import APPLY_PATCH, JSON_PATCH, ListOptions
from samplecontroller.rest import RESTClient, TransportError

from .conftest import (
    WIDGETS,
    WIDGETS_DYNAMIC,
    MiniServer,
    Widget,
    WidgetList,
    WidgetSpec,
    WidgetStatus,
    widget,
)


def client(server: MiniServer, ns: str | None = "default") -> ResourceClient[Widget, WidgetList]:
    return ResourceClient(server.rest(), WIDGETS, ns)


def test_create_get_list_decode_into_models(server: MiniServer) -> None:
    c = client(server)
    created = c.create(widget("a", replicas=2, app="x"))
    assert isinstance(created, Widget) and created.metadata.resource_version == "1"
    got = c.get("a")
    assert got.spec == WidgetSpec(replicas=2) and got.metadata.labels == {"app": "x"}
    lst = c.list(label_selector="app=x", limit=5)
    assert isinstance(lst, WidgetList) and [w.metadata.name for w in lst.items] == ["a"]
    rec = server.requests[-1]
    assert rec.query == {"labelSelector": "app=x", "limit": "5"}
    assert rec.headers["User-Agent"] == "samplecontroller/0.1"
    assert rec.headers["Accept"] == "application/json"
    post = server.requests[0]
    assert post.method == "POST" and post.headers["Content-Type"] == "application/json"
    assert json.loads(post.body)["kind"] == "Widget"


def test_create_takes_namespace_from_object_when_client_has_none(server: MiniServer) -> None:
    all_ns = client(server, None)
    all_ns.create(widget("b", ns="other"))
    assert server.requests[-1].path == "/apis/example.com/v1/namespaces/other/widgets"
    all_ns.list()
    assert server.requests[-1].path == "/apis/example.com/v1/widgets"


def test_write_options_are_sent(server: MiniServer) -> None:
    c = client(server)
    c.create(widget("a"), dry_run=True, field_manager="me", field_validation="Strict")
    assert server.requests[-1].query == {"dryRun": "All", "fieldManager": "me", "fieldValidation": "Strict"}


def test_api_errors_are_typed(server: MiniServer) -> None:
    c = client(server)
    with pytest.raises(errors.NotFoundError) as info:
        c.get("missing")
    assert errors.is_not_found(info.value) and "missing" in str(info.value)
    c.create(widget("a"))
    with pytest.raises(errors.AlreadyExistsError):
        c.create(widget("a"))
    server.force_error = (410, json.dumps(errors.new_status(410, "Expired", "too old")).encode())
    with pytest.raises(errors.ExpiredError):
        c.list(resource_version="1")


def test_non_status_error_body_becomes_the_message(server: MiniServer) -> None:
    rest = server.rest()
    with pytest.raises(errors.ServiceUnavailableError, match="upstream says no"):
        rest.request("GET", "/plain/503")
    with pytest.raises(errors.StatusError) as info:
        rest.request("GET", "/plain/418")
    assert info.value.code == 418


def test_unreachable_server_raises_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import kubernetes

    cfg = kubernetes.client.Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    rest = RESTClient(cfg)
    with pytest.raises(TransportError, match=f"127.0.0.1:{port}"):
        rest.request("GET", "/api")
    with pytest.raises(TransportError, match=f"127.0.0.1:{port}"):
        rest.stream("GET", "/api", query={"watch": "true"})


def test_update_can_keep_fields_the_model_does_not_know(server: MiniServer) -> None:
    server.seed({"apiVersion": "example.com/v1", "kind": "Widget", "futureTopLevel": {"x": 1},
                 "metadata": {"name": "a", "namespace": "default", "annotations": {"k": "v"}},
                 "spec": {"replicas": 1, "newField": "keep", "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
                 "status": {"ready": 0, "phase": "Pending"}})
    c = client(server)
    live = c.get("a")
    assert live.spec is not msgspec.UNSET
    changed = msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, replicas=3))
    updated = c.update(changed, preserve_unknown_fields=True)
    assert updated.spec != msgspec.UNSET and updated.spec.replicas == 3
    stored = server.objects[("default", "a")]
    assert stored["futureTopLevel"] == {"x": 1}
    assert stored["metadata"]["annotations"] == {"k": "v"}
    assert stored["spec"]["newField"] == "keep" and stored["spec"]["replicas"] == 3
    assert stored["spec"]["ports"] == [{"name": "http", "port": 80, "protocol": "TCP"}]
    put = next(r for r in server.requests if r.method == "PUT")
    assert json.loads(put.body)["metadata"]["resourceVersion"] == live.metadata.resource_version

    # the status subresource: only .status changes; unknown status keys survive
    status_obj = msgspec.structs.replace(updated, status=WidgetStatus(ready=3))
    after = c.update_status(status_obj, preserve_unknown_fields=True)
    assert after.status == WidgetStatus(ready=3)
    assert server.objects[("default", "a")]["status"] == {"ready": 3, "phase": "Pending"}


def test_update_of_a_stale_object_conflicts(server: MiniServer) -> None:
    c = client(server)
    first = c.create(widget("a"))
    c.update(msgspec.structs.replace(first, spec=WidgetSpec(replicas=5)))
    with pytest.raises(errors.ConflictError):
        c.update(msgspec.structs.replace(first, spec=WidgetSpec(replicas=6)))
    assert server.objects[("default", "a")]["spec"]["replicas"] == 5


def test_unset_fields_are_removed_on_update(server: MiniServer) -> None:
    c = client(server)
    server.seed({"metadata": {"name": "a", "namespace": "default", "labels": {"x": "y"}}, "spec": {"replicas": 1}})
    live = c.get("a")
    c.update(msgspec.structs.replace(live, metadata=msgspec.structs.replace(live.metadata, labels=msgspec.UNSET)))
    assert "labels" not in server.objects[("default", "a")]["metadata"]


def test_patch_and_apply_send_the_right_content_types(server: MiniServer) -> None:
    c = client(server)
    c.create(widget("a"))
    out = c.patch("a", {"spec": {"replicas": 7}})
    assert out.spec != msgspec.UNSET and out.spec.replicas == 7
    rec = server.requests[-1]
    assert rec.headers["Content-Type"] == "application/merge-patch+json"
    c.patch("a", [{"op": "replace", "path": "/spec/replicas", "value": 1}], JSON_PATCH, field_manager="m")
    assert server.requests[-1].headers["Content-Type"] == JSON_PATCH
    assert server.requests[-1].query == {"fieldManager": "m"}
    c.patch("a", b'{"spec":{}}', subresource="status", force=True)
    assert server.requests[-1].path.endswith("/widgets/a/status") and server.requests[-1].query == {"force": "true"}

    c.apply(widget("a", replicas=4), field_manager="ctl")
    rec = server.requests[-1]
    assert rec.method == "PATCH" and rec.headers["Content-Type"] == APPLY_PATCH
    assert rec.query == {"fieldManager": "ctl", "force": "false"}
    assert json.loads(rec.body)["spec"] == {"replicas": 4}
    with pytest.raises(ValueError, match="field_manager"):
        c.apply(widget("a"), field_manager="")


def test_delete_and_delete_collection(server: MiniServer) -> None:
    c = client(server)
    c.create(widget("a"))
    c.create(widget("b"))
    c.delete("a", propagation_policy="Foreground", preconditions={"uid": "uid-a"}, grace_period_seconds=0)
    body = json.loads(server.requests[-1].body)
    assert body == {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground",
                    "preconditions": {"uid": "uid-a"}, "gracePeriodSeconds": 0}
    with pytest.raises(errors.NotFoundError):
        c.delete("a")
    c.delete_collection(label_selector="x=y")
    assert server.requests[-1].query == {"labelSelector": "x=y"} and not server.objects


def test_lister_watcher_list_gives_list_result(server: MiniServer) -> None:
    c = client(server)
    c.create(widget("a"))
    page = c.lister_watcher().list(ListOptions(resource_version="0", limit=10))
    assert [w.metadata.name for w in page.items] == ["a"]
    assert page.resource_version == "1" and page.continue_ == "tok"
    assert server.requests[-1].query == {"resourceVersion": "0", "limit": "10"}


def _collect(events: list[Any], it: Any, done: threading.Event) -> None:
    try:
        for ev in it:
            events.append(ev)
    except BaseException as err:  # surfaced by the test
        events.append(err)
    finally:
        done.set()


def test_watch_decodes_events_and_errors(server: MiniServer) -> None:
    c = client(server)
    w = c.watch(resource_version="5", allow_watch_bookmarks=True, timeout_seconds=30)
    assert server.watch_opened.wait(5)
    assert server.requests[-1].query == {"resourceVersion": "5", "timeoutSeconds": "30",
                                         "allowWatchBookmarks": "true", "watch": "true"}
    events: list[Any] = []
    done = threading.Event()
    threading.Thread(target=_collect, args=(events, w, done), daemon=True).start()
    obj = msgspec.json.encode(widget("a"))
    server.send_watch_line(b'{"type":"ADDED","object":' + obj + b"}")
    server.send_watch_line(b'{"type":"BOOKMARK","object":{"kind":"Widget","apiVersion":"example.com/v1",'
                           b'"metadata":{"resourceVersion":"9"}}}')
    status = json.dumps(errors.new_status(410, "Expired", "too old resource version")).encode()
    server.send_watch_line(b'{"type":"ERROR","object":' + status + b"}")
    server.send_watch_line(None)
    assert done.wait(5)
    assert [e.type for e in events] == ["ADDED", "BOOKMARK", "ERROR"]
    assert isinstance(events[0].object, Widget) and events[0].object.metadata.name == "a"
    assert events[1].object.metadata.resource_version == "9"
    assert events[2].object is None and events[2].status["code"] == 410


def test_watch_stop_from_another_thread_ends_a_blocked_iteration(server: MiniServer) -> None:
    w = client(server).watch()
    assert server.watch_opened.wait(5)
    events: list[Any] = []
    done = threading.Event()
    threading.Thread(target=_collect, args=(events, w, done), daemon=True).start()
    server.send_watch_line(b'{"type":"ADDED","object":' + msgspec.json.encode(widget("a")) + b"}")
    deadline = time.monotonic() + 30
    while not events and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(events) == 1
    started = time.monotonic()
    w.stop()
    assert done.wait(30), "stop() did not end the iteration"
    assert time.monotonic() - started < 10  # at once, not at the watch's end
    assert len(events) == 1  # no error surfaced after stop()
    assert server.watch_closed.wait(5)
    w.stop()  # idempotent


def test_dynamic_resource_client_uses_plain_dicts(server: MiniServer) -> None:
    c: ResourceClient[dict[str, Any], dict[str, Any]] = ResourceClient(server.rest(), WIDGETS_DYNAMIC, "default")
    created = c.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "d"},
                        "spec": {"anything": [1, 2]}})
    assert created["spec"] == {"anything": [1, 2]}
    lst = c.list()
    assert isinstance(lst, dict) and lst["items"][0]["metadata"]["name"] == "d"
    page = c.lister_watcher().list(ListOptions())
    assert page.resource_version == "1" and page.items[0]["metadata"]["name"] == "d"
    created["spec"]["more"] = True
    assert c.update(created)["spec"]["more"] is True
    assert sum(1 for r in server.requests if r.method == "GET") == 2  # dicts need no read before PUT


def test_watch_ends_with_an_error_event_on_an_undecodable_line(server: MiniServer) -> None:
    w = client(server).watch()
    assert server.watch_opened.wait(5)
    server.send_watch_line(b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}')
    server.send_watch_line(b"this is not json")
    events = []
    for ev in w:
        events.append(ev)
    assert [e.type for e in events] == ["ADDED", "ERROR"]
    assert events[1].status is not None and events[1].status["code"] == 500
    assert "unable to decode" in events[1].status["message"]


def test_a_server_url_with_a_path_prefix_keeps_it(server: MiniServer) -> None:
    import kubernetes

    cfg = kubernetes.client.Configuration()
    cfg.host = server.url + "/plain/"
    assert RESTClient(cfg).request("GET", "/200", query={"a": "b c"}) == b"upstream says no\n"
    assert server.requests[-1].path == "/plain/200" and server.requests[-1].query == {"a": "b c"}
