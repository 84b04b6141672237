"""Finalizer helpers (controller-runtime's controllerutil, returning copies) on generated structs and dicts."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery.finalizers import (
    add_finalizer,
    contains_finalizer,
    remove_finalizer,
    with_finalizers,
)
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

F = "example.com/cleanup"


def test_add_and_remove_on_a_struct() -> None:
    foo = Foo(metadata=ObjectMeta(name="f", namespace="ns", finalizers=("other",)))
    added, changed = add_finalizer(foo, F)
    assert changed
    assert added.metadata.finalizers == ("other", F)
    assert foo.metadata.finalizers == ("other",)
    assert contains_finalizer(added, F) and not contains_finalizer(foo, F)
    assert add_finalizer(added, F) == (added, False)
    assert add_finalizer(added, F)[0] is added

    removed, changed = remove_finalizer(added, F)
    assert changed and removed == foo
    assert remove_finalizer(removed, F)[0] is removed
    assert remove_finalizer(removed, F)[1] is False


def test_the_last_finalizer_removed_leaves_the_field_absent() -> None:
    foo, _ = add_finalizer(Foo(metadata=ObjectMeta(name="f")), F)
    removed, changed = remove_finalizer(foo, F)
    assert changed
    assert removed.metadata.finalizers is msgspec.UNSET
    assert b"finalizers" not in msgspec.json.encode(removed)


def test_dicts() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}}
    added, changed = add_finalizer(obj, F)
    assert changed and added["metadata"]["finalizers"] == [F]
    assert obj == {"metadata": {"name": "x"}}
    assert contains_finalizer(added, F)
    removed, changed = remove_finalizer(added, F)
    assert changed and removed == obj


def test_with_finalizers_rejects_what_has_no_metadata() -> None:
    with pytest.raises(TypeError, match="neither"):
        with_finalizers(42, ["x"])
