"""SharedInformerFactoryBase and DynamicSharedInformerFactory over the scripted HTTP server."""

from __future__ import annotations

import threading
from typing import Any

import msgspec

from samplecontroller.cache import SharedIndexInformer
from samplecontroller.client.types import ListOptions, ResourceInfo
from samplecontroller.informers import DynamicSharedInformerFactory, SharedInformerFactoryBase, tweaked
from tests.cache.conftest import eventually, fast_backoff
from tests.cache.scripted import HTTPListerWatcher, Obj, ScriptedServer


class Other(Obj, frozen=True, kw_only=True):
    pass


def select_app(options: ListOptions) -> None:
    options.label_selector = "app=x"


def test_one_informer_per_type_start_sync_shutdown(server: ScriptedServer) -> None:
    server.put("a", labels={"app": "x"})
    factory = SharedInformerFactoryBase(0.0, tweak_list_options=select_app,
                                        transform=lambda o: msgspec.structs.replace(o, spec={"t": 1}))
    created: list[str] = []

    def new(model: type[Any]) -> SharedIndexInformer[Any]:
        created.append(model.__name__)
        lw = tweaked(HTTPListerWatcher(server.url), factory.tweak_list_options)
        return SharedIndexInformer(lw, model, factory.default_resync, freeze_gc=False, backoff=fast_backoff())

    first = factory.informer_for(Obj, lambda: new(Obj))
    assert factory.informer_for(Obj, lambda: new(Obj)) is first
    assert created == ["Obj"]
    stop = threading.Event()
    factory.start(stop)
    assert factory.wait_for_cache_sync(timeout=30) == {Obj: True}
    assert [o.spec for o in first.get_store().list()] == [{"t": 1}]
    assert eventually(lambda: server.open_watches() == 1)
    assert all(q.get("labelSelector") == "app=x" for q in server.queries("list") + server.queries("watch"))
    # a type requested later starts on the next start()
    second = factory.informer_for(Other, lambda: new(Other))
    factory.start(stop)
    assert factory.wait_for_cache_sync(timeout=30) == {Obj: True, Other: True}
    factory.shutdown()
    assert first.is_stopped() and second.is_stopped()
    factory.start(stop)  # after shutdown: nothing starts
    assert not stop.is_set()


def test_outer_stop_stops_informers(server: ScriptedServer) -> None:
    factory = SharedInformerFactoryBase()
    inf = factory.informer_for(Obj, lambda: SharedIndexInformer(HTTPListerWatcher(server.url), Obj, freeze_gc=False))
    stop = threading.Event()
    factory.start(stop)
    assert factory.wait_for_cache_sync(timeout=30)[Obj]
    stop.set()
    assert eventually(inf.is_stopped)
    factory.shutdown()


INFO: ResourceInfo[dict[str, Any]] = ResourceInfo("test.io", "v1", "objs", "Obj", True, dict, dict)


class FakeDynamicClient:
    def __init__(self, url: str) -> None:
        self.url = url
        self.calls: list[tuple[str, str | None]] = []

    def resource(self, info: ResourceInfo[Any], namespace: str | None = None) -> Any:
        self.calls.append((info.resource, namespace))
        url = self.url

        class _Res:
            def lister_watcher(self) -> HTTPListerWatcher:
                return HTTPListerWatcher(url, typed=False)

        return _Res()


def test_dynamic_factory_for_resource(server: ScriptedServer) -> None:
    server.put("a")
    client = FakeDynamicClient(server.url)
    factory = DynamicSharedInformerFactory(client, 0.0, namespace="default")
    inf = factory.for_resource(INFO)
    inf.freeze_gc = False
    assert factory.for_resource(INFO) is inf
    assert client.calls == [("objs", "default")]
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(timeout=30) == {("test.io", "v1", "objs"): True}
        assert inf.get_store().get_by_key("default/a") == server.objects["default/a"]
    finally:
        factory.shutdown()
