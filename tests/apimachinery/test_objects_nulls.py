"""``objects.decode``/``from_dict`` read a null that the model has no place for as absent, as Go's
encoding/json does and kube-apiserver prunes it (issue 17: manifests the server accepts must
decode into the typed models; 3 corpus examples carried `null` in non-nullable status fields)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec import UNSET, UnsetType, field

from generated.apis.samplecontroller.v1alpha1 import Foo
from samplecontroller.apimachinery import objects


class Item(msgspec.Struct, frozen=True, kw_only=True):
    name: str = ""
    note: str | UnsetType = UNSET


class Status(msgspec.Struct, frozen=True, kw_only=True):
    phase: str | UnsetType = UNSET
    message: str | UnsetType | None = UNSET  # nullable: true
    count: int = 0  # required: Go's zero value when absent
    items: tuple[Item, ...] | UnsetType = UNSET
    by_name: dict[str, Item] | UnsetType = field(name="byName", default=UNSET)
    extra: Any = UNSET  # x-kubernetes-preserve-unknown-fields without a type: any JSON value


class Thing(msgspec.Struct, frozen=True, kw_only=True):
    status: Status | UnsetType = UNSET


def test_null_in_a_field_that_is_not_nullable_is_absent() -> None:
    raw = (b'{"status": {"phase": null, "message": null, "count": null, "items": [{"name": "a", "note": null}],'
           b' "byName": {"b": {"name": null}}, "extra": null}}')
    thing = objects.decode(Thing, raw)
    assert isinstance(thing.status, Status)
    assert thing.status.phase is UNSET
    assert thing.status.message is None  # nullable: kept
    assert thing.status.count == 0
    assert thing.status.items == (Item(name="a"),)
    assert thing.status.by_name == {"b": Item()}
    assert thing.status.extra is None  # any JSON value: null is a value
    assert objects.encode(thing) == b'{"status":{"message":null,"count":0,"items":[{"name":"a"}],"byName":{"b":{"name":""}},"extra":null}}'


def test_from_dict_and_a_generated_model() -> None:
    foo = objects.from_dict(Foo, {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                  "metadata": {"name": "f", "labels": None},
                                  "spec": {"deploymentName": "d", "replicas": None}, "status": None})
    assert foo.metadata.name == "f" and foo.metadata.labels is UNSET
    assert foo.spec is not UNSET and foo.spec.deployment_name == "d" and foo.spec.replicas is UNSET
    assert foo.status is UNSET


def test_other_type_errors_still_raise() -> None:
    with pytest.raises(msgspec.ValidationError):
        objects.decode(Thing, b'{"status": {"phase": 3}}')
    with pytest.raises(msgspec.ValidationError):
        objects.decode(Thing, b'{"status": {"phase": null, "count": "x"}}')
