"""Read your own writes (issue 26): a key is not reconciled again until the cache has observed
what its previous reconcile wrote.

Against the embedded API server: the duplicate-children scenario (``tests/runtime/children.py``)
over many runs, with and without the guard. Without a server: the recorder, the tracker's
rules (writes, deletes, the bound, what it cannot see) and the controller on the fake client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Hashable, Iterator
from typing import Any

import msgspec
import pytest
from prometheus_client import REGISTRY

from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Secret
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.runtime import builder, predicate
from samplecontroller.runtime import client as rtclient
from samplecontroller.runtime.cache import ByObject, Cache
from samplecontroller.runtime.cache import Options as CacheOptions
from samplecontroller.runtime.client.fake import ClientBuilder, new_manager
from samplecontroller.runtime.consistency import ObservedWrites, ReadYourWrites, Write, recording
from samplecontroller.runtime.manager import Options
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.wait import FakeClock
from tests.live import wait_for
from tests.runtime import children


def value(name: str, controller: str) -> float:
    v = REGISTRY.get_sample_value(name, {"controller": controller})
    return 0.0 if v is None else v


# -- the scenario against the embedded API server -----------------------------------------------------


@pytest.mark.parametrize("child", [ConfigMap, Secret], ids=["configmap-children", "secret-children"])
@pytest.mark.parametrize("operator", [children.AnnotateAfterCreate, children.ListThenUpdate])
def test_one_child_per_parent_over_many_runs(rest: Any, apiserver: Any, operator: type[Any], child: type[Any],
                                             request: pytest.FixtureRequest) -> None:
    from samplecontroller.kubernetes.clientset import Clientset

    for run in range(4):
        ns = f"ryow-{operator.__name__.lower()[:8]}-{child.__name__.lower()}-{run}-{int(time.time() * 1000) % 100000}"
        Clientset(rest).core_v1().namespaces().create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        out = children.run_scenario(rest, ns, operator, parents=40, bursts=3, workers=4, child=child)
        assert out.missing == 0
        assert out.duplicates == 0, f"run {run}: parents with more than one child: " \
                                    f"{ {p: n for p, n in out.children.items() if n > 1} }"
        assert set(out.children.values()) == {1}


def test_without_the_guard_the_stale_parent_gets_a_second_child(rest: Any, ns: str) -> None:
    """The defect itself (and that the switch turns the guard off): the child's ADDED event
    re-enqueues the parent before the cache has its annotation."""
    out = children.run_scenario(rest, ns, children.AnnotateAfterCreate, parents=60, bursts=3, workers=4,
                                child=Secret, read_your_writes=False)
    assert out.duplicates > 0  # typically most of the 60 (bench_ryow.py)


# -- the recorder -----------------------------------------------------------------------------


def cm(name: str, ns: str = "ns", **labels: str) -> ConfigMap:
    md = ObjectMeta(name=name, namespace=ns, labels=labels) if labels else ObjectMeta(name=name, namespace=ns)
    return ConfigMap(metadata=md, data={"a": "1"})


def test_the_client_records_each_write_inside_a_recording_only() -> None:
    c = ClientBuilder().with_scheme(SCHEME).with_objects(cm("old")).build()
    c.create(cm("outside"))
    with recording() as rec:
        a = c.create(cm("a", app="x"))
        c.create(cm("dry"), dry_run=True)
        b = c.patch(msgspec.structs.replace(a, data={"a": "2"}), rtclient.MergeFrom(a))
        old = c.get(ConfigMap, "ns", "old")
        c.delete(old)
    assert [(w.name, w.resource_version, w.deleted) for w in rec.writes] == [
        ("a", a.metadata.resource_version, False), ("a", b.metadata.resource_version, False), ("old", "", True)]
    assert rec.writes[0].labels == {"app": "x"} and rec.writes[2].uid == old.metadata.uid
    assert rec.writes[0].info.resource == "configmaps" and rec.writes[0].namespace == "ns"


# -- the tracker's rules, over a cache fed by the fake client's tracker ----------------------------


class ListQueue:
    def __init__(self) -> None:
        self.items: list[Hashable] = []
        self.lock = threading.Lock()

    def add(self, item: Hashable) -> None:
        with self.lock:
            self.items.append(item)


@pytest.fixture
def fake() -> Iterator[tuple[rtclient.Client, Cache, threading.Event]]:
    c = ClientBuilder().with_scheme(SCHEME).build()
    cache = Cache(c.client_for, CacheOptions(by_object={Secret: ByObject(label_selector="app=x")}), scheme=SCHEME)
    stop = threading.Event()
    threading.Thread(target=cache.start, args=(stop,), daemon=True).start()
    cache.get_informer(ConfigMap)
    cache.get_informer(Secret)
    assert cache.wait_for_cache_sync(timeout=10)
    yield c, cache, stop
    stop.set()


def test_a_write_holds_its_key_until_the_cache_has_it(fake: Any) -> None:
    c, cache, stop = fake
    queue = ListQueue()
    writes = ObservedWrites("ryow-unit-1", cache, 30)
    writes.start(queue, stop)
    req = Request("ns", "p")
    with writes.reconciling(req):
        created = c.create(cm("p"))
    # whether the cache has it yet or not, the key is released once it has, and only then
    if writes.hold(req):
        wait_for(lambda: queue.items == [req], what="the key released")
    assert cache.get(ConfigMap, "ns", "p").metadata.resource_version == created.metadata.resource_version
    assert not writes.hold(req) and writes.pending(req) == []


def test_held_keys_wait_independently_and_come_back_when_observed() -> None:
    """Deterministic: a hand-made informer whose events the test delivers."""
    informer = FakeInformer()
    queue = ListQueue()
    writes = ObservedWrites("ryow-unit-2", FakeCache(informer), 30, clock=FakeClock())
    stop = threading.Event()
    writes.start(queue, stop)
    a, b = Request("ns", "a"), Request("ns", "b")
    writes.expect(a, [write("a", "5"), write("child", "6")])
    writes.expect(b, [write("b", "7")])
    assert writes.hold(a) and writes.hold(b)
    informer.deliver(obj("a", "5"))
    assert writes.hold(a), "still waiting for the child"
    informer.deliver(obj("other", "6"))  # the watermark passes 6: the child's write is in the cache
    assert queue.items == [a]
    assert not writes.hold(a) and writes.hold(b)
    informer.deliver(obj("b", "9"))
    assert queue.items == [a, b] and not writes.hold(b)
    assert value("controller_runtime_read_your_writes_deferred_total", "ryow-unit-2") == 4
    stop.set()


def test_already_observed_writes_do_not_hold() -> None:
    informer = FakeInformer()
    informer.store["ns/a"] = obj("a", "9")
    writes = ObservedWrites("ryow-unit-3", FakeCache(informer), 30)
    stop = threading.Event()
    writes.start(ListQueue(), stop)
    writes.expect(Request("ns", "a"), [write("a", "8"), write("gone", "", deleted=True)])
    assert writes.pending(Request("ns", "a")) == [] and not writes.hold(Request("ns", "a"))
    writes.expect(Request("ns", "b"), [write("a", "10")])  # newer than the cache: held
    assert writes.hold(Request("ns", "b"))
    stop.set()


def test_a_delete_is_observed_when_the_object_leaves_the_cache_or_is_marked() -> None:
    informer = FakeInformer()
    informer.store["ns/x"] = obj("x", "3", uid="u1")
    informer.store["ns/y"] = obj("y", "4", uid="u2")
    queue = ListQueue()
    writes = ObservedWrites("ryow-unit-4", FakeCache(informer), 30, clock=FakeClock())
    writes.start(queue, threading.Event())
    r1, r2 = Request("ns", "r1"), Request("ns", "r2")
    writes.expect(r1, [write("x", "", deleted=True, uid="u1")])
    writes.expect(r2, [write("y", "", deleted=True, uid="u2")])
    assert writes.hold(r1) and writes.hold(r2)
    informer.deliver(obj("x", "10", uid="u1"), deleted=True)
    marked = obj("y", "11", uid="u2")
    marked["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    informer.deliver(marked)
    assert queue.items == [r1, r2]


def test_the_bound_reconciles_anyway_with_a_metric_and_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    informer = FakeInformer()
    queue = ListQueue()
    writes = ObservedWrites("ryow-unit-5", FakeCache(informer), 2.0, clock=clock)
    writes.start(queue, threading.Event())
    req = Request("ns", "slow")
    writes.expect(req, [write("slow", "50")])
    assert writes.hold(req)
    clock.step(2.5)
    wait_for(lambda: queue.items == [req], what="the key back at its deadline")
    with caplog.at_level(logging.WARNING, logger="runtime.consistency"):
        assert not writes.hold(req)
    assert value("controller_runtime_read_your_writes_timeouts_total", "ryow-unit-5") == 1
    assert [vars(r)["kv"]["not_observed"] for r in caplog.records if "did not observe" in r.getMessage()] == [
        "configmaps ns/slow (rv=50)"]


def test_what_the_cache_cannot_show_is_not_waited_for(fake: Any) -> None:
    c, cache, stop = fake
    writes = ObservedWrites("ryow-unit-6", cache, 30)
    writes.start(ListQueue(), stop)
    req = Request("ns", "p")
    with writes.reconciling(req):
        c.create(Secret(metadata=ObjectMeta(name="hidden", namespace="ns", labels={"app": "y"})))  # outside app=x
        c.create(rtclient_foo())  # no Foo informer in this cache
    assert writes.pending(req) == [] and not writes.hold(req)
    opaque = FakeInformer()
    w = ObservedWrites("ryow-unit-7", FakeCache(opaque), 30)
    w.start(ListQueue(), stop)
    w.expect(req, [write("p", "not-a-number")])
    assert w.pending(req) == [] and not w.hold(req)


def rtclient_foo() -> Any:
    from tests.runtime.objects import foo

    f = foo("f", "ns")
    return msgspec.structs.replace(f, metadata=msgspec.structs.replace(f.metadata, resource_version=msgspec.UNSET,
                                                                        uid=msgspec.UNSET))


# -- the controller on the fake client -----------------------------------------------------------


@pytest.mark.parametrize("guard", [True, False], ids=["guarded", "unguarded"])
def test_the_controller_on_the_fake_client_gives_one_child_per_parent(guard: bool) -> None:
    """The same guarantee without an API server: a Manager over the fake client's tracker, whose
    parent ConfigMaps reach the cache 50 ms late. Unguarded, most parents get a second child."""
    fake_client = ClientBuilder().with_scheme(SCHEME).with_watch_delay(0.05, ConfigMap).build()  # parents lag
    mgr = new_manager(fake_client, Options(read_your_writes=ReadYourWrites(enabled=guard)))
    counts = children.Counts()
    ctrl = (builder.controller_managed_by(mgr)
            .for_(ConfigMap, predicate.LabelSelectorPredicate(f"{children.ROLE}={children.PARENT}"))
            .owns(Secret).named("ryow-fake")
            .complete(children.AnnotateAfterCreate(mgr.get_client(), counts, Secret)))
    assert (ctrl.observed_writes is not None) == guard
    stop = threading.Event()
    t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    t.start()
    try:
        assert mgr.elected().wait(10)
        for i in range(30):
            fake_client.create(ConfigMap(metadata=ObjectMeta(name=f"p{i}", namespace="ns",
                                                             labels={children.ROLE: children.PARENT})))
            for b in range(3):  # a burst of updates by someone else
                fake_client.patch(ConfigMap(metadata=ObjectMeta(name=f"p{i}", namespace="ns"), data={"n": str(b)}),
                                  rtclient.RawPatch("application/merge-patch+json", {"data": {"n": str(b)}}))

        def marked() -> bool:
            return sum(children.DONE in (p.metadata.annotations or {}) for p in fake_client.list(ConfigMap)) == 30

        wait_for(marked, what="every parent marked")
        wait_for(lambda: all(children.DONE in (p.metadata.annotations or {})
                             for p in mgr.get_cache().list(ConfigMap)), what="the cache has every mark")
        time.sleep(0.2)
        secrets = fake_client.list(Secret)
        if guard:
            assert len(secrets) == 30, sorted(str(s.metadata.name) for s in secrets)
        else:
            assert len(secrets) > 30
    finally:
        stop.set()
        t.join(10)


def test_the_switch_turns_it_off() -> None:
    fake_client = ClientBuilder().with_scheme(SCHEME).build()
    off = new_manager(fake_client, Options(read_your_writes=ReadYourWrites(enabled=False)))
    ctrl = builder.controller_managed_by(off).for_(ConfigMap).named("ryow-off").complete(
        lambda_reconciler())
    assert ctrl.observed_writes is None
    from samplecontroller.runtime import controller

    on = builder.controller_managed_by(off).for_(ConfigMap).named("ryow-on").with_options(
        controller.Options(read_your_writes=ReadYourWrites(timeout=3))).complete(lambda_reconciler())
    assert on.observed_writes is not None and on.observed_writes.timeout == 3


def lambda_reconciler() -> Any:
    from samplecontroller.runtime.reconcile import Func

    return Func(lambda r: Result())


# -- a hand-driven informer -----------------------------------------------------------------------


def write(name: str, rv: str, *, deleted: bool = False, uid: str = "") -> Write:
    return Write(SCHEME.info_for(ConfigMap), "ns", name, uid, rv, deleted=deleted)


def obj(name: str, rv: str, uid: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "uid": uid}}


class FakeIndexer:
    def __init__(self, store: dict[str, Any]) -> None:
        self.store = store

    def get_by_key(self, key: str) -> Any:
        return self.store.get(key)


class FakeInformer:
    def __init__(self) -> None:
        self.store: dict[str, Any] = {}
        self.handlers: list[Any] = []

    def add_event_handler(self, handler: Any, resync_period: float | None = None, *, inline: bool = False) -> None:
        self.handlers.append(handler)

    def get_indexer(self) -> FakeIndexer:
        return FakeIndexer(self.store)

    def informer_for_namespace(self, namespace: str) -> FakeInformer:
        return self

    def deliver(self, o: dict[str, Any], deleted: bool = False) -> None:
        key = f"ns/{o['metadata']['name']}"
        if deleted:
            self.store.pop(key, None)
        else:
            self.store[key] = o
        for h in self.handlers:
            if deleted:
                h.on_delete(o)
            else:
                h.on_update(None, o)


class FakeCache:
    def __init__(self, informer: FakeInformer) -> None:
        self.informer = informer

    def existing_informer(self, model: type[Any]) -> FakeInformer | None:
        return self.informer if model is ConfigMap else None

    def selectors_for(self, model: type[Any]) -> tuple[str | None, str | None]:
        return None, None


class StoppedInformer(FakeInformer):
    def add_event_handler(self, handler: Any, resync_period: float | None = None, *, inline: bool = False) -> None:
        raise RuntimeError("informer ConfigMap has stopped; handler not added")


def test_a_write_to_a_type_whose_informer_has_stopped_is_not_waited_for() -> None:
    """A reconcile that ends while the manager stops: the informer that would show its first write
    of a type refuses handlers. The write is not waited for, and the reconcile does not fail."""
    writes = ObservedWrites("ryow-unit-stopped", FakeCache(StoppedInformer()), 30)
    stop = threading.Event()
    writes.start(ListQueue(), stop)
    writes.expect(Request("ns", "a"), [write("a", "5")])
    assert writes.pending(Request("ns", "a")) == [] and not writes.hold(Request("ns", "a"))
    stop.set()


# -- per key, bounded: a controller over a fake client whose Secrets reach the cache late ----------


class WritesASecret:
    """Reconciling "a" writes a Secret (which the cache sees late); "b" writes nothing."""

    def __init__(self, c: rtclient.Client) -> None:
        self.client = c
        self.calls: list[tuple[str, float, int]] = []  # (name, when, Secrets in the cache then)
        self.lock = threading.Lock()

    def reconcile(self, request: Request) -> Result:
        cached = len(self.client.list(Secret, namespace=request.namespace))
        with self.lock:
            self.calls.append((request.name, time.monotonic(), cached))
            n = sum(1 for c in self.calls if c[0] == request.name)
        if request.name == "a":
            self.client.create(Secret(metadata=ObjectMeta(name=f"a-{n}", namespace=request.namespace)))
        return Result()

    def names(self) -> list[str]:
        with self.lock:
            return [c[0] for c in self.calls]


def start_fake(delay: float, timeout: float, name: str) -> tuple[Any, WritesASecret, threading.Event]:
    fake_client = ClientBuilder().with_scheme(SCHEME).with_watch_delay(delay, Secret).build()
    mgr = new_manager(fake_client, Options(read_your_writes=ReadYourWrites(timeout=timeout)))
    rec = WritesASecret(mgr.get_client())
    builder.controller_managed_by(mgr).for_(ConfigMap).named(name).complete(rec)
    mgr.get_cache().get_informer(Secret)
    stop = threading.Event()
    threading.Thread(target=mgr.start, args=(stop,), daemon=True).start()
    assert mgr.elected().wait(10)
    for n in ("a", "b"):
        fake_client.create(cm(n))
    wait_for(lambda: sorted(rec.names()) == ["a", "b"], what="the first reconciles")
    for n in ("a", "b"):
        fake_client.patch(cm(n), rtclient.RawPatch("application/merge-patch+json", {"data": {"x": "1"}}))
    return fake_client, rec, stop


def test_only_the_key_that_wrote_waits_and_it_then_sees_its_write() -> None:
    _, rec, stop = start_fake(1.0, 30, "ryow-per-key")
    try:
        wait_for(lambda: rec.names().count("a") == 2, what="a reconciled again")
        with rec.lock:
            b2 = [c for c in rec.calls if c[0] == "b"][1]
            a2 = [c for c in rec.calls if c[0] == "a"][1]
        assert b2[1] < a2[1], "b waited for a's write"
        assert a2[2] == 1, "a was reconciled before the cache had its Secret"
        assert value("controller_runtime_read_your_writes_deferred_total", "ryow-per-key") >= 1
        assert value("controller_runtime_read_your_writes_timeouts_total", "ryow-per-key") == 0
    finally:
        stop.set()


def test_past_the_bound_the_key_is_reconciled_anyway(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="runtime.consistency")
    _, rec, stop = start_fake(2.0, 0.3, "ryow-bound")
    try:
        wait_for(lambda: rec.names().count("a") == 2, what="a reconciled again")
        with rec.lock:
            a1, a2 = [c for c in rec.calls if c[0] == "a"]
        assert a2[1] - a1[1] >= 0.25 and a2[2] == 0  # held for the bound, then run on the stale cache
        assert value("controller_runtime_read_your_writes_timeouts_total", "ryow-bound") == 1
        warnings = [vars(r)["kv"] for r in caplog.records if "did not observe" in r.getMessage()]
        assert len(warnings) == 1 and warnings[0]["not_observed"].startswith("secrets ns/a-1 (rv=")
        assert warnings[0]["request"] == "ns/a" and warnings[0]["controller"] == "ryow-bound"
    finally:
        stop.set()


def test_a_write_of_an_unstructured_kind_is_waited_for_too(fake: Any) -> None:
    """Issue 39: writes of dicts (an ``Unstructured`` kind, ResourceInfo.model ``dict``) were
    not tracked (their informer is keyed by the Unstructured, not by ``dict``), so a handler
    writing its own object ran again before the cache had that write."""
    from samplecontroller.client.unstructured import Unstructured

    _, cache, stop = fake
    key = Unstructured("v1", "ConfigMap")
    cache.get_informer(key)  # type: ignore[arg-type]
    assert cache.wait_for_cache_sync(timeout=10)
    writes = ObservedWrites("ryow-unit-unstructured", cache, 30)
    writes.start(ListQueue(), stop)
    req = Request("ns", "later")
    w = Write(key.info, "ns", "later", "", "999999999")  # a version the cache has not shown yet
    writes.expect(req, [w])
    assert writes.pending(req) == [w]
