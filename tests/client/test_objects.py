"""apimachinery.objects: wire dicts, decoding, changed copies and deep copies."""

from __future__ import annotations

import msgspec
import pytest

from samplecontroller.apimachinery import objects

from .conftest import ObjectMeta, Widget, WidgetSpec, widget


def test_to_dict_gives_the_wire_form() -> None:
    d = objects.to_dict(widget("a", replicas=2, app="x"))
    assert d == {"apiVersion": "example.com/v1", "kind": "Widget",
                 "metadata": {"name": "a", "namespace": "default", "labels": {"app": "x"}},
                 "spec": {"replicas": 2}}
    src = {"a": {"b": [1]}}
    copied = objects.to_dict(src)
    copied["a"]["b"].append(2)
    assert src == {"a": {"b": [1]}}, "a dict is deep-copied"
    with pytest.raises(TypeError, match="JSON object"):
        objects.to_dict([1, 2])


def test_from_dict_decode_encode_round_trip() -> None:
    w = widget("a", replicas=3)
    assert objects.from_dict(Widget, objects.to_dict(w)) == w
    assert objects.decode(Widget, objects.encode(w)) == w
    assert objects.decode(dict, b'{"x":1}') == {"x": 1}
    d = {"metadata": {"resourceVersion": "5"}}
    assert objects.from_dict(Widget, d).metadata.resource_version == "5"
    assert objects.from_dict(dict, d) == d and objects.from_dict(dict, d) is not d
    with pytest.raises(msgspec.ValidationError):
        objects.from_dict(Widget, {"spec": {"replicas": "three"}})


def test_replace_and_deep_copy() -> None:
    w = widget("a", app="x")
    changed = objects.replace(w, spec=WidgetSpec(replicas=9))
    assert changed.spec == WidgetSpec(replicas=9) and w.spec == WidgetSpec(replicas=1)
    assert objects.replace({"a": 1, "b": 2}, b=3) == {"a": 1, "b": 3}
    copy = objects.deep_copy(w)
    assert copy == w and copy.metadata.labels is not w.metadata.labels
    nested = {"m": {"k": [1]}}
    dc = objects.deep_copy(nested)
    dc["m"]["k"].append(2)
    assert nested == {"m": {"k": [1]}}
    with pytest.raises(TypeError):
        objects.replace(ObjectMeta(), no_such_field=1)
