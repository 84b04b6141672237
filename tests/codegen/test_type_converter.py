"""The generated ``applyconfigurations.new_type_converter()`` (client-go's
``applyconfigurations.NewTypeConverter``): each kind's CRD schema as server-side apply reads it
(``fieldmanager.merge_schema``), a repeated part written once, and the generated fake clientsets'
``new_clientset`` built on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import fieldmanager, k8syaml
from samplecontroller.codegen import generator
from samplecontroller.kubernetes.clientset import fake as kube_fake
from samplecontroller.testing import FieldManagedObjectTracker

CORPUS = Path(__file__).resolve().parent / "testdata" / "corpus"
LISTMAPS = Path(__file__).resolve().parents[1] / "testdata" / "listmaps" / "crds"


def _crd_schemas(crds: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in sorted(crds.glob("*.yaml")):
        for doc in k8syaml.load_all(path.read_bytes()):
            spec = doc["spec"]
            for version in spec["versions"]:
                if version.get("served"):
                    key = (spec["group"], version["name"], spec["names"]["kind"])
                    out[key] = fieldmanager.merge_schema(version["schema"]["openAPIV3Schema"])
    return out


def _schemas_of(files: dict[str, str]) -> dict[tuple[str, str, str], dict[str, Any]]:
    namespace: dict[str, Any] = {}
    exec(compile(files["applyconfigurations/__init__.py"], "applyconfigurations", "exec"), namespace)
    schemas: dict[tuple[str, str, str], dict[str, Any]] = namespace["SCHEMAS"]
    assert namespace["new_type_converter"]().schemas == schemas
    return schemas


@pytest.mark.parametrize("crds", [CORPUS / "gateway-api" / "crds", CORPUS / "builtin-types" / "crds", LISTMAPS],
                         ids=["gateway-api", "builtin-types", "listmaps"])
def test_the_generated_schemas_are_the_crd_schemas_apply_reads(crds: Path) -> None:
    files = generator.generate(crds, generator.Target(package="pkg"))
    assert _schemas_of(files) == _crd_schemas(crds)


def test_a_part_found_twice_is_written_once(tmp_path: Path) -> None:
    """An inlined type (here three fields of one structure, as every PodSpec of Argo Workflows'
    templates) is one ``_S<n>`` named three times."""
    part = {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "properties": {"port": {"type": "integer"},
                                                             "protocol": {"type": "string"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "things.ex.example.com"},
           "spec": {"group": "ex.example.com", "scope": "Namespaced",
                    "names": {"kind": "Thing", "plural": "things", "singular": "thing"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "a": part, "b": part, "c": {"type": "array", "items": part}}}}}}}]}}
    (tmp_path / "thing.yaml").write_text(json.dumps(crd))
    files = generator.generate(tmp_path, generator.Target(package="pkg"))
    source = files["applyconfigurations/__init__.py"]
    assert source.count('"x-kubernetes-list-map-keys"') == 1  # written once
    assert source.count('"a": _S') == source.count('"b": _S') == source.count('"items": _S') == 1  # named thrice
    assert _schemas_of(files) == _crd_schemas(tmp_path)


def test_merge_schema_keeps_the_markers_and_the_paths_to_them() -> None:
    schema = {
        "type": "object", "description": "d", "required": ["spec"],
        "x-kubernetes-validations": [{"rule": "true"}],
        "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["port", "protocol"],
                          "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set",
                                                                      "items": {"type": "string"}}},
                "sel": {"type": "object", "x-kubernetes-map-type": "granular", "anyOf": [{"required": ["a"]}]},
                "bad": {"type": "array", "x-kubernetes-list-type": True, "x-kubernetes-list-map-keys": [1]},
            }},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    assert fieldmanager.merge_schema(schema) == {"properties": {"spec": {"properties": {
        "ports": {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"]},
        "labels": {"additionalProperties": {"x-kubernetes-list-type": "set"}},
        "sel": {"x-kubernetes-map-type": "granular"},
    }}}}


def test_the_generated_fake_clientsets_track_fields_with_their_converters() -> None:
    from generated.applyconfigurations import SCHEMAS
    from generated.clientset.fake import new_clientset

    tracker = new_clientset().tracker
    assert isinstance(tracker, FieldManagedObjectTracker)
    assert isinstance(tracker.type_converter, fieldmanager.SchemaTypeConverter)
    assert tracker.type_converter.schemas == SCHEMAS
    kube = kube_fake.new_clientset().tracker
    assert isinstance(kube, FieldManagedObjectTracker)
    assert kube.type_converter.schema_for("apps", "v1", "Deployment") == fieldmanager.TypeSchema(
        definition="io.k8s.api.apps.v1.Deployment")
    assert kube.type_converter.schema_for("samplecontroller.k8s.io", "v1alpha1", "Foo") is None
