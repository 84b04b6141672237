"""The generated informers, reflector and listers against the embedded API server: initial list,
add/update/delete events, and the re-list after a watch is cut and its history compacted (410)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo
from generated.clientset import Clientset
from generated.informers import SharedInformerFactory
from samplecontroller.apimachinery import errors
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.cache import DeletedFinalStateUnknown, ResourceEventHandlerFuncs
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.rest import load_rest_client
from samplecontroller.wait import Context
from tests.live import wait_for

NS = "informers"


def foo(name: str, replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name, "namespace": NS},
            "spec": {"deploymentName": name, "replicas": replicas}}


@pytest.fixture
def server(tmp_path: Any) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2) as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        yield s


@pytest.fixture
def cs(server: LocalAPIServer) -> Clientset:
    rest = load_rest_client(kubeconfig=str(server.kubeconfig_path))
    clientset = Clientset(rest)
    KubeClientset(rest).core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return clientset


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.lock = threading.Lock()

    def handler(self) -> ResourceEventHandlerFuncs[Any]:
        def add(obj: Any, initial: bool) -> None:
            self._put("add-initial" if initial else "add", obj)

        return ResourceEventHandlerFuncs(add, lambda old, new: self._put("update", new),
                                         lambda obj: self._put("delete", obj))

    def _put(self, kind: str, obj: Any) -> None:
        with self.lock:
            self.events.append((kind, obj))

    def names(self, kind: str) -> list[str]:
        with self.lock:
            return [_name(o) for k, o in self.events if k == kind]


def _name(obj: Any) -> str:
    if isinstance(obj, DeletedFinalStateUnknown):
        obj = obj.obj
    return str(obj.metadata.name)


@contextlib.contextmanager
def started_informer(cs: Clientset) -> Iterator[tuple[Any, Any, Recorder]]:
    """The generated Foo informer of a factory for ``NS``, synced, with a recording handler."""
    factory = SharedInformerFactory(cs, 0.0, namespace=NS)
    informer = factory.samplecontroller.v1alpha1.foos.informer()
    lister = factory.samplecontroller.v1alpha1.foos.lister()
    recorder = Recorder()
    informer.add_event_handler(recorder.handler())
    factory.start(threading.Event())
    try:
        assert all(factory.wait_for_cache_sync(timeout=30).values())
        yield informer, lister, recorder
    finally:
        factory.shutdown()


def on_loop(server: LocalAPIServer, fn: Callable[[], None]) -> None:
    """Run ``fn`` on the server's event loop (the store is not thread-safe) and wait for it."""
    async def call() -> None:
        fn()

    assert server.loop is not None
    asyncio.run_coroutine_threadsafe(call(), server.loop).result(10)


def test_generated_informer_lists_watches_and_lists(server: LocalAPIServer, cs: Clientset) -> None:
    foos = cs.samplecontroller_v1alpha1().foos(NS)
    for i in range(3):
        foos.create(foo(f"pre-{i}"))
    with started_informer(cs) as (informer, lister, recorder):
        # a synced cache does not mean its handlers have run: they get events on their own thread
        wait_for(lambda: sorted(recorder.names("add-initial")) == ["pre-0", "pre-1", "pre-2"],
                 what="the initial adds")
        assert isinstance(lister.foos(NS).get("pre-1"), Foo)

        foos.create(foo("live"))
        current = foos.get("pre-0")
        foos.patch("pre-0", {"spec": {"replicas": 3}})
        foos.delete("pre-2")
        wait_for(lambda: "pre-2" in recorder.names("delete"), what="the delete event")
        assert "live" in recorder.names("add") and "pre-0" in recorder.names("update")
        assert lister.foos(NS).get("pre-0").spec.replicas == 3  # type: ignore[union-attr]
        assert current.metadata.resource_version != lister.foos(NS).get("pre-0").metadata.resource_version
        with pytest.raises(errors.NotFoundError):
            lister.foos(NS).get("pre-2")
        assert informer.last_sync_resource_version()


def test_relist_after_the_watch_is_cut_and_history_compacted(server: LocalAPIServer, cs: Clientset) -> None:
    """A write and a delete happen while the watch is down, and the server forgets that history:
    the reflector's re-watch gets 410 Expired, it re-lists, and the informer reports the new
    object as an add and the vanished one as a delete with a DeletedFinalStateUnknown tombstone."""
    foos = cs.samplecontroller_v1alpha1().foos(NS)
    foos.create(foo("old"))
    with started_informer(cs) as (_informer, lister, recorder):
        assert server.core is not None and server.store is not None
        core, store = server.core, server.store
        res = core.mapper.get("samplecontroller.k8s.io", "v1alpha1", "foos")
        assert res is not None

        def while_disconnected() -> None:  # one loop callback: the reflector cannot re-watch meanwhile
            store.close_watchers(res.storage_key)
            core.create(res, NS, foo("new"))
            core.delete(res, NS, "old", {})
            store.compact()

        on_loop(server, while_disconnected)
        wait_for(lambda: "old" in recorder.names("delete") and "new" in recorder.names("add"),
                 what="the re-list's add and tombstone delete")
        deleted = [o for k, o in recorder.events if k == "delete"]
        assert isinstance(deleted[0], DeletedFinalStateUnknown) and deleted[0].key == f"{NS}/old"
        assert [f.metadata.name for f in lister.list()] == ["new"]
        foos.patch("new", {"spec": {"replicas": 2}})  # and the new watch delivers again
        wait_for(lambda: "new" in recorder.names("update"), what="an update after the re-list")


def _new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t not in before]


@pytest.mark.parametrize("n", [1, 3])
def test_a_started_informer_costs_at_most_three_threads(server: LocalAPIServer, cs: Clientset, n: int) -> None:
    """Processing (with resync), reflector and one listener per handler: no parked stop-waiters,
    closers, relays or resync timers (their work is done by the stop Context's done-callbacks)."""
    stop = Context()
    factories = [SharedInformerFactory(cs, 30.0) for _ in range(n)]
    before = set(threading.enumerate())
    for factory in factories:
        factory.samplecontroller.v1alpha1.foos.informer().add_event_handler(Recorder().handler())
        factory.start(stop)
    try:
        for factory in factories:
            assert all(factory.wait_for_cache_sync(timeout=30).values())
        started = _new_threads(before)
        assert len(started) <= 3 * n, sorted(t.name for t in started)
    finally:
        stop.cancel()
        for factory in factories:
            factory.shutdown()
    for t in started:
        t.join(10)
    assert _new_threads(before) == []
