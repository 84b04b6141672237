"""The generic fake clientset: ObjectTracker, actions and reactors, FakeResourceClient."""

from __future__ import annotations

import threading
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.client.types import (
    APPLY_PATCH,
    JSON_PATCH,
    STRATEGIC_MERGE_PATCH,
    ListOptions,
    ResourceInfo,
    WatchEvent,
)
from samplecontroller.testing import (
    Action,
    FakeClientsetBase,
    FakeResourceClient,
    FakeWatcher,
    GroupVersionResource,
    ObjectTracker,
)

UNSET = msgspec.UNSET


class Meta(msgspec.Struct, frozen=True, kw_only=True):
    name: str | msgspec.UnsetType = UNSET
    namespace: str | msgspec.UnsetType = UNSET
    uid: str | msgspec.UnsetType = UNSET
    resource_version: str | msgspec.UnsetType = msgspec.field(name="resourceVersion", default=UNSET)
    generation: int | msgspec.UnsetType = UNSET
    labels: dict[str, str] | msgspec.UnsetType = UNSET


class ListMeta(msgspec.Struct, frozen=True, kw_only=True):
    resource_version: str | msgspec.UnsetType = msgspec.field(name="resourceVersion", default=UNSET)


class Spec(msgspec.Struct, frozen=True, kw_only=True):
    replicas: int | msgspec.UnsetType = UNSET


class Status(msgspec.Struct, frozen=True, kw_only=True):
    ready: int | msgspec.UnsetType = UNSET


class Gizmo(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default="example.com/v1")
    kind: str = "Gizmo"
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: Spec | msgspec.UnsetType = UNSET
    status: Status | msgspec.UnsetType = UNSET


class GizmoList(msgspec.Struct, frozen=True, kw_only=True):
    api_version: str = msgspec.field(name="apiVersion", default="example.com/v1")
    kind: str = "GizmoList"
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: tuple[Gizmo, ...] = ()


GIZMOS: ResourceInfo[Gizmo] = ResourceInfo(
    group="example.com", version="v1", resource="gizmos", kind="Gizmo", namespaced=True, model=Gizmo,
    list_model=GizmoList, list_kind="GizmoList", subresources=("status",))
CONFIGMAPS: ResourceInfo[dict[str, Any]] = ResourceInfo(
    group="", version="v1", resource="configmaps", kind="ConfigMap", namespaced=True, model=dict,
    list_model=dict, list_kind="ConfigMapList", strategic_merge=True)
GVR = GroupVersionResource("example.com", "v1", "gizmos")


def gizmo(name: str, ns: str = "default", replicas: int = 1, **labels: str) -> Gizmo:
    return Gizmo(metadata=Meta(name=name, namespace=ns, labels=labels or UNSET), spec=Spec(replicas=replicas))


@pytest.fixture
def fake() -> FakeClientsetBase:
    return FakeClientsetBase()


def gizmos(fake: FakeClientsetBase, ns: str | None = "default") -> FakeResourceClient[Gizmo, GizmoList]:
    return FakeResourceClient(fake, GIZMOS, ns)


# -- tracker -------------------------------------------------------------------------------------------


def test_create_sets_server_fields_and_rejects_duplicates(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    a = c.create(gizmo("a"))
    b = c.create(gizmo("b"))
    assert isinstance(a, Gizmo) and a.metadata.uid and a.metadata.generation == 1
    assert (a.metadata.resource_version, b.metadata.resource_version) == ("1", "2")
    assert a.metadata.namespace == "default"
    with pytest.raises(errors.AlreadyExistsError):
        c.create(gizmo("a"))
    with pytest.raises(errors.NotFoundError):
        c.get("zzz")
    with pytest.raises(errors.InvalidError):
        c.create(Gizmo())
    named = fake.tracker.create(GVR, {"metadata": {"generateName": "g-"}}, "default")
    assert named["metadata"]["name"].startswith("g-") and len(named["metadata"]["name"]) == 7


def test_update_conflicts_and_generation(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    a = c.create(gizmo("a"))
    a2 = c.update(msgspec.structs.replace(a, spec=Spec(replicas=2)))
    assert a2.metadata.generation == 2 and a2.metadata.uid == a.metadata.uid
    with pytest.raises(errors.ConflictError):
        c.update(msgspec.structs.replace(a, spec=Spec(replicas=3)))
    a3 = c.update(msgspec.structs.replace(a2, metadata=msgspec.structs.replace(a2.metadata, labels={"x": "y"})))
    assert a3.metadata.generation == 2, "metadata-only changes keep the generation"
    with pytest.raises(errors.NotFoundError):
        c.update(gizmo("missing"))


def test_status_subresource_semantics(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    created = c.create(msgspec.structs.replace(gizmo("a"), status=Status(ready=9)))
    assert created.status is UNSET, "create ignores .status when the status subresource is on"
    st = c.update_status(msgspec.structs.replace(created, spec=Spec(replicas=50), status=Status(ready=1)))
    assert st.status == Status(ready=1) and st.spec == Spec(replicas=1) and st.metadata.generation == 1
    up = c.update(msgspec.structs.replace(st, spec=Spec(replicas=2), status=Status(ready=7)))
    assert up.status == Status(ready=1) and up.spec == Spec(replicas=2)


def test_list_filters_by_namespace_and_selectors(fake: FakeClientsetBase) -> None:
    gizmos(fake).create(gizmo("a", app="web"))
    gizmos(fake).create(gizmo("b", app="db"))
    gizmos(fake, "other").create(gizmo("c", ns="other", app="web"))
    with pytest.raises(errors.BadRequestError, match="does not match"):
        gizmos(fake, "other").create(gizmo("d", ns="default"))
    everywhere = gizmos(fake, None)
    assert [g.metadata.name for g in everywhere.list().items] == ["a", "b", "c"]
    assert [g.metadata.name for g in everywhere.list(label_selector="app=web").items] == ["a", "c"]
    assert [g.metadata.name for g in gizmos(fake).list(label_selector="app=web").items] == ["a"]
    assert [g.metadata.name for g in everywhere.list(field_selector="metadata.namespace=other").items] == ["c"]
    assert [g.metadata.name for g in everywhere.list(field_selector="spec.replicas!=1").items] == []
    lst = gizmos(fake).list()
    assert isinstance(lst, GizmoList) and lst.metadata.resource_version == "3"
    with pytest.raises(ValueError, match="selector"):
        everywhere.list(label_selector="a in b")


def test_delete_and_delete_collection(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        c.create(gizmo(name, app=app))
    c.delete("a")
    with pytest.raises(errors.NotFoundError):
        c.delete("a")
    c.delete_collection(label_selector="app=x")
    assert [g.metadata.name for g in c.list().items] == ["c"]
    assert [a.verb for a in fake.actions()][-4:] == ["delete", "delete", "delete-collection", "list"]


# -- watch --------------------------------------------------------------------------------------------


def drain(w: Any, n: int, timeout: float = 30.0) -> list[WatchEvent[Any]]:
    """Collect n events in a thread (bounded), then stop the watch."""
    out: list[WatchEvent[Any]] = []
    done = threading.Event()

    def run() -> None:
        for ev in w:
            out.append(ev)
            if len(out) == n:
                break
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(timeout), f"got {len(out)} of {n} events"
    w.stop()
    return out


def name_of(event: WatchEvent[Any]) -> str:
    """The name of the event's object (AssertionError for an ERROR event, which has none)."""
    assert event.object is not None, event
    return str(event.object.metadata.name)


def test_watch_fan_out_with_selectors(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    every = gizmos(fake, None).watch()
    web_only = c.watch(label_selector="app=web")
    a = c.create(gizmo("a", app="web"))
    c.create(gizmo("b", app="db"))
    c.update(msgspec.structs.replace(a, spec=Spec(replicas=4)))
    c.delete("a")
    evs = drain(every, 4)
    assert [(e.type, name_of(e)) for e in evs] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert all(isinstance(e.object, Gizmo) for e in evs)
    assert [e.type for e in drain(web_only, 3)] == ["ADDED", "MODIFIED", "DELETED"]


def test_watch_stop_from_another_thread_ends_iteration(fake: FakeClientsetBase) -> None:
    w = gizmos(fake).watch()
    done = threading.Event()

    def run() -> None:
        for _ in w:
            pass
        done.set()

    threading.Thread(target=run, daemon=True).start()
    w.stop()
    assert done.wait(30)
    gizmos(fake).create(gizmo("late"))  # a stopped watch gets nothing and blocks nobody


def test_list_then_watch_from_its_version_misses_nothing(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    c.create(gizmo("a"))
    lw = c.lister_watcher()
    page = lw.list(ListOptions())
    assert [g.metadata.name for g in page.items] == ["a"] and page.resource_version == "1"
    c.create(gizmo("between"))  # after the list, before the watch
    w = lw.watch(ListOptions(resource_version=page.resource_version))
    c.create(gizmo("after"))
    assert [name_of(e) for e in drain(w, 2)] == ["between", "after"]
    assert fake.actions()[-2].options == {"resource_version": "1"}


def test_watch_from_a_compacted_version_is_expired() -> None:
    fake = FakeClientsetBase(ObjectTracker(history=2))
    c = gizmos(fake)
    for name in "abcd":
        c.create(gizmo(name))
    (ev,) = drain(c.watch(resource_version="1"), 1)
    assert ev.type == "ERROR" and ev.object is None and ev.status is not None
    assert ev.status["code"] == 410 and ev.status["reason"] == "Expired"
    replayed = drain(c.watch(resource_version="2"), 2)
    assert [name_of(e) for e in replayed] == ["c", "d"]


# -- actions and reactors ------------------------------------------------------------------------------


def test_actions_are_recorded(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    obj = gizmo("a")
    c.create(obj)
    c.get("a")
    c.list(label_selector="x=y", field_selector="metadata.name=a")
    c.patch("a", {"spec": {"replicas": 3}})
    acts = fake.actions()
    assert [a.get_verb() for a in acts] == ["create", "get", "list", "patch"]
    assert acts[0].object is obj and acts[0].namespace == "default" and acts[0].resource == GVR
    assert acts[1].name == "a" and acts[1].matches("get", "gizmos") and acts[1].matches("*", "*")
    assert not acts[1].matches("list", "gizmos") and not acts[1].matches("get", "pods")
    assert (acts[1].get_namespace(), acts[1].get_name(), acts[1].get_resource()) == ("default", "a", GVR)
    assert acts[0].get_object() is obj and acts[3].get_patch() == acts[3].patch
    assert (acts[2].label_selector, acts[2].field_selector) == ("x=y", "metadata.name=a")
    assert acts[3].patch == b'{"spec":{"replicas":3}}' and acts[3].patch_type == "application/merge-patch+json"
    fake.clear_actions()
    assert fake.actions() == []


def test_reactors_run_in_order_and_can_fall_through(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    seen: list[str] = []

    def observe(action: Action) -> tuple[bool, Any, BaseException | None]:
        seen.append(action.verb)
        return False, None, None

    boom = errors.new_conflict("example.com", "gizmos", "a", "injected")
    fake.add_reactor("*", "*", observe)
    fake.prepend_reactor("create", "gizmos", lambda a: (True, None, boom))
    with pytest.raises(errors.ConflictError, match="injected"):
        c.create(gizmo("a"))
    assert seen == [], "the first handling reactor wins"
    with pytest.raises(errors.NotFoundError):
        c.get("a")  # observe falls through to the tracker
    assert seen == ["get"]
    fake.prepend_reactor("get", "*", lambda a: (True, {"metadata": {"name": a.name}, "spec": {"replicas": 42}}, None))
    got = c.get("anything")
    assert isinstance(got, Gizmo) and got.spec == Spec(replicas=42) and got.kind == "Gizmo"
    fake.prepend_reactor("get", "other-things", lambda a: (True, None, RuntimeError("not for gizmos")))
    assert c.get("x").spec == Spec(replicas=42)


def test_watch_reactor_with_a_hand_driven_watcher(fake: FakeClientsetBase) -> None:
    watcher = FakeWatcher()
    fake.prepend_watch_reactor("gizmos", lambda a: (True, watcher, None))
    w = gizmos(fake).watch()
    watcher.add(gizmo("a"))
    watcher.modify({"metadata": {"name": "a"}, "spec": {"replicas": 2}})
    watcher.error(errors.new_status(410, "Expired", "gone"))
    evs = drain(w, 3)
    assert [e.type for e in evs] == ["ADDED", "MODIFIED", "ERROR"]
    assert evs[1].object is not None and evs[2].status is not None
    assert evs[1].object.spec == Spec(replicas=2) and evs[2].status["code"] == 410
    assert watcher.is_stopped
    watcher.add(gizmo("dropped"))  # no error after stop


# -- patch and apply -----------------------------------------------------------------------------------


def test_merge_and_json_patches(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    c.create(gizmo("a", app="web"))
    merged = c.patch("a", {"metadata": {"labels": {"app": None, "tier": "x"}}, "spec": {"replicas": 5}})
    assert merged.metadata.labels == {"tier": "x"} and merged.spec == Spec(replicas=5)
    assert merged.metadata.generation == 2
    jp = c.patch("a", [{"op": "replace", "path": "/spec/replicas", "value": 6}], JSON_PATCH)
    assert jp.spec == Spec(replicas=6)
    with pytest.raises(errors.InvalidError, match="invalid patch"):
        c.patch("a", [{"op": "test", "path": "/spec/replicas", "value": 1}], JSON_PATCH)
    with pytest.raises(errors.BadRequestError):
        c.patch("a", b"{not json")
    with pytest.raises(errors.NotFoundError):
        c.patch("missing", {"spec": {}})
    with pytest.raises(errors.UnsupportedMediaTypeError):
        c.patch("a", {"spec": {}}, STRATEGIC_MERGE_PATCH)
    with pytest.raises(errors.ConflictError):
        c.patch("a", {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 0}})


def test_patch_status_subresource(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    c.create(gizmo("a"))
    out = c.patch("a", {"status": {"ready": 3}, "spec": {"replicas": 99}}, subresource="status")
    assert out.status == Status(ready=3) and out.spec == Spec(replicas=1)


def test_strategic_merge_patch_on_a_built_in(fake: FakeClientsetBase) -> None:
    cms: FakeResourceClient[dict[str, Any], dict[str, Any]] = FakeResourceClient(fake, CONFIGMAPS, "default")
    cms.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}})
    out = cms.patch("cm", {"data": {"a": None, "c": "3"}}, STRATEGIC_MERGE_PATCH)
    assert out["data"] == {"b": "2", "c": "3"}
    assert isinstance(cms.list(), dict) and cms.list()["kind"] == "ConfigMapList"


def test_apply_creates_then_merges(fake: FakeClientsetBase) -> None:
    c = gizmos(fake)
    created = c.apply(gizmo("a", replicas=2), field_manager="me")
    assert created.metadata.resource_version == "1" and created.spec == Spec(replicas=2)
    again = c.apply(gizmo("a", replicas=3), field_manager="me", force=True)
    assert again.spec == Spec(replicas=3)
    applied = c.apply_status({"metadata": {"name": "a"}, "status": {"ready": 1}}, field_manager="me")
    assert applied.status == Status(ready=1)
    assert fake.actions()[0].patch_type == APPLY_PATCH
    with pytest.raises(ValueError, match="field_manager"):
        c.apply(gizmo("a"), field_manager="")


def test_cluster_scoped_resources_ignore_the_namespace(fake: FakeClientsetBase) -> None:
    info: ResourceInfo[dict[str, Any]] = ResourceInfo(
        group="", version="v1", resource="namespaces", kind="Namespace", namespaced=False, model=dict,
        list_model=dict)
    ns: FakeResourceClient[dict[str, Any], dict[str, Any]] = FakeResourceClient(fake, info, "ignored")
    ns.create({"metadata": {"name": "team-a"}})
    assert ns.get("team-a")["metadata"].get("namespace") is None
    assert fake.actions()[0].namespace == ""
