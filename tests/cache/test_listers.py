"""GenericLister / GenericNamespaceLister over an indexer."""

from __future__ import annotations

import pytest

from samplecontroller.apimachinery import errors, labels
from samplecontroller.cache import (
    NAMESPACE_INDEX,
    GenericLister,
    GenericNamespaceLister,
    meta_namespace_index_func,
    new_indexer,
)
from tests.cache.scripted import Meta, Obj


def obj(name: str, ns: str, **lbl: str) -> Obj:
    return Obj(metadata=Meta(name=name, namespace=ns, labels=lbl))


@pytest.fixture
def lister() -> GenericLister[Obj]:
    idx = new_indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for o in (obj("a", "n1", app="x"), obj("b", "n1", app="y"), obj("c", "n2", app="x")):
        idx.add(o)
    return GenericLister(idx, "objs.test.io")


def names(objs: list[Obj]) -> list[str]:
    return sorted(o.metadata.name for o in objs)


def test_list_with_selectors(lister: GenericLister[Obj]) -> None:
    assert names(lister.list()) == ["a", "b", "c"]
    assert names(lister.list("app=x")) == ["a", "c"]
    assert names(lister.list(labels.parse("app!=x"))) == ["b"]
    assert names(lister.list(labels.everything())) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        lister.list("app in (")


def test_namespace_lister(lister: GenericLister[Obj]) -> None:
    n1 = lister.by_namespace("n1")
    assert names(n1.list()) == ["a", "b"]
    assert names(n1.list("app=x")) == ["a"]
    assert n1.get("b").metadata.name == "b"
    with pytest.raises(errors.NotFoundError) as info:
        n1.get("c")
    assert 'objs.test.io "c" not found' in str(info.value.message)


def test_group_resource_forms() -> None:
    idx = new_indexer()
    assert (GenericLister(idx, "apps", "deployments").group, GenericLister(idx, "apps", "deployments").resource) == \
        ("apps", "deployments")
    assert GenericLister(idx, "pods").group == ""
    ns = GenericNamespaceLister(idx, "x", ("apps", "deployments"))
    with pytest.raises(errors.NotFoundError):
        ns.get("nope")
    with pytest.raises(errors.NotFoundError) as info:
        GenericLister(idx, "pods").get("p")
    assert errors.is_not_found(info.value)
