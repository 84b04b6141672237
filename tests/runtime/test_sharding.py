"""Sharding (issue 42 item 1): the ring, shard Lease states, and a chaos test of sharded
sample-controller replicas on the embedded API server (runtime sync ones, a classic client-go
style one, and an async one added): one killed and one added while Foos are created; no Foo reconciled by two replicas at once, none left unassigned or unreconciled."""

from __future__ import annotations

import datetime
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from prometheus_client import REGISTRY

from generated.apis.samplecontroller.v1alpha1 import Foo
from generated.clientset import Clientset
from samplecontroller.foo_reconciler import FooReconciler, new_manager, setup_foo_controller
from samplecontroller.foo_reconciler_async import AsyncFooReconciler
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.runtime.sharding import default_identity, drain_label, shard_label, validate_ring_name
from samplecontroller.runtime.sharding.ring import Ring
from samplecontroller.runtime.sharding.sharder import lease_state
from tests.live import wait_for
from tests.runtime.test_integration import new_foo

RING = "chaos"


def test_the_ring_moves_only_the_keys_of_a_shard_added_or_removed() -> None:
    keys = [f"samplecontroller.k8s.io/Foo/ns/foo-{i}" for i in range(3000)]
    three = Ring(["a", "b", "c"])
    before = {k: three.owner(k) for k in keys}
    assert set(Counter(before.values())) == {"a", "b", "c"}
    assert min(Counter(before.values()).values()) > 600  # roughly even
    four = Ring(["a", "b", "c", "d"])
    moved = [k for k in keys if four.owner(k) != before[k]]
    assert all(four.owner(k) == "d" for k in moved)  # only to the new shard
    assert 0.15 < len(moved) / len(keys) < 0.35
    two = Ring(["a", "c"])
    assert all(two.owner(k) == before[k] for k in keys if before[k] != "b")  # only b's keys move
    assert Ring([]).owner("x") == ""
    assert Ring(["b", "a", "c"]).owner(keys[0]) == three.owner(keys[0])  # same in every process


def test_lease_states() -> None:
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    def lease(holder: str, renewed: float) -> dict[str, Any]:
        stamp = (now - datetime.timedelta(seconds=renewed)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {"metadata": {"name": "r1"}, "spec": {"holderIdentity": holder, "renewTime": stamp,
                                                      "leaseDurationSeconds": 15}}

    assert lease_state(lease("r1", 1), now) == "ready"
    assert lease_state(lease("r1", 16), now) == "expired"
    assert lease_state(lease("", 1), now) == "dead"  # released
    assert lease_state(lease("chaos-sharder-x", 1), now) == "dead"  # taken over


def test_names_and_identities() -> None:
    assert shard_label("ring") == "shard.alpha.sharding.timebertt.dev/ring"
    assert drain_label("ring") == "drain.alpha.sharding.timebertt.dev/ring"
    a, b = default_identity(), default_identity()
    assert a != b and a.rsplit("-", 1)[0] == b.rsplit("-", 1)[0]
    for bad in ("", "Upper", "x" * 64, "a_b"):
        with pytest.raises(ValueError, match="DNS label"):
            validate_ring_name(bad)


def test_sharding_refuses_leader_election_too_and_a_bad_identity(rest: Any) -> None:
    with pytest.raises(ValueError, match="exclude each other"):
        new_manager(rest, resync=3600, shard_ring=RING, leader_election=True, leader_election_id="x")
    with pytest.raises(ValueError, match="shard identity 'Pod_1' must be a DNS label"):
        new_manager(rest, resync=3600, shard_ring=RING, shard_identity="Pod_1")
    with pytest.raises(ValueError, match="shard_webhook needs shard_ring"):
        new_manager(rest, resync=3600, shard_webhook=True)
    with pytest.raises(ValueError, match="shard_webhook_client_config is set but shard_webhook is not"):
        new_manager(rest, resync=3600, shard_ring=RING, shard_webhook_client_config={"url": "https://x"})
    with pytest.raises(ValueError, match="shard_webhook_client_config needs a service or a url"):
        new_manager(rest, resync=3600, shard_ring=RING, shard_webhook=True, shard_webhook_client_config={})
    from samplecontroller.runtime.builder import controller_managed_by

    mgr = new_manager(rest, resync=3600, shard_ring=RING)
    with pytest.raises(ValueError, match="sharding partitions typed kinds only"):
        controller_managed_by(mgr).for_(Foo, only_metadata=True).complete(FooReconciler(mgr.get_client(),
                                                                                        FakeRecorder(1)))


class Recorder:
    """Who reconciles which Foo right now, across replicas; every overlap is a violation."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders: dict[Request, set[str]] = {}
        self.overlaps: list[tuple[Request, set[str]]] = []
        self.reconciles: Counter[str] = Counter()


class Recording:
    def __init__(self, inner: FooReconciler, name: str, recorder: Recorder) -> None:
        self.inner = inner
        self.name = name
        self.recorder = recorder

    def enter(self, request: Request) -> None:
        rec = self.recorder
        with rec.lock:
            holders = rec.holders.setdefault(request, set())
            if holders:
                rec.overlaps.append((request, {*holders, self.name}))
            holders.add(self.name)
            rec.reconciles[self.name] += 1

    def leave(self, request: Request) -> None:
        with self.recorder.lock:
            self.recorder.holders[request].discard(self.name)

    def reconcile(self, request: Request) -> Result:
        self.enter(request)
        try:
            return self.inner.reconcile(request)
        finally:
            self.leave(request)


class AsyncRecording(Recording):
    def __init__(self, inner: AsyncFooReconciler, name: str, recorder: Recorder) -> None:
        self.async_inner = inner
        self.name = name
        self.recorder = recorder

    async def reconcile(self, request: Request) -> Result:  # type: ignore[override]
        self.enter(request)
        try:
            return await self.async_inner.reconcile(request)
        finally:
            self.leave(request)


class ClassicReplica:
    """main.py --controller classic --shard-ring: the client-go style controller on its shard."""

    def __init__(self, rest: Any, ns: str, name: str) -> None:
        import argparse

        from samplecontroller import app

        args = argparse.Namespace(shard_ring=RING, leader_election_namespace=ns, namespace=ns, resync=3600.0,
                                  workers=2, shutdown_timeout=5.0, leader_election_id="unused")
        self.name = name
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=app._run_with_leader_election, args=(args, rest, self.stop, lambda ready: None),
            kwargs={"shard": app._classic_shard(args, name)}, daemon=True, name=f"replica-{name}")
        self.thread.start()

    def kill(self) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


class Replica:
    def __init__(self, rest: Any, ns: str, name: str, recorder: Recorder, *, style: str = "sync") -> None:
        self.name = name
        self.mgr: Manager = new_manager(
            rest, resync=3600, namespace=ns, shard_ring=RING, shard_identity=name, leader_election_namespace=ns,
            lease_duration=3.0, renew_deadline=2.5, retry_period=0.25, shutdown_timeout=5.0)
        self.mgr.sharder.poll_period = 0.25
        if style == "async":
            ainner = AsyncFooReconciler(self.mgr.get_async_client(), FakeRecorder(10_000))
            setup_foo_controller(self.mgr, AsyncRecording(ainner, name, recorder), 2, own_writes=ainner.own_writes)
        else:
            inner = FooReconciler(self.mgr.get_client(), FakeRecorder(10_000))
            setup_foo_controller(self.mgr, Recording(inner, name, recorder), 2, own_writes=inner.own_writes)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.mgr.start, args=(self.stop,), daemon=True, name=f"replica-{name}")
        self.thread.start()

    def kill(self) -> None:
        """Stop at once without releasing the shard Lease (it expires, as a SIGKILLed process's)."""
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def test_chaos_kill_one_replica_add_one_while_foos_are_created(rest: Any, ns: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from samplecontroller.controller import Controller as ClassicController

    foos = Clientset(rest).samplecontroller_v1alpha1().foos(ns)
    deployments = KubeClientset(rest).apps_v1().deployments(ns)
    recorder = Recorder()
    classic_sync = ClassicController.sync_handler

    def recorded_sync(self: ClassicController, key: Any) -> None:  # the classic replica's reconciles
        recording = Recording(None, "r2", recorder)  # type: ignore[arg-type]
        request = Request(key.namespace, key.name)
        recording.enter(request)
        try:
            classic_sync(self, key)
        finally:
            recording.leave(request)

    monkeypatch.setattr(ClassicController, "sync_handler", recorded_sync)
    drains_before = REGISTRY.get_sample_value("controller_sharding_drains_total", {"ring": RING}) or 0.0
    replicas: dict[str, Any] = {n: Replica(rest, ns, n, recorder) for n in ("r0", "r1")}
    replicas["r2"] = ClassicReplica(rest, ns, "r2")  # the three styles in one ring
    everyone = [r for r in replicas.values() if isinstance(r, Replica)]
    try:
        for i in range(24):
            foos.create(new_foo(ns, f"foo-{i}", f"dep-{i}"))
        wait_for(lambda: all(r.mgr.elected().is_set() for r in everyone), timeout=20)
        label, drain = shard_label(RING), drain_label(RING)

        def converged(live: set[str], n: int) -> bool:
            """n Foos, each on a live shard (every one of them holding some), none draining, each
            with its Deployment on the same shard."""
            items: list[Foo] = list(foos.list().items)
            deps = {d.metadata.name: d for d in deployments.list().items}
            if len(items) != n or len(deps) != n:
                return False
            shards = set()
            for f in items:
                labels = dict(f.metadata.labels or {})
                if labels.get(label) not in live or drain in labels:
                    return False
                shards.add(labels[label])
                dep = deps[str(f.metadata.name).replace("foo-", "dep-")]
                if dict(dep.metadata.labels or {}).get(label) != labels[label]:  # owned objects follow
                    return False
            return shards == live

        wait_for(lambda: converged({"r0", "r1", "r2"}, 24), timeout=30, what="24 Foos on r0, r1, r2")
        assert set(recorder.reconciles) == {"r0", "r1", "r2"}
        replicas.pop("r0").kill()
        for i in range(24, 36):
            foos.create(new_foo(ns, f"foo-{i}", f"dep-{i}"))
        replicas["r3"] = Replica(rest, ns, "r3", recorder, style="async")  # the styles mix in one ring
        everyone.append(replicas["r3"])
        live = set(replicas)
        wait_for(lambda: converged(live, 36), timeout=60, what="every Foo and Deployment on a live shard")
        by_shard = Counter(dict(f.metadata.labels or {})[label] for f in foos.list().items)
        assert set(by_shard) == live, by_shard
        assert recorder.reconciles["r3"] > 0
        drains = REGISTRY.get_sample_value("controller_sharding_drains_total", {"ring": RING}) or 0.0
        assert drains > drains_before  # r3's share came from live shards by drains
        assert recorder.overlaps == []
    finally:
        for r in replicas.values():
            r.kill()


@pytest.mark.parametrize(("flags", "message"), [
    (["--shard-ring", "ring", "--controller", "runtime", "--leader-elect"], "exclude each other"),
    (["--shard-ring", "Ring", "--controller", "async"], "must be a DNS label"),
])
def test_main_refuses_shard_ring_misuse_in_one_line(flags: list[str], message: str) -> None:
    import argparse

    from samplecontroller import app

    args = argparse.Namespace(controller="classic", leader_elect=False, shard_ring="")
    for flag, value in zip(flags[0::2], flags[1::2], strict=False):
        setattr(args, flag.lstrip("-").replace("-", "_"), value)
    args.leader_elect = "--leader-elect" in flags
    with pytest.raises(app.UserError, match=message):
        app._check_sharding(args)


def test_a_dead_lease_is_orphaned_a_minute_after_it_expired() -> None:
    from samplecontroller.runtime.sharding.sharder import _orphaned

    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    def lease(renewed: float) -> dict[str, Any]:
        stamp = (now - datetime.timedelta(seconds=renewed)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {"metadata": {"name": "r1"}, "spec": {"holderIdentity": "", "renewTime": stamp,
                                                      "leaseDurationSeconds": 15}}

    assert not _orphaned(lease(70), now)
    assert _orphaned(lease(76), now)
    assert not _orphaned({"metadata": {"name": "r1"}, "spec": {}}, now)


def test_the_wrapper_reconciles_only_its_objects_and_acknowledges_a_drain() -> None:
    """The anchor's shard reconciler: not assigned here, not reconciled; drain label: both labels
    removed (guarded by the resourceVersion), not reconciled; deleted: not reconciled."""
    from samplecontroller.foo_reconciler import SCHEME
    from samplecontroller.runtime.client.fake import ClientBuilder
    from samplecontroller.runtime.sharding.shard import Shard, ShardedReconciler
    from tests.runtime.objects import foo

    label, drain = shard_label(RING), drain_label(RING)
    client = ClientBuilder().with_scheme(SCHEME).with_objects(
        foo("mine", labels={label: "me"}), foo("other", labels={label: "you"}),
        foo("draining", labels={label: "me", drain: "true", "keep": "x"})).build()
    called: list[str] = []

    class Inner:
        def reconcile(self, request: Request) -> Result:
            called.append(request.name)
            return Result(requeue_after=7)

    wrapper = ShardedReconciler(Inner(), Shard(RING, "me", "ns", SCHEME), Foo, client)
    assert wrapper.reconcile(Request("ns", "mine")) == Result(requeue_after=7)
    assert wrapper.reconcile(Request("ns", "other")) == Result()
    assert wrapper.reconcile(Request("ns", "gone")) == Result()
    assert wrapper.reconcile(Request("ns", "draining")) == Result()
    assert called == ["mine"]
    assert dict(client.get(Foo, "ns", "draining").metadata.labels or {}) == {"keep": "x"}


def test_a_warm_standby_takes_over_without_listing_again(apiserver: Any, ns: str) -> None:
    """Item 2: a leader-elected standby keeps its informers synced (the Manager starts its cache
    before the election); once it leads, its controller reconciles every Foo from that cache,
    without a new LIST of Foos."""
    from samplecontroller.rest import load_rest_client
    from samplecontroller.runtime.builder import controller_managed_by

    def new(name: str) -> tuple[Manager, list[str], list[str], threading.Event]:
        rest = load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))
        lists: list[str] = []
        plain = rest.request

        def request(method: str, path: str, **kw: Any) -> bytes:
            if method == "GET" and path.endswith("/foos"):
                lists.append(path)
            return plain(method, path, **kw)

        rest.request = request  # type: ignore[method-assign]
        mgr = new_manager(rest, resync=3600, namespace=ns, leader_election=True, leader_election_id="warm",
                          leader_election_namespace=ns, leader_election_release_on_cancel=True,
                          lease_duration=2.0, renew_deadline=1.5, retry_period=0.1)
        seen: list[str] = []

        class Record:
            def reconcile(self, request: Request) -> Result:
                seen.append(request.name)
                return Result()

        controller_managed_by(mgr).for_(Foo).named(f"warm-{name}").complete(Record())
        stop = threading.Event()
        threading.Thread(target=mgr.start, args=(stop,), daemon=True, name=f"warm-{name}").start()
        return mgr, seen, lists, stop

    foos = Clientset(load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))).samplecontroller_v1alpha1().foos(ns)
    for i in range(5):
        foos.create(new_foo(ns, f"warm-{i}", f"warm-{i}"))
    leader, leader_seen, _, leader_stop = new("leader")
    assert leader.elected().wait(10)  # before the standby starts: it cannot win the Lease
    standby, standby_seen, standby_lists, standby_stop = new("standby")
    try:
        wait_for(lambda: len(set(leader_seen)) == 5, what="the leader's reconciles")
        assert standby.cache.wait_for_cache_sync(timeout=10)  # warm while it waits
        assert not standby.elected().is_set() and standby_seen == []
        listed = len(standby_lists)
        assert listed >= 1
        leader_stop.set()
        assert standby.elected().wait(10)
        wait_for(lambda: len(set(standby_seen)) == 5, what="the standby's reconciles")
        assert len(standby_lists) == listed  # reconciled from its warm cache: no LIST of Foos again
    finally:
        leader_stop.set()
        standby_stop.set()


def test_the_sharder_webhook_assigns_on_create_and_a_create_survives_the_sharder_down(
        rest: Any, ns: str, tmp_path: Any) -> None:
    """Assignment on create (the anchor's sharder webhook): a Foo created while the sharder leads
    comes back from its create already labelled (no label PATCH by the sharder); with the sharder
    down (its server gone, the configuration left), the create still succeeds unassigned
    (``failurePolicy: Ignore``, as the anchor) and the next sharder's controller path assigns it."""
    from samplecontroller.runtime.sharding import webhook
    from samplecontroller.runtime.webhook import write_self_signed

    cert_dir = tmp_path / "certs"
    (cert_dir / webhook.CA_NAME).parent.mkdir()
    (cert_dir / webhook.CA_NAME).write_bytes(write_self_signed(cert_dir, ("127.0.0.1",)))
    foos = Clientset(rest).samplecontroller_v1alpha1().foos(ns)
    ring = "hook"
    label = shard_label(ring)

    def replica(name: str) -> tuple[Manager, threading.Event]:
        mgr = new_manager(rest, resync=3600, namespace=ns, shard_ring=ring, shard_identity=name,
                          leader_election_namespace=ns, leader_election_release_on_cancel=True,
                          lease_duration=3.0, renew_deadline=2.5, retry_period=0.25, shutdown_timeout=5.0,
                          shard_webhook=True, webhook_host="127.0.0.1", webhook_port=0,
                          webhook_cert_dir=str(cert_dir))
        mgr.sharder.poll_period = 0.25
        inner = FooReconciler(mgr.get_client(), FakeRecorder(100))
        setup_foo_controller(mgr, inner, 1, own_writes=inner.own_writes)
        stop = threading.Event()
        thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True, name=f"hook-{name}")
        thread.start()
        return mgr, stop

    first, stop_first = replica("w0")
    try:
        assert first.sharder.webhook_installed.wait(15)
        # the path is live once a create comes back labelled: the configuration is applied before
        # the webhook server answers (its call then fails, and Ignore admits the Foo unassigned)
        probes = iter(range(1000))
        def probe() -> bool:
            name = f"probe-{next(probes)}"
            return dict(foos.create(new_foo(ns, name, name)).metadata.labels or {}).get(label) == "w0"

        wait_for(probe, timeout=15, what="a create assigned by the webhook")
        wait_for(lambda: all(label in (f.metadata.labels or {}) for f in foos.list().items),
                 timeout=15, what="every probe assigned (the missed ones by the controller path)")
        moves, assigned = first.sharder.moves, first.shard_webhook.assigned
        created = foos.create(new_foo(ns, "hooked", "hooked"))
        assert dict(created.metadata.labels or {}).get(label) == "w0"  # assigned in the create itself
        assert first.shard_webhook.assigned == assigned + 1
        wait_for(lambda: KubeClientset(rest).apps_v1().deployments(ns).get("hooked") is not None, timeout=15)
        assert first.sharder.moves == moves  # no label PATCH by the controller path
    finally:
        stop_first.set()
    wait_for(lambda: not first.sharder.leading.is_set(), timeout=10)
    unassigned = foos.create(new_foo(ns, "missed", "missed"))  # the configuration points at a closed port
    assert label not in dict(unassigned.metadata.labels or {})
    second, stop_second = replica("w1")
    try:
        wait_for(lambda: dict(foos.get("missed").metadata.labels or {}).get(label) == "w1", timeout=15,
                 what="the controller path assigning what the webhook missed")
        assert second.shard_webhook.assigned == 0
    finally:
        stop_second.set()
        wait_for(lambda: not second.sharder.leading.is_set(), timeout=10)
        rest.request("DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"
                     + webhook.configuration_name(ring))  # the server is shared by the module's tests


def test_the_sharder_webhook_configuration_and_answers() -> None:
    """The configuration (as the anchor's: unassigned objects only, Ignore, 5 s, CREATE and
    UPDATE of the main and owned kinds) and the handler's answers, without a server."""
    import base64
    import json

    from samplecontroller.foo_reconciler import SCHEME
    from samplecontroller.kubernetes.apis.apps.v1 import Deployment
    from samplecontroller.runtime.sharding import webhook
    from samplecontroller.runtime.sharding.shard import Shard
    from samplecontroller.runtime.sharding.sharder import Sharder as RealSharder

    shard = Shard("r", "a", "ns", SCHEME)
    shard.register(Foo)
    shard.register(Deployment, Foo)

    class Sharder:
        leading = threading.Event()
        ring = Ring(["a"])
        poll_period = 1.0
        key_owner = staticmethod(RealSharder.key_owner)

    Sharder.shard = shard  # type: ignore[attr-defined]
    Sharder.leading.set()
    config = webhook.configuration("r", list(shard.partitions.values()), {"url": "https://x/webhooks/sharder/r"})
    hook = config["webhooks"][0]
    assert (config["metadata"]["name"], hook["failurePolicy"], hook["timeoutSeconds"]) == ("sharder-r", "Ignore", 5)
    assert hook["objectSelector"] == {"matchExpressions": [{"key": shard_label("r"), "operator": "DoesNotExist"}]}
    assert "namespaceSelector" not in hook
    only = webhook.configuration("r", list(shard.partitions.values()), {"url": "u"}, ("b", "a"))["webhooks"][0]
    assert only["namespaceSelector"] == {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                                                               "operator": "In", "values": ["a", "b"]}]}
    assert [(r["apiGroups"], r["resources"], r["operations"]) for r in hook["rules"]] == [
        (["samplecontroller.k8s.io"], ["foos"], ["CREATE", "UPDATE"]), (["apps"], ["deployments"], ["CREATE", "UPDATE"])]
    nowhere = Path("/nonexistent")
    service = {"service": {"name": "s", "namespace": "n", "path": "/base/"}}
    assert webhook.client_config("r", service, "", 0, nowhere)["service"]["path"] == "/base/webhooks/sharder/r"
    with pytest.raises(ValueError, match=r"needs the CA of the webhook server.s certificate in /nonexistent/ca\.crt"):
        webhook.client_config("r", None, "", 9443, nowhere)
    with pytest.raises(ValueError, match="needs a service or a url"):
        webhook.client_config("r", {"caBundle": "x"}, "", 0, nowhere)

    handler = webhook.AssignHandler(Sharder())
    foos = {"group": "samplecontroller.k8s.io", "resource": "foos"}

    def answer(obj: dict[str, Any], resource: dict[str, str] = foos, op: str = "CREATE") -> Any:
        resp = handler.handle({"uid": "u", "operation": op, "resource": resource, "namespace": "ns", "object": obj})
        assert resp["allowed"] is True and resp["uid"] == "u"
        return json.loads(base64.b64decode(resp["patch"])) if "patch" in resp else None

    path = "/metadata/labels/shard.alpha.sharding.timebertt.dev~1r"
    assert answer({"metadata": {"name": "f"}}) == [{"op": "add", "path": "/metadata/labels", "value": {}},
                                                   {"op": "add", "path": path, "value": "a"}]
    assert answer({"metadata": {"name": "f", "labels": {"x": "y"}}}, op="UPDATE") == [
        {"op": "add", "path": path, "value": "a"}]
    assert answer({"metadata": {"name": "f", "labels": {shard_label("r"): "b"}}}) is None  # assigned: left alone
    assert answer({"metadata": {"generateName": "f-"}}) is None  # no name yet: the controller path
    assert answer({"metadata": {"name": "d"}}, {"group": "apps", "resource": "deployments"}) is None  # no owner
    owned = {"metadata": {"name": "d", "ownerReferences": [
        {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "f", "uid": "1", "controller": True}]}}
    assert answer(owned, {"group": "apps", "resource": "deployments"}) == [
        {"op": "add", "path": "/metadata/labels", "value": {}}, {"op": "add", "path": path, "value": "a"}]
    assert answer({"metadata": {"name": "f"}}, op="DELETE") is None
    Sharder.ring = Ring([])
    assert answer({"metadata": {"name": "f"}}) is None  # no shard: allowed unchanged


def test_a_pass_outliving_its_continue_token_lists_again() -> None:
    """A pass that patches many objects can outlive the history behind its continue token (410
    Expired: 75 s on the embedded server): the listing starts over (seen at 20,000 Foos, where
    every pass failed midway and the sharder never finished one)."""
    from samplecontroller.apimachinery.errors import ExpiredError
    from samplecontroller.client.metadata import PartialObjectMetadata
    from samplecontroller.foo_reconciler import SCHEME
    from samplecontroller.runtime.sharding.shard import Shard
    from samplecontroller.runtime.sharding.sharder import Sharder

    shard = Shard("r", "a", "ns", SCHEME)
    shard.register(Foo)
    sharder = Sharder(object(), shard)
    sharder.ring = Ring(["a"])
    placed = Counter[str]()
    sharder._place = lambda part, obj, attempts=3: placed.update([obj.metadata.name])  # type: ignore[method-assign]

    def page(names: list[str], cont: str) -> Any:
        items = [msgspec.convert({"metadata": {"name": n}}, PartialObjectMetadata) for n in names]
        return type("Page", (), {"items": items, "metadata": type("M", (), {"continue_": cont})()})()

    calls: list[str | None] = []

    class Client:
        def list(self, options: Any) -> Any:
            calls.append(options.continue_)
            if options.continue_ == "p2" and calls.count("p2") == 1:
                raise ExpiredError({"code": 410, "reason": "Expired", "message": "too old resource version"})
            return page(["x", "y"], "p2") if options.continue_ is None else page(["z"], "")

    sharder._resync_one(shard.partitions[Foo], Client())
    assert calls == [None, "p2", None, "p2"]
    assert placed == {"x": 2, "y": 2, "z": 1}


@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_deployment_not_owned_by_a_foo_gets_the_unsharded_warning(rest: Any, ns: str, style: str) -> None:
    """A Deployment that exists unassigned and is not a Foo's is invisible to a shard's
    label-selected cache: its create meets AlreadyExists. As unsharded, the Foo gets the
    ErrResourceExists Warning and its retries back off (the sample-controller's "resource exists
    and is not managed by Foo"), instead of an AlreadyExists error retried without the event.
    The sync and async styles (main.py --controller runtime|async --shard-ring)."""
    import msgspec.structs

    from samplecontroller import foo as domain
    from samplecontroller.apimachinery import meta
    from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

    owner = msgspec.structs.replace(new_foo(ns, "owner", "taken"), metadata=ObjectMeta(name="owner", namespace=ns,
                                                                                       uid="not-created"))
    taken = domain.new_deployment(owner)
    taken = msgspec.structs.replace(taken, metadata=msgspec.structs.replace(taken.metadata, owner_references=None))
    KubeClientset(rest).apps_v1().deployments(ns).create(taken)
    mgr = new_manager(rest, resync=3600, namespace=ns, shard_ring="lone", shard_identity="s0",
                      leader_election_namespace=ns, leader_election_release_on_cancel=True,
                      lease_duration=3.0, renew_deadline=2.5, retry_period=0.25, shutdown_timeout=5.0)
    mgr.sharder.poll_period = 0.25
    recorder = FakeRecorder(100)
    if style == "async":
        ainner = AsyncFooReconciler(mgr.get_async_client(), recorder, api_reader=mgr.get_async_api_reader())
        setup_foo_controller(mgr, ainner, 1, own_writes=ainner.own_writes)
    else:
        inner = FooReconciler(mgr.get_client(), recorder, api_reader=mgr.get_api_reader())
        setup_foo_controller(mgr, inner, 1, own_writes=inner.own_writes)
    stop = threading.Event()
    threading.Thread(target=mgr.start, args=(stop,), daemon=True, name="lone").start()
    try:
        Clientset(rest).samplecontroller_v1alpha1().foos(ns).create(new_foo(ns, "wants-taken", "taken"))
        event = recorder.events.get(timeout=15)
        assert event == f"Warning {domain.ERR_RESOURCE_EXISTS} {domain.MESSAGE_RESOURCE_EXISTS.format('taken')}"
        dep = KubeClientset(rest).apps_v1().deployments(ns).get("taken")
        assert meta.get_owner_references(dep) == [] and shard_label("lone") not in meta.get_labels(dep)
    finally:
        stop.set()


def test_the_classic_shard_warns_of_a_deployment_not_owned_and_drains_through_the_index(rest: Any, ns: str) -> None:
    """main.py --controller classic --shard-ring (the client-go style controller on a shard, its
    Foos assigned by the test instead of a sharder): a Deployment that exists unassigned and is
    not a Foo's (outside the shard's informers) gets the unsharded ErrResourceExists Warning, as
    in the runtime styles; a drained Foo's acknowledgement finds its Deployments through the
    controller-UID index (the Deployment lister is never scanned)."""
    import argparse

    import msgspec.structs

    from samplecontroller import app
    from samplecontroller import foo as domain
    from samplecontroller.apimachinery import meta
    from samplecontroller.controller import Controller
    from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
    from samplecontroller.runtime.sharding.shard import CONTROLLER_UID_INDEX

    owner = msgspec.structs.replace(new_foo(ns, "owner", "taken"), metadata=ObjectMeta(name="owner", namespace=ns,
                                                                                       uid="not-created"))
    taken = domain.new_deployment(owner)
    taken = msgspec.structs.replace(taken, metadata=msgspec.structs.replace(taken.metadata, owner_references=None))
    kube, sample = KubeClientset(rest), Clientset(rest)
    kube.apps_v1().deployments(ns).create(taken)
    args = argparse.Namespace(shard_ring="lone", leader_election_namespace=ns)
    shard = app._classic_shard(args, "s0")
    kube_factory, sample_factory = app.informer_factories(kube, sample, 3600, ns, shard.selector())
    recorder = FakeRecorder(100)
    controller = Controller(kube, sample, kube_factory.apps.v1.deployments,
                            sample_factory.samplecontroller.v1alpha1.foos, recorder)
    app._shard_classic(controller, shard)

    class NoScan:  # the lister's gets only: a drain's acknowledgement must not list every Deployment
        def __init__(self, lister: Any) -> None:
            self.lister = lister

        def deployments(self, namespace: str) -> Any:
            inner = self.lister.deployments(namespace)
            return type("NS", (), {"get": staticmethod(inner.get), "list": None})()

    controller.deployments_lister = NoScan(controller.deployments_lister)  # type: ignore[assignment]
    stop = threading.Event()
    kube_factory.start(stop)
    sample_factory.start(stop)
    runner = threading.Thread(target=controller.run, args=(1, stop), kwargs={"shutdown_timeout": 5.0},
                              daemon=True, name="classic-s0")
    runner.start()
    foos = sample.samplecontroller_v1alpha1().foos(ns)
    assigned = {shard.shard_label: "s0"}
    try:
        wants_taken = new_foo(ns, "wants-taken", "taken")
        foos.create(msgspec.structs.replace(wants_taken, metadata=msgspec.structs.replace(
            wants_taken.metadata, labels=assigned)))
        event = recorder.events.get(timeout=15)
        assert event == f"Warning {domain.ERR_RESOURCE_EXISTS} {domain.MESSAGE_RESOURCE_EXISTS.format('taken')}"
        dep = kube.apps_v1().deployments(ns).get("taken")
        assert meta.get_owner_references(dep) == [] and shard.shard_label not in meta.get_labels(dep)

        mine = new_foo(ns, "mine", "mine-dep")
        mine = foos.create(msgspec.structs.replace(mine, metadata=msgspec.structs.replace(mine.metadata,
                                                                                          labels=assigned)))
        indexer = controller.deployments_informer.get_indexer()
        wait_for(lambda: len(indexer.by_index(CONTROLLER_UID_INDEX, meta.get_uid(mine))) == 1, timeout=15)
        assert meta.get_labels(kube.apps_v1().deployments(ns).get("mine-dep"))[shard.shard_label] == "s0"
        foos.patch("mine", msgspec.json.encode({"metadata": {"labels": {shard.drain_label: "true"}}}),
                   "application/merge-patch+json")
        wait_for(lambda: shard.shard_label not in meta.get_labels(kube.apps_v1().deployments(ns).get("mine-dep")),
                 timeout=15)
        assert not {shard.shard_label, shard.drain_label} & set(meta.get_labels(foos.get("mine")))
    finally:
        stop.set()
        runner.join(10)
        kube_factory.shutdown()
        sample_factory.shutdown()


def test_the_async_api_reader_reads_past_the_cache(rest: Any) -> None:
    """``Manager.get_async_api_reader()``: the async client's calls without its cache (the sharded
    async reconciler's read of a Deployment outside its shard); over the sync API reader for a
    Manager of fakes (``client_for`` and no REST client)."""
    from samplecontroller.foo_reconciler import SCHEME
    from samplecontroller.runtime.client.aio import FakeAsyncClient
    from samplecontroller.runtime.manager import Options

    real = Manager(rest, Options(), scheme=SCHEME)
    reader = real.get_async_api_reader()
    assert reader.cache is None and real.get_async_client().cache is real.cache
    assert reader.client_for is real.get_async_client().client_for
    fake = Manager(None, Options(), scheme=SCHEME, client_for=lambda info, ns: None)
    fake_reader = fake.get_async_api_reader()
    assert isinstance(fake_reader, FakeAsyncClient) and fake_reader.sync is fake.get_api_reader()
