"""The upstream definitions: lookup by GVK, $ref resolution, and that loading is cached."""

from __future__ import annotations

import pytest

from samplecontroller.apimachinery import openapi_schemas as o


@pytest.mark.parametrize(("gvk", "name"), [
    (("apps", "v1", "Deployment"), "io.k8s.api.apps.v1.Deployment"),
    (("", "v1", "Pod"), "io.k8s.api.core.v1.Pod"),
    (("coordination.k8s.io", "v1", "Lease"), "io.k8s.api.coordination.v1.Lease"),
    (("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
     "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"),
    (("samplecontroller.k8s.io", "v1alpha1", "Foo"), None),
])
def test_definition_name_for_gvk(gvk: tuple[str, str, str], name: str | None) -> None:
    assert o.definition_name_for_gvk(*gvk) == name


def test_resolve_follows_refs_and_keeps_field_extensions() -> None:
    spec = o.definition("io.k8s.api.apps.v1.Deployment")["properties"]["spec"]
    resolved = o.resolve(spec)
    assert "template" in resolved["properties"]
    containers = o.resolve(o.resolve(resolved["properties"]["template"])["properties"]["spec"])["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert o.resolve({"$ref": "#/$defs/does.not.Exist"}) == {}
    assert o.resolve("not a schema") == {}


def test_definitions_are_cached() -> None:
    assert o.definitions() is o.definitions()
    assert len(o.definitions()) > 500
    with pytest.raises(KeyError):
        o.definition("nope")
