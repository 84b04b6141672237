"""Shared fixtures for the API server's pure-function units: the upstream Foo CRD."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

REFERENCE = Path("/work/shared/reference/sample-controller")
_FALLBACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "deploymentName": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}},
        "status": {"type": "object", "properties": {"availableReplicas": {"type": "integer"}}},
    },
}


@pytest.fixture
def foo_crd() -> dict[str, Any]:
    """The sample-controller Foo CRD (status subresource on)."""
    path = REFERENCE / "crd-status-subresource.yaml"
    if path.exists():
        loaded: dict[str, Any] = yaml.safe_load(path.read_text())
        return loaded
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.samplecontroller.k8s.io"},
        "spec": {"group": "samplecontroller.k8s.io", "scope": "Namespaced",
                 "names": {"kind": "Foo", "plural": "foos"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": copy.deepcopy(_FALLBACK_SCHEMA)},
                               "subresources": {"status": {}}}]},
    }


@pytest.fixture
def foo_schema(foo_crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = foo_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema
