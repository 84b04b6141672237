"""Decode then encode gives the input back: no schema default or zero value added for what was not given,
and numbers written as Go writes them (``100``, not ``100.0``)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import msgspec
import pytest
import yaml

from samplecontroller.apimachinery import k8syaml, objects
from samplecontroller.codegen import generator
from tests.codegen.crd_from_openapi import crd

# external-secrets' Password generator: required properties the server defaults.
PASSWORD_SPEC = {
    "allowRepeat": {"type": "boolean", "default": False},
    "digits": {"type": "integer"},
    "length": {"type": "integer", "default": 24},
    "noUpper": {"type": "boolean", "default": False},
    "symbolCharacters": {"type": "string"},
    "name": {"type": "string"},
}
# Istio's percentage.value (a double).
PERCENT = {"percentage": {"type": "object", "properties": {"value": {"type": "number", "format": "double"}}}}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("exact")
    doc = crd("Password", {**PASSWORD_SPEC, **PERCENT}, group="generators.example.com")
    doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"] = [
        "allowRepeat", "length", "noUpper", "name"]
    (root / "crds").mkdir()
    (root / "crds" / "passwords.yaml").write_text(yaml.safe_dump(doc))
    assert generator.main(["--crds", str(root / "crds"), "--output", str(root / "exact_pkg"), "--package",
                           "exact_pkg"]) == 0
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("exact_pkg.apis.generators.v1")
    finally:
        sys.path.remove(str(root))


def test_no_schema_default_added(models: Any) -> None:
    wire = b'{"apiVersion":"generators.example.com/v1","kind":"Password","metadata":{"name":"p"},"spec":{"name":"x"}}'
    obj = msgspec.json.decode(wire, type=models.Password)
    assert objects.encode(obj) == wire  # not allowRepeat/noUpper false, not length 0 over the server's 24
    assert obj.spec.length is msgspec.UNSET
    assert obj.spec.name == "x"  # a required property without a default stays plain


def test_given_values_kept(models: Any) -> None:
    wire = (b'{"apiVersion":"generators.example.com/v1","kind":"Password","metadata":{"name":"p"},'
            b'"spec":{"allowRepeat":false,"length":0,"name":"","noUpper":true}}')
    assert objects.encode(msgspec.json.decode(wire, type=models.Password)) == wire


@pytest.mark.parametrize(("yaml_value", "go_json"), [
    ("100.0", b"100"), ("100", b"100"), ("12.5", b"12.5"), ("1e3", b"1000"), ("1.5e-7", b"1.5e-7"),
    ("1e21", b"1e+21"), ("0.000001", b"0.000001"), ("123456789.0", b"123456789"),
])
def test_numbers_as_go_writes_them(models: Any, yaml_value: str, go_json: bytes) -> None:
    """A manifest read as kubectl reads it and written back: sigs.k8s.io/yaml + encoding/json's bytes."""
    doc = k8syaml.load(f"apiVersion: generators.example.com/v1\nkind: Password\nmetadata: {{name: p}}\n"
                       f"spec: {{name: x, percentage: {{value: {yaml_value}}}}}\n")
    obj = objects.from_dict(models.Password, doc)
    assert objects.encode(obj).endswith(b'"percentage":{"value":' + go_json + b"}}}")
    again = msgspec.json.decode(objects.encode(obj), type=models.Password)
    assert objects.encode(again) == objects.encode(obj)


def test_strings_that_look_like_floats_are_untouched() -> None:
    data = {"a": "1.0", "b": ["x:1.0", ",2.0]"], "c": 'q"1.0', "d": 3.0}
    assert objects.encode(data) == b'{"a":"1.0","b":["x:1.0",",2.0]"],"c":"q\\"1.0","d":3}'
    assert objects.go_float(-0.0) == "-0" and objects.go_float(1e-7) == "1e-7"
