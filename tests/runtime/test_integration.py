"""The runtime layer against the embedded API server: manager, cache, client, FooReconciler,
metrics and health endpoints."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo, FooSpec
from generated.clientset import Clientset
from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME, FooReconciler, new_manager
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime import client as rtclient
from samplecontroller.runtime.manager import ListenError, Manager, Options
from samplecontroller.runtime.reconcile import Request, Result
from tests.live import free_port, http_get, wait_for


@pytest.fixture
def started() -> Iterator[Callable[[Manager], threading.Thread]]:
    runs: list[tuple[threading.Event, threading.Thread]] = []

    def start(mgr: Manager) -> threading.Thread:
        stop = threading.Event()
        t = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
        t.start()
        runs.append((stop, t))
        assert mgr.elected().wait(10), "manager did not start"
        return t

    yield start
    for stop, t in runs:
        stop.set()
        t.join(10)
        assert not t.is_alive(), "manager did not stop"


def new_foo(ns: str, name: str, deployment_name: str, replicas: int | None = 1) -> Foo:
    spec = FooSpec(deployment_name=deployment_name) if replicas is None else FooSpec(
        deployment_name=deployment_name, replicas=replicas)
    return Foo(metadata=ObjectMeta(name=name, namespace=ns), spec=spec)


def test_foo_reconciler_end_to_end(rest: Any, ns: str, started: Any) -> None:
    cs, kube = Clientset(rest), KubeClientset(rest)
    mgr = new_manager(rest, resync=3600, namespace=ns)
    recorder = FakeRecorder(100)
    FooReconciler(mgr.get_client(), recorder, not_owned_backoff_base=0.05).setup_with_manager(mgr, 2)
    started(mgr)
    foos = cs.samplecontroller_v1alpha1().foos(ns)
    foo = foos.create(new_foo(ns, "f1", "d1", 2))
    dep = wait_for(lambda: kube.apps_v1().deployments(ns).get("d1"), what="the Deployment")
    ref = dep.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Foo", "f1", foo.metadata.uid, True)
    assert dep.spec.replicas == 2
    wait_for(lambda: foos.get("f1").status is not msgspec.UNSET, what="the Foo status")
    # scale: only spec.replicas is patched
    live: Any = foos.get("f1")
    foos.update(msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, replicas=4)))
    wait_for(lambda: getattr(kube.apps_v1().deployments(ns).get("d1").spec, "replicas", None) == 4, what="replicas 4")
    # a Deployment owned by someone else: one Warning, no takeover
    kube.apps_v1().deployments(ns).create(Deployment(metadata=ObjectMeta(name="taken", namespace=ns),
                                                  spec=dep.spec))
    foos.create(new_foo(ns, "f2", "taken"))
    wait_for(lambda: any("ErrResourceExists" in e for e in drain(recorder)), what="the Warning")
    time.sleep(0.3)  # several backoff periods
    assert not any("ErrResourceExists" in e for e in drain(recorder)), "warned again for the same situation"
    assert not kube.apps_v1().deployments(ns).get("taken").metadata.owner_references


def drain(recorder: FakeRecorder) -> list[str]:
    out = []
    while True:
        try:
            out.append(recorder.events.get_nowait())
        except Exception:
            return out


def test_cache_reads_field_index_and_namespaces(rest: Any, ns: str, started: Any) -> None:
    cs = Clientset(rest)
    for i in range(3):
        cs.samplecontroller_v1alpha1().foos(ns).create(new_foo(ns, f"f{i}", "shared" if i < 2 else "own"))
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    mgr.get_cache().index_field(Foo, "spec.deploymentName",
                                lambda f: [f.spec.deployment_name] if f.spec is not msgspec.UNSET else [])
    started(mgr)
    c = mgr.get_client()
    assert c.get(Foo, ns, "f0").metadata.name == "f0"
    assert sorted(str(f.metadata.name) for f in c.list(Foo, namespace=ns, matching_fields={
        "spec.deploymentName": "shared"})) == ["f0", "f1"]
    assert len(c.list(Foo)) == 3
    with pytest.raises(errors.NotFoundError):
        c.get(Foo, ns, "missing")
    with pytest.raises(ValueError, match="not in the cache's namespaces"):
        c.get(Foo, "elsewhere", "f0")
    with pytest.raises(ValueError, match="index_field"):
        c.list(Foo, matching_fields={"metadata.name": "f0"})


def test_client_writes_and_helpers(rest: Any, ns: str, started: Any) -> None:
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,), field_owner="rt-test"))
    started(mgr)
    c = mgr.get_client()
    cm = c.create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns, labels={"t": "1"}), data={"a": "1"}))
    # merge patch from the original
    patched = c.patch(msgspec.structs.replace(cm, data={"a": "2", "b": "3"}), rtclient.MergeFrom(cm))
    assert patched.data == {"a": "2", "b": "3"}
    # optimistic lock on a stale original: conflict
    with pytest.raises(errors.ConflictError):
        c.patch(msgspec.structs.replace(cm, data={"a": "9"}), rtclient.MergeFrom(cm, optimistic_lock=True))
    # strategic merge (built-in) and server-side apply
    smp = c.patch(msgspec.structs.replace(patched, data={"a": "2", "b": "3", "c": "4"}),
                  rtclient.StrategicMergeFrom(patched))
    assert smp.data == {"a": "2", "b": "3", "c": "4"}
    applied = c.apply(ConfigMap(metadata=ObjectMeta(name="cm2", namespace=ns), data={"x": "y"}))
    assert applied.data == {"x": "y"}
    # finalizers
    with_f, changed = rtclient.add_finalizer(smp, "example.com/cleanup")
    assert changed and rtclient.contains_finalizer(with_f, "example.com/cleanup")
    assert rtclient.add_finalizer(with_f, "example.com/cleanup")[1] is False
    updated = c.update(with_f)
    without, changed = rtclient.remove_finalizer(updated, "example.com/cleanup")
    assert changed and not rtclient.contains_finalizer(c.update(without), "example.com/cleanup")
    # controller references
    foo = c.create(new_foo(ns, "owner", "x"))
    owned: Any = rtclient.set_controller_reference(foo, ConfigMap(metadata=ObjectMeta(name="o", namespace=ns)))
    assert owned.metadata.owner_references[0].controller is True
    other = msgspec.structs.replace(foo, metadata=msgspec.structs.replace(foo.metadata, name="other", uid="other-uid"))
    with pytest.raises(rtclient.AlreadyOwnedError):
        rtclient.set_controller_reference(other, owned)
    # create_or_update / create_or_patch read through the cache
    def mutate(o: ConfigMap) -> ConfigMap:
        return msgspec.structs.replace(o, data={"v": "1"})

    obj, res = rtclient.create_or_update(c, ConfigMap(metadata=ObjectMeta(name="cou", namespace=ns)), mutate)
    assert res is rtclient.OperationResult.CREATED
    wait_for(lambda: c.list(ConfigMap, namespace=ns, label_selector=None) and
             any(x.metadata.name == "cou" for x in c.list(ConfigMap, namespace=ns)), what="cache")
    _, res = rtclient.create_or_update(c, obj, mutate)
    assert res is rtclient.OperationResult.NONE
    _, res = rtclient.create_or_patch(c, obj, lambda o: msgspec.structs.replace(o, data={"v": "2"}))
    assert res is rtclient.OperationResult.UPDATED
    # delete_all_of with a label selector
    c.delete_all_of(ConfigMap, namespace=ns, label_selector={"t": "1"})
    with pytest.raises(errors.NotFoundError):
        mgr.get_api_reader().get(ConfigMap, ns, "cm")


def test_metrics_and_probes(rest: Any, ns: str, started: Any) -> None:
    mgr = new_manager(rest, resync=3600, namespace=ns, metrics_bind_address="127.0.0.1:0",
                      health_probe_bind_address="127.0.0.1:0")
    FooReconciler(mgr.get_client(), FakeRecorder(100)).setup_with_manager(mgr, 1)
    healthy = threading.Event()
    mgr.add_healthz_check("ping", lambda: None)
    mgr.add_readyz_check("informers", mgr.cache_synced_check)

    def gate() -> None:
        if not healthy.is_set():
            raise RuntimeError("not yet")

    mgr.add_readyz_check("gate", gate)
    started(mgr)
    wait_for(lambda: len(mgr.server_addresses()) == 2, what="servers")
    metrics_port, probe_port = (a[1] for a in mgr.server_addresses())
    assert http_get(probe_port, "/healthz") == (200, "ok")
    code, body = http_get(probe_port, "/readyz?verbose")
    assert code == 500 and "[-]gate failed: not yet" in body
    healthy.set()
    wait_for(lambda: http_get(probe_port, "/readyz")[0] == 200, what="ready")
    assert http_get(probe_port, "/readyz/gate") == (200, "ok")
    assert http_get(probe_port, "/readyz/nope")[0] == 404
    Clientset(rest).samplecontroller_v1alpha1().foos(ns).create(new_foo(ns, "m", "md"))
    wait_for(lambda: 'controller_runtime_reconcile_total{controller="foo",result="success"}'
             in http_get(metrics_port, "/metrics")[1], what="reconcile metric")
    text = http_get(metrics_port, "/metrics")[1]
    for name in ("controller_runtime_reconcile_errors_total", "controller_runtime_reconcile_time_seconds_bucket",
                 "controller_runtime_active_workers", 'workqueue_adds_total{name="foo"}', "workqueue_depth",
                 "workqueue_queue_duration_seconds_bucket", "workqueue_work_duration_seconds_bucket",
                 "workqueue_retries_total"):
        assert name in text, name


def test_leader_election_runs_leader_runnables_on_one_manager_only(rest: Any, ns: str) -> None:
    """Two managers, one Lease: only the leader runs its leader-only runnable; when the leader stops
    (releasing the Lease), the other takes over; non-leader runnables run on both."""
    from samplecontroller.runtime.manager import runnable_func

    def new(name: str) -> tuple[Manager, list[str], threading.Event]:
        mgr = Manager(rest, scheme=SCHEME, options=Options(
            namespaces=(ns,), leader_election=True, leader_election_id="rt-lease", leader_election_namespace=ns,
            leader_election_release_on_cancel=True, lease_duration=2.0, renew_deadline=1.5, retry_period=0.1))
        ran: list[str] = []

        def record(what: str) -> Callable[[threading.Event], None]:
            def runnable(stop: threading.Event) -> None:
                ran.append(what)
                stop.wait()
            return runnable

        mgr.add(runnable_func(record("leader")))
        mgr.add(runnable_func(record("always"), need_leader_election=False))
        stop = threading.Event()
        threading.Thread(target=mgr.start, args=(stop,), daemon=True, name=f"manager-{name}").start()
        return mgr, ran, stop

    first, first_ran, first_stop = new("first")
    assert first.elected().wait(10)
    second, second_ran, second_stop = new("second")
    try:
        wait_for(lambda: "always" in second_ran, what="the second manager's non-leader runnable")
        time.sleep(1.0)
        assert "leader" in first_ran and "leader" not in second_ran
        assert not second.elected().is_set()
        first_stop.set()
        assert second.elected().wait(10), "the second manager did not take over"
        wait_for(lambda: "leader" in second_ran, what="the leader runnable on the second manager")
        lease = KubeClientset(rest).coordination_v1().leases(ns).get("rt-lease")
        assert lease.spec.lease_transitions == 1  # type: ignore[union-attr]
    finally:
        first_stop.set()
        second_stop.set()


def record(seen: list[Request], request: Request) -> Result:
    seen.append(request)
    return Result()


def test_builder_event_filter_applies_to_every_watch(rest: Any, ns: str, started: Any) -> None:
    """``with_event_filter`` predicates gate the events of the For type (and of any other watch)."""
    from samplecontroller.runtime import predicate
    from samplecontroller.runtime.builder import controller_managed_by
    from samplecontroller.runtime.reconcile import Func

    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    seen: list[Request] = []
    (controller_managed_by(mgr).for_(ConfigMap)
     .with_event_filter(predicate.new_predicate_funcs(lambda o: (o.metadata.labels or {}).get("watch") == "yes"))
     .named(f"filtered-{ns}")
     .complete(Func(lambda r: record(seen, r))))
    started(mgr)
    cs = KubeClientset(rest).core_v1().configmaps(ns)
    cs.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored", "namespace": ns}})
    cs.create({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "taken", "namespace": ns, "labels": {"watch": "yes"}}})
    wait_for(lambda: Request(ns, "taken") in seen, what="the labelled ConfigMap reconciled")
    time.sleep(0.3)
    assert Request(ns, "ignored") not in seen


def test_graceful_shutdown_timeout_bounds_the_stop(rest: Any, ns: str) -> None:
    """A runnable that ignores the stop signal cannot hold the manager past its shutdown timeout."""
    from samplecontroller.runtime.manager import runnable_func

    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,), graceful_shutdown_timeout=0.5))
    release = threading.Event()
    def ignore_the_stop(stop: threading.Event) -> None:
        stop.wait()
        release.wait(30)

    mgr.add(runnable_func(ignore_the_stop))
    stop = threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    thread.start()
    assert mgr.elected().wait(10)
    stop.set()
    thread.join(5)
    stopped = not thread.is_alive()
    release.set()
    assert stopped, "the manager waited for the stuck runnable past graceful_shutdown_timeout"


def test_an_error_after_the_stop_began_is_logged_not_returned(rest: Any, ns: str) -> None:
    """As Go's "error received after stop sequence was engaged": a runnable failing because the
    stop came as it started (an informer already stopped) does not fail the whole run."""
    from samplecontroller.runtime.manager import runnable_func

    def late(stop: threading.Event) -> None:
        stop.wait()
        raise RuntimeError("informer has stopped")

    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    mgr.add(runnable_func(late))
    stop = threading.Event()
    outcome: list[BaseException | None] = []

    def start() -> None:
        try:
            mgr.start(stop)
            outcome.append(None)
        except BaseException as err:
            outcome.append(err)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    assert mgr.elected().wait(10)
    stop.set()
    thread.join(10)
    assert outcome == [None]


def test_a_probe_address_in_use_is_a_listen_error_and_frees_the_metrics_port(rest: Any) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        metrics_port = free_port()
        mgr = Manager(rest, Options(metrics_bind_address=f"127.0.0.1:{metrics_port}",
                                    health_probe_bind_address=f"127.0.0.1:{port}"), scheme=SCHEME)
        with pytest.raises(ListenError, match=f"cannot listen on 127.0.0.1:{port} for the health probe server"):
            mgr.start(threading.Event())
    assert http_get(metrics_port, "/metrics") == (0, "")  # the metrics server started first was closed
    with socket.socket() as again:
        again.bind(("127.0.0.1", metrics_port))
