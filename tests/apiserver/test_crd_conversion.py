"""CRD conversion through a webhook (``conversion.strategy: Webhook``) end to end: the embedded API
server calls a real conversion webhook served over HTTPS by this test (``tests.conversion_webhook``)
for every request in a version other than the storage version, and answers kube-apiserver's
errors when the webhook misbehaves. Clients are real HTTP clients (``Raw``)."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import require_kubectl
from tests.conversion_webhook import ConversionWebhook, widget_crd
from tests.live import free_port, wait_for

from .conftest import Raw, open_watches

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "conversion.example.com"
_names = itertools.count()


def path(version: str, name: str = "", group: str = GROUP, sub: str = "") -> str:
    base = f"/apis/{group}/{version}/namespaces/default/widgets"
    return base + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def widget(version: str, name: str, amount: int, group: str = GROUP, **spec: Any) -> dict[str, Any]:
    key = "replicas" if version == "v1" else "count"
    return {"apiVersion": f"{group}/{version}", "kind": "Widget", "metadata": {"name": name},
            "spec": {key: amount, **spec}}


def fresh(prefix: str = "w") -> str:
    return f"{prefix}-{next(_names)}"


def stored(server: LocalAPIServer, name: str, group: str = GROUP) -> dict[str, Any] | None:
    """The object as the store holds it (None when absent)."""
    entry = server.call(lambda core: core.store.get(f"{group}/widgets", "default", name))
    obj: dict[str, Any] | None = entry.obj if entry is not None else None
    return obj


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConversionWebhook]:
    with ConversionWebhook(tmp_path_factory.mktemp("certs")) as webhook:
        yield webhook


@pytest.fixture(scope="module")
def widgets(server: LocalAPIServer, raw: Raw, hook: ConversionWebhook) -> str:
    code, _, body = raw.call("POST", CRDS, widget_crd(hook.url, hook.ca_bundle))
    assert code == 201, body
    return GROUP


@pytest.fixture(autouse=True)
def behaving(hook: ConversionWebhook, server: LocalAPIServer) -> Iterator[None]:
    """Each test starts with a webhook that converts, and leaves it so."""
    hook.mode, hook.delay = "ok", 0.0
    hook.reviews.clear()
    yield
    hook.mode, hook.delay = "ok", 0.0
    assert server.app is not None
    server.app.scope.converter.timeout = 30.0


def install(raw: Raw, crd: dict[str, Any]) -> None:
    code, _, body = raw.call("POST", CRDS, crd)
    assert code == 201, body


# ---------------------------------------------------------------------------- the request path


def test_create_in_a_non_storage_version_is_stored_converted(widgets: str, raw: Raw, server: LocalAPIServer,
                                                              hook: ConversionWebhook) -> None:
    name = fresh()
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 3, tags=["lost"]))
    assert code == 201, body
    assert body["apiVersion"] == f"{GROUP}/v2"
    assert body["spec"] == {"count": 3}  # v2 -> v1 -> v2 loses tags, as on kube-apiserver
    held = stored(server, name)
    assert held is not None and held["apiVersion"] == f"{GROUP}/v1" and held["spec"] == {"replicas": 3}
    assert held["metadata"]["uid"] == body["metadata"]["uid"]
    assert [(r["apiVersion"], r["desired"], r["count"]) for r in hook.reviews] == [
        ("apiextensions.k8s.io/v1", f"{GROUP}/v1", 1), ("apiextensions.k8s.io/v1", f"{GROUP}/v2", 1)]
    assert hook.reviews[0]["path"] == "/convert?timeout=30s"
    assert body["metadata"]["managedFields"][0]["apiVersion"] == f"{GROUP}/v2"


def test_reads_in_the_storage_version_call_no_webhook(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    name = fresh()
    assert raw.call("POST", path("v1"), widget("v1", name, 2))[0] == 201
    code, _, body = raw.call("GET", path("v1", name))
    assert code == 200 and body["spec"] == {"replicas": 2}
    assert hook.reviews == []


def test_get_and_list_in_the_other_version(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    names = [fresh("list") for _ in range(3)]
    for i, name in enumerate(names):
        assert raw.call("POST", path("v1"), widget("v1", name, i + 1))[0] == 201
    code, _, body = raw.call("GET", path("v2", names[1]))
    assert code == 200 and body["apiVersion"] == f"{GROUP}/v2" and body["spec"] == {"count": 2}
    hook.reviews.clear()
    code, _, body = raw.call("GET", path("v2"))
    assert code == 200 and body["apiVersion"] == f"{GROUP}/v2" and body["kind"] == "WidgetList"
    mine = {i["metadata"]["name"]: i for i in body["items"] if i["metadata"]["name"] in names}
    assert {n: o["spec"] for n, o in mine.items()} == {names[0]: {"count": 1}, names[1]: {"count": 2},
                                                       names[2]: {"count": 3}}
    assert all(i["apiVersion"] == f"{GROUP}/v2" for i in body["items"])
    assert len(hook.reviews) == 1 and hook.reviews[0]["count"] == len(body["items"])  # one review


def test_list_pages_convert_only_the_page(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    for _ in range(3):
        assert raw.call("POST", path("v1"), widget("v1", fresh("page"), 1))[0] == 201
    hook.reviews.clear()
    code, _, body = raw.call("GET", path("v2") + "?limit=2")
    assert code == 200 and len(body["items"]) == 2 and body["metadata"]["continue"]
    assert [r["count"] for r in hook.reviews] == [2]


def test_update_and_status_in_the_other_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    name = fresh()
    assert raw.call("POST", path("v1"), widget("v1", name, 1, image="a"))[0] == 201
    _, _, current = raw.call("GET", path("v2", name))
    current["spec"]["count"] = 4
    code, _, body = raw.call("PUT", path("v2", name), current)
    assert code == 200 and body["spec"] == {"count": 4, "image": "a"} and body["metadata"]["generation"] == 2
    held = stored(server, name)
    assert held is not None and held["spec"] == {"replicas": 4, "image": "a"}
    stale = raw.call("PUT", path("v2", name), current)
    assert stale[0] == 409 and stale[2]["reason"] == "Conflict"
    body["status"] = {"readyCount": 3}
    code, _, status = raw.call("PUT", path("v2", name, sub="status"), body)
    assert code == 200 and status["status"] == {"readyCount": 3} and status["spec"]["count"] == 4
    held = stored(server, name)
    assert held is not None and held["status"] == {"ready": 3}
    assert held["metadata"]["generation"] == 2


def test_patches_in_the_other_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    name = fresh()
    assert raw.call("POST", path("v1"), widget("v1", name, 1))[0] == 201
    code, _, body = raw.call("PATCH", path("v2", name), {"spec": {"count": 6}}, ctype="application/merge-patch+json")
    assert code == 200 and body["spec"] == {"count": 6}, body
    code, _, body = raw.call("PATCH", path("v2", name), [{"op": "replace", "path": "/spec/count", "value": 7}],
                             ctype="application/json-patch+json")
    assert code == 200 and body["spec"] == {"count": 7}, body
    code, _, body = raw.call("PATCH", path("v2", name, sub="status"), {"status": {"readyCount": 5}},
                             ctype="application/merge-patch+json")
    assert code == 200 and body["status"] == {"readyCount": 5}, body
    held = stored(server, name)
    assert held is not None and held["spec"] == {"replicas": 7} and held["status"] == {"ready": 5}


def test_server_side_apply_in_the_other_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    name = fresh()
    applied = widget("v2", name, 2, image="x")
    code, _, body = raw.call("PATCH", path("v2", name) + "?fieldManager=alice", applied,
                             ctype="application/apply-patch+yaml")
    assert code == 201 and body["spec"] == {"count": 2, "image": "x"}, body
    managers = {(m["manager"], m["apiVersion"], m["operation"]) for m in body["metadata"]["managedFields"]}
    assert managers == {("alice", f"{GROUP}/v2", "Apply")}
    # another manager takes spec.count: a conflict, as kube's (the fields are compared in v2)
    code, _, body = raw.call("PATCH", path("v2", name) + "?fieldManager=bob", widget("v2", name, 9),
                             ctype="application/apply-patch+yaml")
    assert code == 409 and "alice" in body["message"], body
    code, _, body = raw.call("PATCH", path("v2", name) + "?fieldManager=alice", widget("v2", name, 3),
                             ctype="application/apply-patch+yaml")
    assert code == 200 and body["spec"] == {"count": 3}, body  # alice dropped image: removed
    held = stored(server, name)
    assert held is not None and held["spec"] == {"replicas": 3}


def test_scale_subresource_in_the_other_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    name = fresh()
    assert raw.call("POST", path("v1"), widget("v1", name, 3))[0] == 201
    code, _, scale = raw.call("GET", path("v2", name, sub="scale"))
    assert code == 200 and scale["spec"] == {"replicas": 3}, scale
    scale["spec"]["replicas"] = 5
    code, _, scale = raw.call("PUT", path("v2", name, sub="scale"), scale)
    assert code == 200 and scale["spec"] == {"replicas": 5}, scale
    code, _, scale = raw.call("PATCH", path("v2", name, sub="scale"), {"spec": {"replicas": 6}},
                              ctype="application/merge-patch+json")
    assert code == 200 and scale["spec"] == {"replicas": 6}, scale
    held = stored(server, name)
    assert held is not None and held["apiVersion"] == f"{GROUP}/v1" and held["spec"] == {"replicas": 6}


def test_dry_run_converts_and_stores_nothing(widgets: str, raw: Raw, server: LocalAPIServer,
                                             hook: ConversionWebhook) -> None:
    name = fresh()
    code, _, body = raw.call("POST", path("v2") + "?dryRun=All", widget("v2", name, 2))
    assert code == 201 and body["spec"] == {"count": 2}
    assert len(hook.reviews) == 2 and stored(server, name) is None


def test_selectors_see_the_converted_objects(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    name = fresh("sel")
    assert raw.call("POST", path("v1"), widget("v1", name, 41))[0] == 201
    code, _, body = raw.call("GET", path("v2") + "?fieldSelector=spec.count%3D41")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == [name], body
    code, _, body = raw.call("GET", path("v1") + "?fieldSelector=spec.replicas%3D41")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == [name], body
    hook.mode = "label"  # the webhook's labels are kept, and selected on
    code, _, body = raw.call("GET", path("v2") + "?labelSelector=converted%3Dyes")
    assert code == 200 and name in [i["metadata"]["name"] for i in body["items"]]
    assert all(i["metadata"]["labels"] == {"converted": "yes"} for i in body["items"])


def test_watch_converts_every_event(widgets: str, raw: Raw) -> None:
    name = fresh("watch")
    assert raw.call("POST", path("v1"), widget("v1", name, 1))[0] == 201
    rv = raw.call("GET", path("v1"))[2]["metadata"]["resourceVersion"]
    events: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:
        for event in raw.watch(path("v2") + f"?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3D{name}"
                               "&timeoutSeconds=10"):
            events.append(event)
            if event["type"] == "DELETED":
                break
        done.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    assert raw.call("PATCH", path("v1", name), {"spec": {"replicas": 2}}, ctype="application/merge-patch+json")[0] == 200
    assert raw.call("DELETE", path("v1", name))[0] == 200
    assert done.wait(20)
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"]) for e in events] == [
        ("MODIFIED", f"{GROUP}/v2", {"count": 2}), ("DELETED", f"{GROUP}/v2", {"count": 2})]


def test_watch_initial_state_is_converted(widgets: str, raw: Raw) -> None:
    name = fresh("initial")
    assert raw.call("POST", path("v1"), widget("v1", name, 5))[0] == 201
    events = list(raw.watch(path("v2") + "?watch=true&fieldSelector=spec.count%3D5&timeoutSeconds=1"))
    assert [(e["type"], e["object"]["metadata"]["name"], e["object"]["spec"]) for e in events] == [
        ("ADDED", name, {"count": 5})]


def test_watch_ends_with_an_error_event_when_conversion_fails(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    rv = raw.call("GET", path("v1"))[2]["metadata"]["resourceVersion"]
    hook.mode = "failure"
    events: list[dict[str, Any]] = []
    thread = threading.Thread(target=lambda: events.extend(raw.watch(
        path("v2") + f"?watch=true&resourceVersion={rv}&timeoutSeconds=10")), daemon=True)
    thread.start()
    assert raw.call("POST", path("v1"), widget("v1", fresh(), 1))[0] == 201
    thread.join(20)
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["code"] == 500
    assert events[0]["object"]["message"] == (f"conversion webhook for {GROUP}/v1, Kind=Widget failed: "
                                              "widgets cannot travel in time")


def test_delete_answers_in_the_request_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    name = fresh()
    assert raw.call("POST", path("v1"), {**widget("v1", name, 1), "metadata": {"name": name,
                                                                               "finalizers": ["example.com/keep"]}})[0] == 201
    code, _, body = raw.call("DELETE", path("v2", name))
    assert code == 200 and body["apiVersion"] == f"{GROUP}/v2" and body["metadata"]["deletionTimestamp"]
    code, _, body = raw.call("PATCH", path("v2", name), {"metadata": {"finalizers": None}},
                             ctype="application/merge-patch+json")
    assert code == 200, body
    assert stored(server, name) is None


def test_delete_collection_selects_in_the_request_version(widgets: str, raw: Raw, server: LocalAPIServer) -> None:
    doomed, kept = fresh("dc"), fresh("dc")
    assert raw.call("POST", path("v1"), widget("v1", doomed, 77))[0] == 201
    assert raw.call("POST", path("v1"), widget("v1", kept, 78))[0] == 201
    code, _, body = raw.call("DELETE", path("v2") + "?fieldSelector=spec.count%3D77")
    assert code == 200, body
    assert stored(server, doomed) is None and stored(server, kept) is not None


def test_admission_webhooks_see_the_request_version(widgets: str, raw: Raw, server: LocalAPIServer,
                                                    hook: ConversionWebhook) -> None:
    """A mutating webhook gets the object (and the old one) in the request's version; what it
    adds is converted and stored in the storage version."""
    config = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
              "metadata": {"name": "widgets-admitted"},
              "webhooks": [{"name": "admitted.conversion.example.com", "sideEffects": "None",
                            "admissionReviewVersions": ["v1"],
                            "clientConfig": {"url": hook.url.replace("/convert", "/mutate"), "caBundle": hook.ca_bundle},
                            "objectSelector": {"matchLabels": {"admit": "yes"}},
                            "rules": [{"apiGroups": [GROUP], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                                       "resources": ["widgets"]}]}]}
    mutating = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    assert raw.call("POST", mutating, config)[0] == 201
    try:
        name = fresh("adm")
        body = widget("v2", name, 1)
        body["metadata"]["labels"] = {"admit": "yes"}
        code, _, created = raw.call("POST", path("v2"), body)
        assert code == 201 and created["metadata"]["labels"]["admitted"] == "v2", created
        code, _, patched = raw.call("PATCH", path("v2", name), {"spec": {"count": 2}},
                                    ctype="application/merge-patch+json")
        assert code == 200 and patched["spec"] == {"count": 2}, patched
        patched["spec"]["count"] = 3
        code, _, replaced = raw.call("PUT", path("v2", name), patched)
        assert code == 200 and replaced["spec"] == {"count": 3}, replaced
        code, _, applied = raw.call("PATCH", path("v2", name) + "?fieldManager=me&force=true",
                                    {**widget("v2", name, 4), "metadata": {"name": name, "labels": {"admit": "yes"}}},
                                    ctype="application/apply-patch+yaml")
        assert code == 200 and applied["spec"] == {"count": 4}, applied
        assert set(hook.admissions) == {(f"{GROUP}/v2", None), (f"{GROUP}/v2", f"{GROUP}/v2")}
        held = stored(server, name)
        assert held is not None and held["apiVersion"] == f"{GROUP}/v1" and held["spec"] == {"replicas": 4}
        assert held["metadata"]["labels"]["admitted"] == "v2"
    finally:
        raw.call("DELETE", f"{mutating}/widgets-admitted")


# ---------------------------------------------------------------------------- review versions, migration


def test_the_first_review_version_the_server_speaks_is_used(server: LocalAPIServer, raw: Raw,
                                                            hook: ConversionWebhook) -> None:
    group = "beta.example.com"
    install(raw, widget_crd(hook.url, hook.ca_bundle, review_versions=("v9", "v1beta1", "v1"), group=group))
    name = fresh()
    code, _, body = raw.call("POST", path("v2", group=group), widget("v2", name, 2, group=group))
    assert code == 201, body
    assert {r["apiVersion"] for r in hook.reviews} == {"apiextensions.k8s.io/v1beta1"}


def test_objects_stored_before_the_storage_version_changed_stay_readable(
        server: LocalAPIServer, raw: Raw, hook: ConversionWebhook) -> None:
    group = "migration.example.com"
    crd = widget_crd(hook.url, hook.ca_bundle, group=group)
    install(raw, crd)
    assert raw.call("POST", path("v1", group=group), widget("v1", "old", 1, group=group))[0] == 201
    current = raw.call("GET", f"{CRDS}/widgets.{group}")[2]
    for version in current["spec"]["versions"]:
        version["storage"] = version["name"] == "v2"
    code, _, body = raw.call("PUT", f"{CRDS}/widgets.{group}", current)
    assert code == 200 and body["status"]["storedVersions"] == ["v1", "v2"], body
    held = stored(server, "old", group)
    assert held is not None and held["apiVersion"] == f"{group}/v1"  # not migrated
    hook.reviews.clear()
    assert raw.call("GET", path("v1", "old", group=group))[2]["spec"] == {"replicas": 1}
    assert hook.reviews == []  # stored in v1, read in v1
    assert raw.call("GET", path("v2", "old", group=group))[2]["spec"] == {"count": 1}
    assert raw.call("POST", path("v1", group=group), widget("v1", "new", 2, group=group))[0] == 201
    held = stored(server, "new", group)
    assert held is not None and held["apiVersion"] == f"{group}/v2" and held["spec"] == {"count": 2}
    # an update of the old object in the (new) storage version converts it on the way in and out
    code, _, body = raw.call("PATCH", path("v2", "old", group=group), {"spec": {"count": 3}},
                             ctype="application/merge-patch+json")
    assert code == 200 and body["spec"] == {"count": 3}, body
    held = stored(server, "old", group)
    assert held is not None and held["apiVersion"] == f"{group}/v2" and held["spec"] == {"count": 3}


def test_strategy_none_only_rewrites_api_version(server: LocalAPIServer, raw: Raw, hook: ConversionWebhook) -> None:
    group = "none.example.com"
    crd = widget_crd(hook.url, hook.ca_bundle, group=group)
    crd["spec"]["conversion"] = {"strategy": "None"}
    for version in crd["spec"]["versions"]:
        version.pop("selectableFields")
    install(raw, crd)
    assert raw.call("POST", path("v2", group=group), widget("v2", "same", 2, group=group))[0] == 201
    code, _, body = raw.call("GET", path("v1", "same", group=group))
    assert code == 200 and body["apiVersion"] == f"{group}/v1"
    assert body["spec"] == {"count": 2}  # kube-apiserver would prune it on read: not done under None
    assert hook.reviews == []


def test_converted_objects_are_pruned_by_the_desired_version(widgets: str, raw: Raw, hook: ConversionWebhook) -> None:
    name = fresh()
    hook.mode = "extra"  # the webhook adds spec.bogus, which no version declares
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 2))
    assert code == 201 and body["spec"] == {"count": 2}, body


# ---------------------------------------------------------------------------- a webhook misbehaving


FAILURES = {
    "malformed": "failed: couldn't get version/kind; json parse error: invalid character 't' looking for "
                 "beginning of value",
    "failure": "failed: widgets cannot travel in time",
    "http500": 'failed: an error on the server ("conversion exploded") has prevented the request from succeeding',
    "drop": "returned 0 objects, expected 1",
}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_a_failing_webhook_fails_the_request_and_stores_nothing(widgets: str, raw: Raw, server: LocalAPIServer,
                                                                hook: ConversionWebhook, mode: str) -> None:
    existing = fresh()
    assert raw.call("POST", path("v1"), widget("v1", existing, 1))[0] == 201
    hook.mode = mode
    name = fresh()
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 2))
    assert (code, body.get("reason")) == (500, None), body
    assert body["message"] == f"conversion webhook for {GROUP}/v2, Kind=Widget {FAILURES[mode]}"
    assert stored(server, name) is None
    code, _, body = raw.call("GET", path("v2", existing))
    assert code == 500 and body["message"] == f"conversion webhook for {GROUP}/v1, Kind=Widget {FAILURES[mode]}"
    code, _, body = raw.call("PATCH", path("v2", existing), {"spec": {"count": 5}},
                             ctype="application/merge-patch+json")
    assert code == 500
    held = stored(server, existing)
    assert held is not None and held["spec"] == {"replicas": 1}
    assert raw.call("GET", path("v2"))[0] == 500


def test_a_webhook_changing_uids_returns_invalid_metadata(widgets: str, raw: Raw, server: LocalAPIServer,
                                                          hook: ConversionWebhook) -> None:
    existing = fresh()
    assert raw.call("POST", path("v1"), widget("v1", existing, 1))[0] == 201
    hook.mode = "uid"
    name = fresh()
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 2))
    assert code == 500 and body["message"].startswith(
        f"conversion webhook for {GROUP}/v2, Kind=Widget returned invalid object: must have the same UID: "), body
    assert body["message"].endswith(" != not-the-uid")
    assert stored(server, name) is None
    code, _, body = raw.call("GET", path("v2"))
    assert code == 500 and "returned invalid converted object at index 0: must have the same UID" in body["message"]


@pytest.mark.parametrize(("mode", "problem"), [
    ("badlabel", "returned invalid metadata: metadata.labels: Invalid value: \"bad key!\": name part must consist of"),
    ("name", "returned invalid object: must have the same name: "),
])
def test_a_webhook_changing_metadata_is_refused(widgets: str, raw: Raw, server: LocalAPIServer,
                                                hook: ConversionWebhook, mode: str, problem: str) -> None:
    hook.mode = mode
    name = fresh()
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 2))
    assert code == 500 and body["message"].startswith(f"conversion webhook for {GROUP}/v2, Kind=Widget {problem}"), body
    assert stored(server, name) is None


def test_a_slow_webhook_times_out(widgets: str, raw: Raw, server: LocalAPIServer, hook: ConversionWebhook) -> None:
    assert server.app is not None
    server.app.scope.converter.timeout = 0.5  # kube's is 30 s
    hook.mode, hook.delay = "slow", 3.0
    name = fresh()
    code, _, body = raw.call("POST", path("v2"), widget("v2", name, 2))
    assert code == 500 and body["message"] == (
        f'conversion webhook for {GROUP}/v2, Kind=Widget failed: Post "{hook.url}?timeout=500ms": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"), body
    assert stored(server, name) is None


def test_a_webhook_that_is_down(server: LocalAPIServer, raw: Raw, hook: ConversionWebhook) -> None:
    group = "down.example.com"
    url = f"https://127.0.0.1:{free_port()}/convert"
    install(raw, widget_crd(url, hook.ca_bundle, group=group))
    code, _, body = raw.call("POST", path("v2", group=group), widget("v2", "x", 2, group=group))
    assert code == 500 and body["message"] == (
        f'conversion webhook for {group}/v2, Kind=Widget failed: Post "{url}?timeout=30s": '
        f"dial tcp 127.0.0.1:{url.split(':')[2].split('/')[0]}: connect: connection refused"), body
    assert stored(server, "x", group) is None
    # in the storage version nothing needs converting: the webhook is not called
    assert raw.call("POST", path("v1", group=group), widget("v1", "y", 2, group=group))[0] == 201


def test_a_service_reference_fails_with_a_clear_message(server: LocalAPIServer, raw: Raw,
                                                        hook: ConversionWebhook) -> None:
    group = "service.example.com"
    crd = widget_crd(hook.url, hook.ca_bundle, group=group)
    crd["spec"]["conversion"]["webhook"]["clientConfig"] = {
        "service": {"namespace": "system", "name": "webhook-service", "path": "/convert"}}
    install(raw, crd)
    code, _, body = raw.call("POST", path("v2", group=group), widget("v2", "x", 2, group=group))
    assert code == 500 and body["message"].startswith(
        f'conversion webhook for {group}/v2, Kind=Widget failed: Post '
        '"https://webhook-service.system.svc:443/convert?timeout=30s": service "webhook-service" in namespace '
        '"system" cannot be reached'), body


# ---------------------------------------------------------------------------- invalid conversion settings


def _invalid_crd(raw: Raw, conversion: dict[str, Any], **spec: Any) -> dict[str, Any]:
    crd = widget_crd("https://127.0.0.1:1/convert", "", group="invalid.example.com")
    crd["spec"]["conversion"] = conversion
    crd["spec"].update(spec)
    code, _, body = raw.call("POST", CRDS, crd)
    assert code == 422 and body["reason"] == "Invalid", body
    assert body["message"].startswith(
        'CustomResourceDefinition.apiextensions.k8s.io "widgets.invalid.example.com" is invalid: ')
    status: dict[str, Any] = body
    return status


CASES = [
    ({"strategy": "Webhook"},
     ["spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
      "spec.conversion.conversionReviewVersions: Required value"]),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {}}},
     ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v3"],
                                         "clientConfig": {"url": "https://example.com/convert"}}},
     ['spec.conversion.conversionReviewVersions: Invalid value: []string{"v3"}: must include at least one of '
      "v1, v1beta1"]),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1", "v1"],
                                         "clientConfig": {"url": "http://example.com/convert?x=1"}}},
     ["spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; "
      "desired format: https://host[/path]",
      'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version']),
    ({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"],
                                      "clientConfig": {"url": "https://example.com/convert"}}},
     ["spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
      "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"]),
    ({"strategy": "Magic"},
     ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']),
    ({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                                         "clientConfig": {"service": {"name": "", "namespace": "s", "port": 0}}}},
     ["spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
      "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 "
      "and 65535, inclusive"]),
]


@pytest.mark.parametrize(("conversion", "messages"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_invalid_conversion_settings_are_rejected(server: LocalAPIServer, raw: Raw, conversion: dict[str, Any],
                                                  messages: list[str]) -> None:
    body = _invalid_crd(raw, conversion)
    for message in messages:
        assert message in body["message"], body["message"]


def test_webhook_conversion_needs_pruning(server: LocalAPIServer, raw: Raw) -> None:
    body = _invalid_crd(raw, {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://example.com/convert"}}},
        preserveUnknownFields=True)
    assert ('spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true'
            in body["message"])


# ---------------------------------------------------------------------------- kubectl


def test_kubectl_get_watch_in_a_non_storage_version(widgets: str, raw: Raw, server: LocalAPIServer,
                                                    tmp_path: Path) -> None:
    """``kubectl get -w`` of v2 prints every change converted, whatever version it was written in.

    ``kubectl get NAME -w`` prints the object it GETs, then watches from resourceVersion 0 and
    drops that watch's first (synthetic ADDED) event, as on any cluster: a change made before the
    watch is open would be that dropped event. So the test writes only once kubectl watches."""
    name = fresh("kw")
    assert raw.call("POST", path("v1"), widget("v1", name, 1))[0] == 201
    before = open_watches(server, f"{GROUP}/widgets")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(server.kubeconfig_path)}
    proc = subprocess.Popen([require_kubectl(), "--cache-dir", str(tmp_path / "c"), "-n", "default", "get",
                             f"widgets.v2.{GROUP}", name, "-w", "--request-timeout=120s",
                             "-o", "jsonpath={.apiVersion} {.spec.count}{\"\\n\"}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"{GROUP}/v2 1"
        wait_for(lambda: open_watches(server, f"{GROUP}/widgets") > before, timeout=60, what="kubectl's watch to open")
        assert raw.call("PATCH", path("v1", name), {"spec": {"replicas": 7}},
                        ctype="application/merge-patch+json")[0] == 200
        line = proc.stdout.readline().strip()
        if not line:  # kubectl ended: show why
            proc.wait(10)
            raise AssertionError(f"kubectl get -w ended: {proc.stderr.read() if proc.stderr else ''}")
        assert line == f"{GROUP}/v2 7"
        assert raw.call("PATCH", path("v2", name), {"spec": {"count": 8}},
                        ctype="application/merge-patch+json")[0] == 200
        assert proc.stdout.readline().strip() == f"{GROUP}/v2 8"
    finally:
        proc.kill()
        proc.wait()
