"""The kine-style store: revisions, snapshots, compaction, restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samplecontroller.apiserver.storage import Expired, Store


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
    assert [ev.type for ev in store.events_since(rev_a1, "g/r")] == ["ADDED", "MODIFIED", "DELETED", "ADDED"]
    store.compact(rev_mid)
    with pytest.raises(Expired):
        store.events_since(rev_a1, "g/r")
    with pytest.raises(Expired):
        store.snapshot("g/r", "ns", rev_a1)
    assert [(k[1], e.obj["v"]) for k, e in store.snapshot("g/r", "ns", rev_mid)] == [("a", 2)]
    rows = store._db.execute("SELECT COUNT(*) FROM kine").fetchone()[0]
    assert rows == 2  # a@2 and c@1 survive compaction
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
