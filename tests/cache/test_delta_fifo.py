"""DeltaFIFO: queueing, dedup of deletions, replace tombstones, resync, initial population."""

from __future__ import annotations

from typing import Any

import pytest

from samplecontroller.cache import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    new_store,
)
from samplecontroller.cache.delta_fifo import FIFOClosedError
from tests.cache.scripted import Meta, Obj


def obj(name: str, rv: str = "1") -> Obj:
    return Obj(metadata=Meta(name=name, namespace="ns", resource_version=rv))


def pop_all(f: DeltaFIFO) -> list[tuple[list[Delta], bool]]:
    out: list[tuple[list[Delta], bool]] = []
    while len(f):
        f.pop(lambda d, initial: out.append((d, initial)), timeout=30)
    return out


def test_one_queue_entry_per_key_in_fifo_order() -> None:
    f = DeltaFIFO()
    f.add(obj("a"))
    f.add(obj("b"))
    f.update(obj("a", "2"))
    assert f.list_keys() == ["ns/a", "ns/b"]
    popped = pop_all(f)
    assert [[d.type for d in deltas] for deltas, _ in popped] == [[ADDED, UPDATED], [ADDED]]


def test_delete_of_unknown_key_is_ignored() -> None:
    known = new_store()
    f = DeltaFIFO(known_objects=known)
    f.delete(obj("never-seen"))
    assert len(f) == 0
    known.add(obj("k"))
    f.delete(obj("k"))
    assert [d.type for d in f.get_by_key("ns/k") or []] == [DELETED]


def test_deletion_dedup_keeps_real_object_over_tombstone() -> None:
    f = DeltaFIFO()
    f.add(obj("a"))
    real = obj("a", "2")
    f.delete(real)
    f.delete(DeletedFinalStateUnknown("ns/a", None))
    deltas = f.get_by_key("ns/a") or []
    assert [d.type for d in deltas] == [ADDED, DELETED]
    assert deltas[-1].object is real
    # a tombstone followed by a real deletion keeps the real one
    g = DeltaFIFO()
    g.add(obj("b"))
    g.delete(DeletedFinalStateUnknown("ns/b", None))
    real_b = obj("b", "3")
    g.delete(real_b)
    assert (g.get_by_key("ns/b") or [])[-1].object is real_b


def test_replace_queues_tombstones_and_counts_initial_population() -> None:
    known = new_store()
    known.add(obj("old"))
    f = DeltaFIFO(known_objects=known)
    f.replace([obj("a"), obj("b")], "10")
    assert not f.has_synced()
    popped = pop_all(f)
    by_key = {f.key_of(deltas[0]): (deltas, initial) for deltas, initial in popped}
    assert [d.type for d in by_key["ns/a"][0]] == [REPLACED]
    tomb = by_key["ns/old"][0][0]
    assert tomb.type == DELETED and isinstance(tomb.object, DeletedFinalStateUnknown)
    assert tomb.object.obj.metadata.name == "old"
    assert all(initial for _, initial in popped)
    assert f.has_synced()
    f.add(obj("c"))
    pop_all_after = pop_all(f)
    assert pop_all_after[0][1] is False


def test_replace_tombstones_queued_but_unlisted_items() -> None:
    f = DeltaFIFO()
    f.add(obj("pending"))
    f.replace([obj("a")])
    deltas = f.get_by_key("ns/pending") or []
    assert [d.type for d in deltas] == [ADDED, DELETED]
    assert isinstance(deltas[-1].object, DeletedFinalStateUnknown)


def test_resync_skips_keys_with_pending_deltas() -> None:
    known = new_store()
    known.add(obj("a"))
    known.add(obj("b"))
    f = DeltaFIFO(known_objects=known)
    f.update(obj("a", "2"))
    f.resync()
    assert [d.type for d in f.get_by_key("ns/a") or []] == [UPDATED]
    assert [d.type for d in f.get_by_key("ns/b") or []] == [SYNC]


def test_transformer_applies_to_incoming_not_tombstones() -> None:
    seen: list[Any] = []

    def transform(o: Any) -> Any:
        seen.append(o)
        return o

    f = DeltaFIFO(transformer=transform)
    f.add(obj("a"))
    f.replace([obj("b")])
    assert [o.metadata.name for o in seen] == ["a", "b"]


def test_pop_timeout_and_close() -> None:
    f = DeltaFIFO()
    assert f.pop(lambda d, i: None, timeout=0.01) is False
    f.close()
    with pytest.raises(FIFOClosedError):
        f.pop(lambda d, i: None)


def test_pop_nowait_hands_out_what_is_queued_in_order_and_never_waits() -> None:
    f = DeltaFIFO()
    seen: list[tuple[str, bool]] = []

    def process(deltas: list[Delta], initial: bool) -> None:
        seen.append((deltas[-1].object.metadata.name, initial))

    assert f.pop_nowait(process) is False  # empty: at once, nothing called
    f.replace([obj("a"), obj("b")])
    f.add(obj("c"))
    while f.pop_nowait(process):
        pass
    assert seen == [("a", True), ("b", True), ("c", False)]
    assert f.has_synced()
    f.add(obj("d"))
    f.close()
    with pytest.raises(FIFOClosedError):
        f.pop_nowait(process)  # closed: pending items are dropped, as with pop
    assert [name for name, _ in seen] == ["a", "b", "c"]
