"""Store/Indexer: key functions, indexes, and a hypothesis model check under random operations."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    KeyFuncError,
    ThreadSafeStore,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_index_func,
    meta_namespace_key_func,
    new_indexer,
    new_store,
    split_meta_namespace_key,
)
from tests.cache.scripted import Meta, Obj


def obj(name: str, ns: str = "default", labels: dict[str, str] | None = None, rv: str = "1") -> Obj:
    return Obj(metadata=Meta(name=name, namespace=ns, labels=labels or {}, resource_version=rv))


def by_label(o: Any) -> list[str]:
    return sorted(f"{k}={v}" for k, v in o.metadata.labels.items())


def test_key_funcs() -> None:
    assert meta_namespace_key_func(obj("a", "ns")) == "ns/a"
    assert meta_namespace_key_func(obj("a", "")) == "a"
    assert meta_namespace_key_func({"metadata": {"name": "n", "namespace": "x"}}) == "x/n"
    assert meta_namespace_key_func("ns/explicit") == "ns/explicit"
    tomb = DeletedFinalStateUnknown("ns/gone", None)
    assert deletion_handling_meta_namespace_key_func(tomb) == "ns/gone"
    with pytest.raises(KeyFuncError, match=r"no metadata\.name"):
        meta_namespace_key_func({"metadata": {}})
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    with pytest.raises(ValueError, match="unexpected key format"):
        split_meta_namespace_key("a/b/c")


def test_store_basic_and_tombstone_delete() -> None:
    s = new_store()
    a, b = obj("a"), obj("b", "other")
    s.add(a)
    s.add(b)
    assert s.get_by_key("default/a") is a
    assert s.get(obj("a")) is a
    assert sorted(s.list_keys()) == ["default/a", "other/b"]
    s.delete(DeletedFinalStateUnknown("default/a", None))
    assert s.get_by_key("default/a") is None
    s.delete(obj("missing"))  # absent: no error
    assert len(s) == 1


def test_indexer_index_functions() -> None:
    idx = new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "label": by_label})
    idx.add(obj("a", "ns1", {"app": "x", "tier": "web"}))
    idx.add(obj("b", "ns1", {"app": "y"}))
    idx.add(obj("c", "ns2", {"app": "x"}))
    assert sorted(o.metadata.name for o in idx.by_index(NAMESPACE_INDEX, "ns1")) == ["a", "b"]
    assert sorted(idx.index_keys("label", "app=x")) == ["ns1/a", "ns2/c"]
    assert sorted(idx.list_index_func_values("label")) == ["app=x", "app=y", "tier=web"]
    # index(): objects sharing any value with the probe
    assert sorted(o.metadata.name for o in idx.index("label", obj("p", labels={"app": "y", "tier": "web"}))) == ["a", "b"]
    # an update moves the key between index values
    idx.update(obj("a", "ns1", {"app": "y"}))
    assert idx.index_keys("label", "app=x") == ["ns2/c"]
    assert "tier=web" not in idx.list_index_func_values("label")
    with pytest.raises(KeyError, match="does not exist"):
        idx.by_index("nope", "x")


def test_add_indexers_indexes_existing_and_rejects_clash() -> None:
    idx = new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    idx.add(obj("a", labels={"app": "x"}))
    idx.add_indexers({"label": by_label})
    assert idx.index_keys("label", "app=x") == ["default/a"]
    with pytest.raises(ValueError, match="indexer conflict"):
        idx.add_indexers({NAMESPACE_INDEX: meta_namespace_index_func})


def test_replace_rebuilds_indexes() -> None:
    idx = new_indexer(indexers={"label": by_label})
    idx.add(obj("a", labels={"app": "x"}))
    idx.replace([obj("b", labels={"app": "y"})], "5")
    assert idx.list_keys() == ["default/b"]
    assert idx.list_index_func_values("label") == ["app=y"]


names = st.sampled_from(["a", "b", "c", "d"])
namespaces = st.sampled_from(["n1", "n2", ""])
label_sets = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]), max_size=2)
objects = st.builds(obj, names, namespaces, label_sets)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), objects),
        st.tuples(st.just("update"), objects),
        st.tuples(st.just("delete"), objects),
        st.tuples(st.just("replace"), st.lists(objects, max_size=5)),
        st.tuples(st.just("add_indexers"), st.just(None)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_indexer_matches_model(operations: list[tuple[str, Any]]) -> None:
    """After any sequence of operations, every index equals the one recomputed from the items."""
    idx: ThreadSafeStore[Obj] = new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    model: dict[str, Obj] = {}
    funcs: dict[str, Any] = {NAMESPACE_INDEX: meta_namespace_index_func}
    for op, arg in operations:
        if op in ("add", "update"):
            idx.add(arg) if op == "add" else idx.update(arg)
            model[meta_namespace_key_func(arg)] = arg
        elif op == "delete":
            idx.delete(arg)
            model.pop(meta_namespace_key_func(arg), None)
        elif op == "replace":
            idx.replace(arg)
            model = {meta_namespace_key_func(o): o for o in arg}
        elif "label" not in funcs:
            idx.add_indexers({"label": by_label})
            funcs["label"] = by_label
    assert {meta_namespace_key_func(o): o for o in idx.list()} == model
    assert sorted(idx.list_keys()) == sorted(model)
    for name, fn in funcs.items():
        expected: dict[str, set[str]] = {}
        for key, o in model.items():
            for v in fn(o):
                expected.setdefault(v, set()).add(key)
        assert {v: set(idx.index_keys(name, v)) for v in idx.list_index_func_values(name)} == expected
