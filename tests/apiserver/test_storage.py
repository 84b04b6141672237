"""The kine-style store: revisions, snapshots, compaction, restart."""

from __future__ import annotations

import asyncio
import itertools
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samplecontroller.apiserver.revisions import SQLiteTable
from samplecontroller.apiserver.storage import ROWS_COMPACT_BATCH, Event, Expired, Store


def obj(name: str, value: int) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "ns"}, "v": value}


def test_revisions_snapshots_and_compaction(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put("g/r", obj("a", 1))
    rev_a1 = store.rev
    store.put("g/r", obj("b", 1))
    store.put("g/r", obj("a", 2))
    store.delete("g/r", "ns", "b")
    rev_mid = store.rev
    store.put("g/r", obj("c", 1))
    assert [e.obj["v"] for _, e in store.snapshot("g/r", "ns", rev_a1)] == [1]
    assert [(k[1], e.obj["v"]) for k, e in store.snapshot("g/r", None, rev_mid)] == [("a", 2)]
    store.flush()  # the history holds committed events
    assert [ev.type for ev in store.events_since(rev_a1, "g/r")] == ["ADDED", "MODIFIED", "DELETED", "ADDED"]
    store.compact(rev_mid)
    with pytest.raises(Expired):
        store.events_since(rev_a1, "g/r")
    with pytest.raises(Expired):
        store.snapshot("g/r", "ns", rev_a1)
    assert [(k[1], e.obj["v"]) for k, e in store.snapshot("g/r", "ns", rev_mid)] == [("a", 2)]
    assert store.table.count() == 2  # a@2 and c@1 survive compaction
    last = store.rev
    store.close()
    again = Store(tmp_path)
    assert again.rev == last and sorted(k[1] for k, _ in again.list("g/r", "ns")) == ["a", "c"]
    assert again.get("g/r", "ns", "a").obj["metadata"]["resourceVersion"] == str(rev_mid - 1)  # type: ignore[union-attr]
    again.close()


_ops = st.lists(st.tuples(st.sampled_from(["put", "delete", "list"]), st.sampled_from(["a", "b", "c", ""]),
                          st.sampled_from(["x", "y", "z"])), max_size=60)


@given(ops=_ops)
def test_namespaced_keys_agree_with_the_data(ops: list[tuple[str, str, str]]) -> None:
    """The per-namespace index and the sorted-key cache always agree with the stored objects."""
    store = Store()
    try:
        for op, ns, name in ops:
            if op == "put":
                store.put("g/things", {"metadata": {"namespace": ns, "name": name}})
            elif op == "delete":
                store.delete("g/things", ns, name)
            else:
                store.keys("g/things", ns)
                store.keys("g/things", None)
            bucket = store.data.get("g/things") or {}
            for namespace in ("a", "b", "c", ""):
                assert store.keys("g/things", namespace) == sorted(k for k in bucket if k[0] == namespace)
            assert store.keys("g/things", None) == sorted(bucket)
    finally:
        store.close()


_walk_ops = st.lists(st.tuples(st.sampled_from(["put", "put", "delete", "page"]), st.sampled_from(["a", "a-b", ""]),
                               st.sampled_from(["x", "y", "z", "w"])), max_size=50)


@given(before=_walk_ops, during=_walk_ops, namespace=st.sampled_from([None, "a", "a-b"]))
def test_a_seek_walks_the_snapshot_of_its_revision_while_writes_go_on(
        before: list[tuple[str, str, str]], during: list[tuple[str, str, str]], namespace: str | None) -> None:
    """A paginated walk (``seek`` from the last key, at the first page's revision) sees exactly
    the objects of that revision, in key order, whatever is created, updated or deleted between
    its pages; ``remaining_after`` counts what follows in that snapshot."""
    store = Store()
    try:
        def write(op: str, ns: str, name: str, n: int) -> None:
            if op == "put":
                store.put("g/things", {"metadata": {"namespace": ns, "name": name}, "n": n})
            elif op == "delete":
                store.delete("g/things", ns, name)
        for n, (op, ns, name) in enumerate(before):
            write(op, ns, name, n)
        rev = store.rev
        expected = [(k, e.raw) for k, e in store.list("g/things", namespace)]
        walked: list[tuple[tuple[str, str], bytes]] = []
        after = None
        pages = iter(during)
        while True:
            page = store.seek("g/things", namespace, rev, after)
            items = list(itertools.islice(iter(page), 2))
            walked += [(k, e.raw) for k, e in items]
            if len(items) < 2:
                break
            after = items[-1][0]
            assert page.remaining_after(after) == len(expected) - len(walked)
            for op, ns, name in itertools.islice(pages, 3):  # writes between the pages
                write(op, ns, name, 100 + len(walked))
        assert walked == expected
        assert [(k, e.raw) for k, e in store.snapshot("g/things", namespace, rev)] == expected
    finally:
        store.close()


def test_a_seek_from_a_compacted_revision_is_expired() -> None:
    store = Store()
    try:
        store.put("g/r", obj("a", 1))
        rev = store.rev
        store.put("g/r", obj("a", 2))
        assert [e.obj["v"] for _, e in store.seek("g/r", "ns", rev)] == [1]
        store.compact()
        with pytest.raises(Expired):
            store.seek("g/r", "ns", rev)
        assert [e.obj["v"] for _, e in store.seek("g/r", "ns", store.rev)] == [2]
    finally:
        store.close()


def _crash(store: Store) -> None:
    """Abandon ``store`` as kill -9 would: no close, no final write; only the directory lock goes
    (the kernel drops it with the process)."""
    assert store._lock_fd is not None
    os.close(store._lock_fd)
    store._lock_fd = None


def _rows(data_dir: Path) -> int:
    """Committed rows as another process sees them (a second connection on the file)."""
    other = sqlite3.connect(str(data_dir / "state.db"))
    try:
        return int(other.execute("SELECT COUNT(*) FROM kine").fetchone()[0])
    finally:
        other.close()


def test_the_revision_is_never_reused_after_a_crash(tmp_path: Path) -> None:
    """The revision counter is committed with the rows: compacting the tombstone of the newest
    revision and then crashing must not hand that revision out again."""
    store = Store(tmp_path)
    store.put("g/r", obj("a", 1))
    store.delete("g/r", "ns", "a")
    last = store.rev
    store.compact()
    _crash(store)
    again = Store(tmp_path)
    try:
        assert again.rev == last
        assert again.put("g/r", obj("b", 1)).rev == last + 1
    finally:
        again.close()


def test_writes_of_one_loop_turn_are_committed_together_before_watchers_see_them(tmp_path: Path) -> None:
    """Group commit: the writes made in one event-loop turn become durable in one transaction on
    the next turn; ``durable()`` resolves then, and only then do watchers get the events."""

    async def scenario() -> None:
        store = Store(tmp_path)
        try:
            watcher = store.subscribe("g/r", None)
            store.put("g/r", obj("a", 1))
            store.put("g/r", obj("b", 1))
            assert watcher.buffer == [] and _rows(tmp_path) == 0
            assert store.events_since(0, "g/r") == []  # the history holds committed events only
            waiting = store.durable()
            assert waiting is not None
            await waiting
            assert _rows(tmp_path) == 2 and [ev.name for ev in watcher.drain()] == ["a", "b"]
            assert store.durable() is None  # nothing left to wait for
        finally:
            store.close()

    asyncio.run(scenario())


def test_a_failed_commit_fails_the_waiting_writes_and_is_retried(tmp_path: Path) -> None:
    """If SQLite cannot commit (a full disk), the waiting requests get the error (never a success)
    and the rows stay queued: the next commit writes them."""

    async def scenario() -> None:
        store = Store(tmp_path)
        try:
            store.put("g/r", obj("a", 1))
            assert isinstance(store.table, SQLiteTable)
            store.table.db.execute("PRAGMA query_only=1")  # every write now fails
            with pytest.raises(sqlite3.Error):
                await store.durable()  # type: ignore[misc]
            store.table.db.execute("PRAGMA query_only=0")
            store.put("g/r", obj("b", 1))
            await store.durable()  # type: ignore[misc]
            assert _rows(tmp_path) == 2
        finally:
            store.close()

    asyncio.run(scenario())


def test_a_snapshot_shares_the_entries_unchanged_since_its_revision() -> None:
    store = Store(None)
    for i in range(5):
        store.put("g/r", obj(f"o{i}", 1))
    rev = store.rev
    store.put("g/r", obj("o0", 2))
    snap = dict(store.snapshot("g/r", "ns", rev))
    assert snap[("ns", "o0")].obj["v"] == 1  # changed since: decoded from history
    for i in range(1, 5):  # unchanged: the live entries themselves, no decoded copy
        assert snap[("ns", f"o{i}")] is store.get("g/r", "ns", f"o{i}")


def _view(events: list[Event]) -> list[tuple[str, int, bytes, object, bytes]]:
    return [(ev.type, ev.rev, ev.entry.raw, ev.prev, ev.line()) for ev in events]


def test_the_history_is_read_back_from_the_revision_table() -> None:
    """The store keeps no event objects for its history: a replay reads the same events back
    from the table (the live entry when still current), and its memory does not grow with the
    number of events (only one (time, revision) pair per commit)."""
    store = Store()
    store.compact(0)
    written = [store.put("g/r", obj("a", 1)), store.put("g/r", obj("b", 1)), store.put("g/r", obj("a", 2)),
               store.delete("g/r", "ns", "b"), store.put("other/r", obj("a", 1))]
    store.flush()
    replayed = store.events_since(0, "g/r")
    assert _view(replayed) == _view([ev for ev in written[:4] if ev is not None])
    assert [ev.type for ev in replayed] == ["ADDED", "ADDED", "MODIFIED", "DELETED"]
    assert replayed[2].entry is store.get("g/r", "ns", "a")  # current: the live entry, no copy
    assert replayed[2].prev == {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "1"}, "v": 1}
    assert [ev.rev for ev in store.events_since(2, "g/r")] == [3, 4]
    for i in range(1000):
        store.put("g/r", obj(f"n{i}", i))
        store.flush()
    assert len(store._commits) == 1001 and not hasattr(store, "history")
    store.close()


def test_tombstones_keep_no_value_and_replay_the_same_bytes() -> None:
    """A deletion's row holds no copy of the object; a replayed DELETED event still carries the
    object with the deletion's resourceVersion, and an event a watcher still buffers keeps its
    objects after their rows are compacted away."""
    store = Store()
    watcher = store.subscribe("g/r", None)
    store.put("g/r", {"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"}}, "spec": {"v": 1}})
    deleted = store.delete("g/r", "ns", "a")
    assert deleted is not None
    sent = deleted.line()
    store.put("g/r", obj("b", 1))
    store.flush()
    assert [store.table.row(deleted.rev)] == [(b"", 1, deleted.rev - 1)]
    [replayed] = [ev for ev in store.events_since(0, "g/r") if ev.type == "DELETED"]
    assert replayed.line() == sent and replayed is not deleted
    assert replayed.entry.obj["metadata"]["resourceVersion"] == str(deleted.rev)
    assert replayed.prev == {"metadata": {"name": "a", "namespace": "ns", "labels": {"x": "1"},
                                          "resourceVersion": str(deleted.rev - 1)}, "spec": {"v": 1}}
    held = watcher.buffer[1]
    store.compact()
    assert store.table.count(upto=2) == 0
    assert held.type == "DELETED" and held.line() == sent and held.prev == replayed.prev
    store.close()


def test_watch_selector_sees_every_transition_of_stored_events() -> None:
    """A selector watch's view of the store's events: entering the selection is ADDED, staying in
    it MODIFIED, leaving it DELETED, and changes wholly outside it are not shown."""
    from samplecontroller.apiserver.handlers.watch import _selected_type

    def labelled(name: str, x: str) -> dict[str, object]:
        return {"metadata": {"name": name, "namespace": "ns", "labels": {"x": x}}}

    def match(o: dict[str, Any]) -> bool:
        return bool(o["metadata"]["labels"]["x"] == "y")

    store = Store()
    events = [store.put("g/r", labelled("a", "n")), store.put("g/r", labelled("a", "y")),
              store.put("g/r", labelled("a", "y")), store.put("g/r", labelled("a", "n")),
              store.put("g/r", labelled("a", "n")), store.delete("g/r", "ns", "a"),
              store.put("g/r", labelled("b", "y")), store.delete("g/r", "ns", "b")]
    seen = [_selected_type(ev.type, ev.entry.obj, ev.prev, match) for ev in events if ev is not None]
    assert seen == [None, "ADDED", "MODIFIED", "DELETED", None, None, "ADDED", "DELETED"]
    store.flush()
    replayed = [_selected_type(ev.type, ev.entry.obj, ev.prev, match) for ev in store.events_since(0, "g/r")]
    assert replayed == seen


_op: st.SearchStrategy[tuple[str, str, str, str, int]] = st.tuples(
    st.sampled_from(["put", "put", "put", "delete", "flush", "compact"]), st.sampled_from(["g/r", "g/other"]),
    st.sampled_from(["ns", "ns2"]), st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 3))
_table_ops = st.lists(_op, max_size=60)


def _answers(store: Store, rev: int) -> list[object]:
    """Everything the store answers from its revision table about revision ``rev`` (an error's type)."""
    out: list[object] = []
    for query in (lambda: [(k, e.rev, e.raw) for k, e in store.snapshot("g/r", "ns", rev)],
                  lambda: [(k, e.rev, e.raw) for k, e in store.snapshot("g/r", None, rev)],
                  lambda: [(k, e.rev, e.raw) for k, e in store.seek("g/r", None, rev)],
                  lambda: [(k, e.rev, e.raw) for k, e in store.seek("g/r", "ns2", rev, ("ns2", "a"))],
                  lambda: _view(store.events_since(rev, "g/r")),
                  lambda: _view(store.events_since(rev, "g/other"))):
        try:
            out.append(query())
        except (Expired, LookupError) as err:
            out.append(type(err).__name__)
    return out


@given(_table_ops)
def test_the_memory_table_answers_as_the_sqlite_table(ops: list[tuple[str, str, str, str, int]]) -> None:
    """A store without a data directory keeps its revision table in memory; every query the store
    makes of it (snapshots, pages, replayed events, compaction) answers as SQLite's table does."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        memory, disk = Store(None), Store(Path(tmp))
        try:
            for op, skey, ns, name, value in ops:
                for store in (memory, disk):
                    if op == "put":
                        store.put(skey, {"metadata": {"name": name, "namespace": ns}, "v": value})
                    elif op == "delete":
                        store.delete(skey, ns, name)
                    elif op == "flush":
                        store.flush()
                    else:
                        store.compact(max(store.rev - value, 0))
            memory.flush()
            disk.flush()
            assert memory.table.count() == disk.table.count()
            for rev in range(memory.rev + 1):
                assert _answers(memory, rev) == _answers(disk, rev), rev
                assert memory.table.row(rev) == disk.table.row(rev)
        finally:
            memory.close()
            disk.close()


@pytest.mark.parametrize("on_disk", [False, True])
def test_rows_that_left_the_history_are_compacted_as_it_moves(tmp_path: Path, on_disk: bool) -> None:
    """A steady churn keeps a bounded number of rows (issue 43 item 6): the superseded rows and
    tombstones of revisions older than the history go once ``ROWS_COMPACT_BATCH`` revisions have
    left it, not after 10,000 writes whatever the objects' size."""
    store = Store(tmp_path if on_disk else None, history_window=0.0)  # every commit leaves the history
    try:
        peak = 0
        for i in range(2000):  # 6,000 writes: below the old 10,000-write trigger
            store.put("g/r", obj(f"o{i}", 1))
            store.put("g/r", obj(f"o{i}", 2))
            store.delete("g/r", "ns", f"o{i}")
            store.flush()
            peak = max(peak, store.table.count())
        assert peak <= 2 * ROWS_COMPACT_BATCH, peak
    finally:
        store.close()
