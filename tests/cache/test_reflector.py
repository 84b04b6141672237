"""Reflector over real HTTP against the scripted server: list/watch protocol details."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from samplecontroller.cache import Reflector, ThreadSafeStore, new_store
from tests.cache.conftest import eventually, fast_backoff
from tests.cache.scripted import HTTPListerWatcher, ScriptedServer


class Running:
    def __init__(self, reflector: Reflector) -> None:
        self.reflector = reflector
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        reflector.watch_error_handler = lambda name, err: self.errors.append(err)
        self.thread = threading.Thread(target=reflector.run, args=(self.stop,), daemon=True)
        self.thread.start()


@pytest.fixture
def store() -> ThreadSafeStore[Any]:
    return new_store()


@pytest.fixture
def run(lw: HTTPListerWatcher, store: ThreadSafeStore[Any]) -> Iterator[Running]:
    r = Running(Reflector(lw, store, name="test", page_size=2, backoff=fast_backoff()))
    yield r
    r.stop.set()
    r.thread.join(5)
    assert not r.thread.is_alive(), "reflector did not stop promptly"


def keys(store: ThreadSafeStore[Any]) -> list[str]:
    return sorted(store.list_keys())


@pytest.fixture
def seeded(server: ScriptedServer) -> ScriptedServer:
    for name in "abcde":
        server.put(name)
    return server


def test_first_list_is_rv0_paged_then_watch_with_bookmarks(seeded: ScriptedServer, run: Running,
                                                           store: ThreadSafeStore[Any]) -> None:
    assert eventually(lambda: seeded.open_watches() == 1)
    lists = seeded.queries("list")
    assert lists[0] == {"resourceVersion": "0", "limit": "2"}
    # continuation pages carry only continue + limit (no resourceVersion)
    assert all(set(q) == {"continue", "limit"} for q in lists[1:]) and len(lists) == 3
    assert keys(store) == [f"default/{n}" for n in "abcde"]
    watch = seeded.queries("watch")[0]
    assert watch["resourceVersion"] == "105"
    assert watch["allowWatchBookmarks"] == "true"
    assert 300 <= int(watch["timeoutSeconds"]) < 600
    assert run.reflector.last_sync_resource_version() == "105"


def test_watch_events_and_bookmarks_update_store_and_rv(seeded: ScriptedServer, run: Running,
                                                        store: ThreadSafeStore[Any]) -> None:
    assert eventually(lambda: seeded.open_watches() == 1)
    seeded.put("f")
    seeded.put("a", color="red")
    seeded.remove("b")
    assert eventually(lambda: keys(store) == [f"default/{n}" for n in "acdef"])
    assert eventually(lambda: store.get_by_key("default/a").spec == {"color": "red"})  # type: ignore[union-attr]
    rv = seeded.bookmark()
    assert eventually(lambda: run.reflector.last_sync_resource_version() == str(rv))


def test_normal_close_and_dropped_connection_rewatch_without_relist(seeded: ScriptedServer, run: Running,
                                                                    store: ThreadSafeStore[Any]) -> None:
    assert eventually(lambda: seeded.open_watches() == 1)
    seeded.put("x")
    assert eventually(lambda: "default/x" in store)
    seeded.end_watches("normal")
    assert eventually(lambda: len(seeded.queries("watch")) == 2 and seeded.open_watches() == 1)
    assert seeded.queries("watch")[1]["resourceVersion"] == str(seeded.rv)
    seeded.put("y")
    assert eventually(lambda: "default/y" in store)
    seeded.end_watches("drop")
    assert eventually(lambda: len(seeded.queries("watch")) == 3 and seeded.open_watches() == 1)
    assert seeded.queries("watch")[2]["resourceVersion"] == str(seeded.rv)
    assert len([q for q in seeded.queries("list") if "continue" not in q]) == 1, "no re-list expected"


def test_expired_mid_watch_relists_at_last_rv_then_from_scratch(seeded: ScriptedServer, run: Running,
                                                                 store: ThreadSafeStore[Any]) -> None:
    assert eventually(lambda: seeded.open_watches() == 1)
    seeded.remove("c", quiet=True)  # missed by the watch
    seeded.expire_below = seeded.rv  # everything before the latest version is compacted
    seeded.end_watches("expired")
    assert eventually(lambda: "default/c" not in store)
    starts = [q.get("resourceVersion") for q in seeded.queries("list") if "continue" not in q]
    assert starts == ["0", "105", ""]
    assert any(getattr(e, "code", None) == 410 for e in run.errors)
    assert eventually(lambda: seeded.open_watches() == 1)


def test_expired_continue_token_falls_back_to_full_list(server: ScriptedServer, lw: HTTPListerWatcher) -> None:
    for name in "abcde":
        server.put(name)
    server.expire_continue = True
    store = new_store()
    r = Reflector(lw, store, page_size=2)
    assert r.list() == "105"
    lists = server.queries("list")
    assert lists[-1] == {"resourceVersion": "0"}  # unpaged, at the requested version
    assert keys(store) == [f"default/{n}" for n in "abcde"]


def test_relist_at_specific_rv_is_unpaged_unless_server_paged(server: ScriptedServer, lw: HTTPListerWatcher) -> None:
    server.put("a")
    r = Reflector(lw, new_store(), page_size=2)
    r.list()
    r.list()
    assert server.queries("list")[-1] == {"resourceVersion": "101"}
    for name in "bcd":
        server.put(name)
    r2 = Reflector(lw, new_store(), page_size=2)
    r2.list()  # "0" paged -> the server honours paging
    r2.list()
    first_of_relist = [q for q in server.queries("list") if "continue" not in q][-1]
    assert first_of_relist == {"resourceVersion": "104", "limit": "2"}


def test_list_failure_reports_and_retries(server: ScriptedServer, lw: HTTPListerWatcher) -> None:
    server.put("a")
    server.fail_lists = 2
    store = new_store()
    r = Running(Reflector(lw, store, backoff=fast_backoff()))
    try:
        assert eventually(lambda: "default/a" in store)
        assert [getattr(e, "code", None) for e in r.errors[:2]] == [500, 500]
    finally:
        r.stop.set()
        r.thread.join(5)


def test_watch_open_expired_relists(server: ScriptedServer, lw: HTTPListerWatcher) -> None:
    """A 410 when opening the watch (list answered from a stale cache) leads to a re-list."""
    server.put("a")
    server.expire_below = 10_000  # every watch start is too old; lists at "0" and "" still work
    store = new_store()
    r = Running(Reflector(lw, store, backoff=fast_backoff()))
    try:
        assert eventually(lambda: len(server.queries("list")) >= 3)
        assert any(getattr(e, "code", None) == 410 for e in r.errors)
    finally:
        r.stop.set()
        r.thread.join(5)


class _MemoryWatch:
    def __init__(self) -> None:
        self.stopped = threading.Event()

    def __iter__(self) -> Iterator[Any]:
        self.stopped.wait(10)
        return iter(())

    def stop(self) -> None:
        self.stopped.set()


class _FlakyWatchLW:
    """Lists fine; the first watch open answers 429, later ones succeed."""

    def __init__(self) -> None:
        self.lists = 0
        self.watches = 0

    def list(self, options: Any) -> Any:
        from samplecontroller.client.types import ListResult

        self.lists += 1
        return ListResult([], "7")

    def watch(self, options: Any) -> _MemoryWatch:
        from samplecontroller.apimachinery import errors

        self.watches += 1
        if self.watches == 1:
            raise errors.from_status(errors.new_status(429, "TooManyRequests", "slow down"))
        return _MemoryWatch()


def test_429_on_watch_open_retries_watch_without_relist() -> None:
    lw = _FlakyWatchLW()
    r = Running(Reflector(lw, new_store(), backoff=fast_backoff()))
    try:
        assert eventually(lambda: lw.watches == 2)
        assert lw.lists == 1
    finally:
        r.stop.set()
        r.thread.join(5)
    assert not r.thread.is_alive()


def test_error_classifiers() -> None:
    from samplecontroller.apimachinery import errors
    from samplecontroller.cache.reflector import is_too_large_resource_version, is_watch_error_retriable
    from samplecontroller.rest import TransportError

    too_large = errors.from_status(errors.new_status(504, "Timeout", "Too large resource version: 5, current: 3",
                                                     {"causes": [{"reason": "ResourceVersionTooLarge"}]}))
    assert is_too_large_resource_version(too_large)
    assert not is_too_large_resource_version(errors.from_status(errors.new_status(504, "Timeout", "slow")))
    assert is_watch_error_retriable(TransportError("cannot reach the API server at x: Connection refused"))
    assert not is_watch_error_retriable(errors.from_status(errors.new_status(500, "InternalError", "x")))
