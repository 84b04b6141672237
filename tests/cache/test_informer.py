"""SharedIndexInformer over real HTTP: notifications, late handlers, slow handlers, tombstones,
resync, transform, filtering, sync and stop."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import meta
from samplecontroller.cache import (
    DeletedFinalStateUnknown,
    FilteringResourceEventHandler,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    new_dynamic_informer,
    shared_informer,
    wait_for_cache_sync,
)
from tests.cache.conftest import Recorder, eventually, fast_backoff
from tests.cache.scripted import HTTPListerWatcher, Obj, ScriptedServer

Factory = Callable[..., SharedIndexInformer[Any]]


@pytest.fixture
def make(lw: HTTPListerWatcher) -> Iterator[Factory]:
    stops: list[tuple[threading.Event, threading.Thread]] = []

    def factory(resync: float = 0.0, start: bool = True, informer_lw: Any = None,
                **kw: Any) -> SharedIndexInformer[Any]:
        kw.setdefault("freeze_gc", False)
        inf: SharedIndexInformer[Any] = SharedIndexInformer(informer_lw or lw, Obj, resync, backoff=fast_backoff(),
                                                            **kw)
        if start:
            run(inf)
        return inf

    def run(inf: SharedIndexInformer[Any]) -> None:
        stop = threading.Event()
        t = threading.Thread(target=inf.run, args=(stop,), daemon=True)
        t.start()
        stops.append((stop, t))

    factory.run = run  # type: ignore[attr-defined]
    factory.stops = stops  # type: ignore[attr-defined]
    yield factory
    for stop, _ in stops:
        stop.set()
    for _, t in stops:
        t.join(5)
        assert not t.is_alive(), "informer did not stop"


def names(events: list[tuple[Any, ...]], kind: str) -> list[str]:
    return sorted(e[1].metadata.name for e in events if e[0] == kind)


def test_initial_sync_and_live_events(server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    server.put("b")
    inf = make(start=False)
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, reg, timeout=30)
    assert [e[2] for e in rec.snapshot()] == [True, True]
    assert names(rec.snapshot(), "add") == ["a", "b"]
    assert inf.last_sync_resource_version() == "102"
    server.put("c")
    server.put("a", v=2)
    server.remove("b")
    assert eventually(lambda: rec.kinds()[2:] == ["add", "update", "delete"])
    add_c, upd_a, del_b = rec.snapshot()[2:]
    assert add_c[2] is False
    assert upd_a[1].spec == {} and upd_a[2].spec == {"v": 2}
    assert del_b[1].metadata.name == "b"
    assert sorted(inf.get_store().list_keys()) == ["default/a", "default/c"]


def test_empty_initial_list_syncs(server: ScriptedServer, make: Factory) -> None:
    inf = make()
    assert wait_for_cache_sync(inf.has_synced, timeout=30)


def test_late_handler_gets_cached_objects(server: ScriptedServer, make: Factory) -> None:
    for n in "abc":
        server.put(n)
    inf = make()
    assert wait_for_cache_sync(inf, timeout=30)
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    assert wait_for_cache_sync(reg, timeout=30)
    assert names(rec.snapshot(), "add") == ["a", "b", "c"]
    assert all(e[2] for e in rec.snapshot())
    server.put("d")
    assert eventually(lambda: len(rec.snapshot()) == 4)


def test_slow_handler_does_not_stall_others(server: ScriptedServer, make: Factory) -> None:
    server.put("first")
    inf = make(start=False)
    gate = threading.Event()
    slow, fast = Recorder(gate=gate), Recorder()
    slow_reg = inf.add_event_handler(slow)
    inf.add_event_handler(fast)
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, timeout=30)
    for i in range(50):
        server.put(f"o{i}")
    assert eventually(lambda: len(fast.snapshot()) == 51)
    assert len(inf.get_store().list_keys()) == 51
    assert slow.snapshot() == [] and not slow_reg.has_synced()
    gate.set()
    assert eventually(lambda: len(slow.snapshot()) == 51)
    assert slow_reg.has_synced()


class ThreadRecorder(Recorder):
    """A Recorder noting the thread each notification was delivered on."""

    def __init__(self, fail_on: str = "") -> None:
        super().__init__()
        self.threads: list[str] = []
        self.fail_on = fail_on

    def _record(self, item: tuple[Any, ...]) -> None:
        self.threads.append(threading.current_thread().name)
        super()._record(item)
        if self.fail_on and item[0] != "update" and getattr(item[1], "metadata", None) is not None \
                and item[1].metadata.name == self.fail_on:
            raise RuntimeError("handler bug")


def test_inline_handlers_run_on_the_reflectors_thread_in_order(server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    inf = make(start=False)
    inline, threaded = ThreadRecorder(fail_on="boom"), ThreadRecorder()
    inline_reg = inf.add_event_handler(inline, inline=True)
    inf.add_event_handler(threaded)
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, inline_reg, timeout=30)
    server.put("boom")  # its handler raises: logged, delivery goes on
    server.put("b")
    server.put("a", v=2)
    server.remove("b")
    assert eventually(lambda: len(threaded.snapshot()) == 5)
    assert inline.kinds() == threaded.kinds() == ["add", "add", "add", "update", "delete"]
    assert {t.split("-")[0] for t in inline.threads} == {"reflector"}, "no thread of its own"
    assert {t.rsplit("-", 1)[0] for t in threaded.threads} == {"informer-listener"}
    assert inline.snapshot()[3][2].spec == {"v": 2}  # the cache was updated before the handler ran
    cached = inf.get_store().get_by_key("default/a")
    assert cached is not None and cached.spec == {"v": 2}


def test_an_inline_handler_added_late_gets_the_cache_then_nothing_once_removed(
        server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    inf = make()
    assert wait_for_cache_sync(inf, timeout=30)
    late = ThreadRecorder()
    reg = inf.add_event_handler(late, inline=True)
    assert reg.has_synced() and late.kinds() == ["add"]  # delivered on the caller's thread, at once
    assert late.threads == [threading.current_thread().name]
    assert late.snapshot()[0][2] is True
    other = Recorder()
    inf.add_event_handler(other)
    inf.remove_event_handler(reg)
    server.put("b")
    assert eventually(lambda: other.kinds() == ["add", "add"])
    assert late.kinds() == ["add"]


def test_inline_handlers_are_resynced_by_the_thread_running_the_informer(
        server: ScriptedServer, make: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_informer, "MINIMUM_RESYNC_PERIOD", 0.05)
    server.put("a")
    inf = make()
    runner = make.stops[-1][1]  # type: ignore[attr-defined]
    rec = ThreadRecorder()
    inf.add_event_handler(rec, resync_period=0.05, inline=True)
    assert eventually(lambda: rec.kinds().count("update") >= 2)
    assert {t for k, t in zip(rec.kinds(), rec.threads, strict=True) if k == "update"} == {runner.name}


def test_missed_delete_arrives_as_tombstone_after_410(server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    server.put("b")
    inf = make()
    rec = Recorder()
    inf.add_event_handler(rec)
    assert wait_for_cache_sync(inf, timeout=30)
    assert eventually(lambda: server.open_watches() == 1)
    server.remove("b", quiet=True)
    server.expire_below = server.rv
    server.end_watches("expired")
    assert eventually(lambda: "delete" in rec.kinds())
    tomb = next(e[1] for e in rec.snapshot() if e[0] == "delete")
    assert isinstance(tomb, DeletedFinalStateUnknown) and tomb.key == "default/b"
    assert tomb.obj.metadata.name == "b"
    assert inf.get_store().list_keys() == ["default/a"]


def test_resync_per_handler(server: ScriptedServer, make: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_informer, "MINIMUM_RESYNC_PERIOD", 0.05)
    server.put("a")
    inf = make(start=False)
    resyncing, quiet = Recorder(), Recorder()
    inf.add_event_handler(resyncing, resync_period=0.05)
    inf.add_event_handler(quiet, resync_period=0)
    make.run(inf)  # type: ignore[attr-defined]
    assert eventually(lambda: resyncing.kinds().count("update") >= 2)
    upd = next(e for e in resyncing.snapshot() if e[0] == "update")
    assert upd[1] is upd[2]
    assert quiet.kinds() == ["add"]


def test_resync_of_a_handler_added_to_a_running_informer(server: ScriptedServer, make: Factory,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The processing thread, idle with no resync due, is woken to schedule the new handler's."""
    monkeypatch.setattr(shared_informer, "MINIMUM_RESYNC_PERIOD", 0.05)
    server.put("a")
    inf = make()
    assert wait_for_cache_sync(inf, timeout=30)
    late = Recorder()
    inf.add_event_handler(late, resync_period=0.05)
    assert eventually(lambda: late.kinds().count("update") >= 2)


def test_transform_strips_before_caching(server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    inf = make(start=False)
    inf.set_transform(lambda o: msgspec.structs.replace(o, spec={"stripped": True}))
    rec = Recorder()
    inf.add_event_handler(rec)
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, timeout=30)
    server.put("b")
    assert eventually(lambda: len(rec.snapshot()) == 2)
    assert all(o.spec == {"stripped": True} for o in inf.get_store().list())
    assert all(e[1].spec == {"stripped": True} for e in rec.snapshot())
    with pytest.raises(RuntimeError, match="before it starts"):
        inf.set_transform(lambda o: o)


def test_filtering_handler_turns_crossings_into_add_and_delete(server: ScriptedServer, make: Factory) -> None:
    server.put("a", labels={"keep": "no"})
    inf = make()
    rec = Recorder()
    inf.add_event_handler(FilteringResourceEventHandler(lambda o: meta.get_labels(o).get("keep") == "yes", rec))
    assert wait_for_cache_sync(inf, timeout=30)
    server.put("a", labels={"keep": "yes"})
    assert eventually(lambda: rec.kinds() == ["add"])
    server.put("a", labels={"keep": "yes"}, v=1)
    server.put("a", labels={"keep": "no"})
    assert eventually(lambda: rec.kinds() == ["add", "update", "delete"])


def test_remove_event_handler_and_funcs(server: ScriptedServer, make: Factory) -> None:
    inf = make()
    seen: list[str] = []
    reg = inf.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda o, initial: seen.append(o.metadata.name)))
    rec = Recorder()
    inf.add_event_handler(rec)
    assert wait_for_cache_sync(inf, timeout=30)
    server.put("a")
    assert eventually(lambda: seen == ["a"])
    inf.remove_event_handler(reg)
    server.put("b")
    assert eventually(lambda: len(rec.snapshot()) == 2)
    assert seen == ["a"]


def test_handler_exception_is_contained(server: ScriptedServer, make: Factory) -> None:
    def boom(o: Any, initial: bool) -> None:
        raise RuntimeError("handler bug")

    inf = make()
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=boom))
    rec = Recorder()
    inf.add_event_handler(rec)
    server.put("a")
    server.put("b")
    assert eventually(lambda: len(rec.snapshot()) == 2)


def test_stop_marks_stopped_and_refuses_handlers(server: ScriptedServer, make: Factory) -> None:
    inf = make()
    assert wait_for_cache_sync(inf, timeout=30)
    stop, thread = make.stops[-1]  # type: ignore[attr-defined]
    stop.set()
    thread.join(5)
    assert inf.is_stopped()
    with pytest.raises(RuntimeError, match="has stopped"):
        inf.add_event_handler(Recorder())


def test_wait_for_cache_sync_timeout_and_stop() -> None:
    assert wait_for_cache_sync(lambda: False, timeout=0.05) is False
    stop = threading.Event()
    stop.set()
    assert wait_for_cache_sync(lambda: False, stop=stop) is False


def test_gc_freeze_after_sync(server: ScriptedServer, make: Factory) -> None:
    server.put("a")
    gc.unfreeze()
    try:
        inf = make(freeze_gc=True)
        assert wait_for_cache_sync(inf, timeout=30)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_watch_error_handler_hook(server: ScriptedServer, make: Factory) -> None:
    server.fail_lists = 1
    seen: list[BaseException] = []
    inf = make(start=False)
    inf.set_watch_error_handler(lambda name, err: seen.append(err))
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, timeout=30)
    assert [getattr(e, "code", None) for e in seen] == [500]


class _DynClient:
    namespace = None

    def __init__(self, url: str) -> None:
        self.url = url

    def lister_watcher(self) -> HTTPListerWatcher:
        return HTTPListerWatcher(self.url, typed=False)


def test_dynamic_informer_caches_dicts(server: ScriptedServer, make: Factory) -> None:
    server.put("a", labels={"x": "1"})
    inf = new_dynamic_informer(_DynClient(server.url), 0.0)
    inf.freeze_gc = False
    make.run(inf)  # type: ignore[attr-defined]
    assert wait_for_cache_sync(inf, timeout=30)
    obj = inf.get_store().get_by_key("default/a")
    assert isinstance(obj, dict) and obj["metadata"]["labels"] == {"x": "1"}
    with pytest.raises(ValueError, match="cannot scope"):
        new_dynamic_informer(_DynClient(server.url), 0.0, namespace="other")
