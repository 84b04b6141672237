"""Owner and controller references: metav1's controller_ref.go and controller-runtime's
controllerutil (SetControllerReference, SetOwnerReference, RemoveOwnerReference) cases, on generated
structs and on dicts."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery.ownerreferences import (
    AlreadyOwnedError,
    get_controller_of,
    has_controller_reference,
    is_controlled_by,
    new_controller_ref,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from samplecontroller.kubernetes.apis.apps.v1 import Deployment
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Namespace
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta, OwnerReference

FOO_GVK = ("samplecontroller.k8s.io", "v1alpha1", "Foo")


def foo(name: str = "owner", uid: str = "uid-1", ns: str = "ns") -> Foo:
    return Foo(metadata=ObjectMeta(name=name, namespace=ns, uid=uid))


def config_map(ns: str = "ns", refs: tuple[OwnerReference, ...] = ()) -> ConfigMap:
    if refs:
        return ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns, owner_references=refs))
    return ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns))


def test_new_controller_ref() -> None:
    expected = OwnerReference(api_version="samplecontroller.k8s.io/v1alpha1", kind="Foo", name="owner",
                              uid="uid-1", controller=True, block_owner_deletion=True)
    assert new_controller_ref(foo(), FOO_GVK, ref_type=OwnerReference) == expected
    # the gvk defaults to the model's own apiVersion and kind
    assert new_controller_ref(foo(), ref_type=OwnerReference) == expected
    assert new_controller_ref(foo()) == {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                          "name": "owner", "uid": "uid-1", "controller": True,
                                          "blockOwnerDeletion": True}
    # the core group has no group prefix
    assert new_controller_ref(Namespace(metadata=ObjectMeta(name="n", uid="u")))["apiVersion"] == "v1"


def test_new_controller_ref_needs_a_created_owner_and_its_kind() -> None:
    with pytest.raises(ValueError, match="name and a uid"):
        new_controller_ref(Foo(metadata=ObjectMeta(name="x")))
    with pytest.raises(ValueError, match="pass gvk"):
        new_controller_ref({"metadata": {"name": "x", "uid": "u"}})
    assert new_controller_ref({"metadata": {"name": "x", "uid": "u"}}, ("", "v1", "Secret"))["kind"] == "Secret"


def test_set_controller_reference_adds_and_keeps_the_argument() -> None:
    cm = config_map()
    owned = set_controller_reference(foo(), cm)
    assert cm.metadata.owner_references == config_map().metadata.owner_references
    assert owned.metadata.owner_references == (new_controller_ref(foo(), ref_type=OwnerReference),)
    assert get_controller_of(owned) is not None
    assert has_controller_reference(owned) and not has_controller_reference(cm)
    assert is_controlled_by(owned, foo())
    assert not is_controlled_by(owned, foo(uid="uid-2"))
    assert not is_controlled_by(cm, foo())
    # setting it again changes nothing and returns the same object
    assert set_controller_reference(foo(), owned) is owned


def test_set_controller_reference_refuses_another_controller() -> None:
    owned = set_controller_reference(foo(), config_map())
    with pytest.raises(AlreadyOwnedError, match="already owned by another Foo controller owner"):
        set_controller_reference(foo("other", "uid-2"), owned)


def test_set_controller_reference_replaces_a_reference_to_the_same_object() -> None:
    # controller-runtime's referSameObject: API group, kind and name (a recreated owner has a new uid)
    owned = set_controller_reference(foo(), config_map())
    again = set_controller_reference(foo(uid="uid-2"), owned)
    assert again.metadata.owner_references == (new_controller_ref(foo(uid="uid-2"), ref_type=OwnerReference),)
    # a plain owner reference becomes the controller reference
    plain = set_owner_reference(foo(), config_map())
    assert set_controller_reference(foo(), plain).metadata.owner_references == owned.metadata.owner_references


def test_set_owner_reference_appends_owners() -> None:
    one = set_owner_reference(foo("a", "ua"), config_map())
    two = set_owner_reference(foo("b", "ub"), one)
    refs = two.metadata.owner_references
    assert isinstance(refs, tuple)
    assert [(r.name, r.controller) for r in refs] == [("a", msgspec.UNSET), ("b", msgspec.UNSET)]
    assert not has_controller_reference(two)


@pytest.mark.parametrize(("owner_ns", "obj_ns", "message"), [
    ("ns", "other", "cross-namespace owner references are disallowed"),
    ("ns", "", "cluster-scoped resource must not have a namespace-scoped owner"),
])
def test_owner_namespace_is_validated(owner_ns: str, obj_ns: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        set_controller_reference(foo(ns=owner_ns), config_map(ns=obj_ns))
    with pytest.raises(ValueError, match=message):
        set_owner_reference(foo(ns=owner_ns), config_map(ns=obj_ns))


def test_a_cluster_scoped_owner_may_own_anything() -> None:
    owner = Namespace(metadata=ObjectMeta(name="n", uid="u"))
    assert is_controlled_by(set_controller_reference(owner, config_map()), owner)


def test_remove_owner_reference() -> None:
    two = set_owner_reference(foo("b", "ub"), set_owner_reference(foo("a", "ua"), config_map()))
    one, changed = remove_owner_reference(foo("a", "ua"), two)
    assert changed
    assert [r.name for r in one.metadata.owner_references or ()] == ["b"]
    assert remove_owner_reference(foo("a", "ua"), one) == (one, False)
    none, changed = remove_owner_reference(foo("b", "ub"), one)
    assert changed and none == config_map()


def test_dicts() -> None:
    cm: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}
    owner: dict[str, Any] = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                             "metadata": {"name": "owner", "namespace": "ns", "uid": "uid-1"}}
    owned = set_controller_reference(owner, cm)
    assert owned["metadata"]["ownerReferences"] == [new_controller_ref(owner)]
    assert "ownerReferences" not in cm["metadata"]
    assert is_controlled_by(owned, owner)
    assert remove_owner_reference(owner, owned)[0] == cm


def test_other_models_keep_their_fields() -> None:
    dep = Deployment(metadata=ObjectMeta(name="d", namespace="ns", labels={"a": "b"}))
    owned = set_controller_reference(foo(), dep)
    assert owned.metadata.labels == {"a": "b"}
    assert isinstance(owned, Deployment)
