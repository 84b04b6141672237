"""The generator refuses names that would escape the output directory or inject code, refuses
absurdly deep schemas with one line, and reads CRD YAML as Kubernetes does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from samplecontroller.apimachinery import k8syaml
from tests.codegen.test_generator import crd_doc, snapshot, write_crds


def with_names(**names: Any) -> dict[str, Any]:
    doc = crd_doc()
    doc["spec"]["names"].update(names)
    return doc


def with_version(name: str) -> dict[str, Any]:
    doc = crd_doc()
    doc["spec"]["versions"][0]["name"] = name
    return doc


def with_group(group: str) -> dict[str, Any]:
    doc = crd_doc()
    doc["spec"]["group"] = group
    return doc


def with_subresource(name: str) -> dict[str, Any]:
    doc = crd_doc()
    doc["spec"]["versions"][0]["subresources"] = {name: {}}
    return doc


BAD_NAMES: list[tuple[str, dict[str, Any], str]] = [
    ("version_path_traversal", with_version("../../x"), "spec.versions[0].name"),
    ("version_newline_injection", with_version("v1\nimport os\nos.system('true')"), "spec.versions[0].name"),
    ("version_uppercase", with_version("V1"), "spec.versions[0].name"),
    ("version_dash_not_a_module", with_version("v1-beta"), "spec.versions[0].name"),
    ("version_keyword", with_version("if"), "spec.versions[0].name"),
    ("group_uppercase", with_group("Things.example.com"), "spec.group"),
    ("group_slash", with_group("things.example.com/../../x"), "spec.group"),
    ("group_newline", with_group("things.example.com\nimport os"), "spec.group"),
    ("kind_newline", with_names(kind="Thing\nimport os"), "spec.names.kind"),
    ("kind_keyword", with_names(kind="None"), "spec.names.kind"),
    ("kind_shadows_struct", with_names(kind="Struct"), "spec.names.kind"),
    ("plural_uppercase", with_names(plural="Things"), "spec.names.plural"),
    ("plural_newline", with_names(plural="things\nimport os"), "spec.names.plural"),
    ("plural_path", with_names(plural="../things"), "spec.names.plural"),
    ("singular_uppercase", with_names(singular="Thing"), "spec.names.singular"),
    ("short_name_bad", with_names(shortNames=["t h"]), "spec.names.shortNames[0]"),
    ("unknown_subresource", with_subresource("evil\nimport os"), "spec.versions[0].subresources"),
]


@pytest.mark.parametrize(("doc", "field"), [(d, f) for _, d, f in BAD_NAMES], ids=[n for n, _, _ in BAD_NAMES])
def test_bad_names_exit_2_with_one_line_and_write_nothing(codegen: ModuleType, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          doc: dict[str, Any], field: str) -> None:
    crds = tmp_path / "in" / "crds"
    write_crds(crds, thing=doc)
    out = tmp_path / "work" / "deep" / "generated"
    before = snapshot(tmp_path)
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "thing.yaml" in err and field in err, err
    assert snapshot(tmp_path) == before, "the generator wrote files"


@pytest.mark.parametrize("name", ['evil"""\nimport os\n', "back\\slash"])
def test_crd_file_names_that_would_break_the_docstrings_are_refused(
        codegen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    crds = write_crds(tmp_path / "crds", **{name: crd_doc()})
    assert codegen.main(["--crds", str(crds), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file name" in err, err
    assert not (tmp_path / "out").exists()


def deep_schema_json(levels: int) -> str:
    return '{"type": "object", "properties": {"a": ' * levels + '{"type": "string"}' + "}}" * levels


def deep_schema_block(levels: int, indent: int) -> str:
    lines = []
    for i in range(levels):
        pad = " " * (indent + 4 * i)
        lines += [f"{pad}type: object", f"{pad}properties:", f"{pad}  a:"]
    return "\n".join([*lines, " " * (indent + 4 * levels) + "type: string"]) + "\n"


BLOCK_HEADER = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.things.example.com}
spec:
  group: things.example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
"""


@pytest.mark.parametrize("style", ["json", "block"])
def test_a_2000_level_schema_is_one_line_exit_2(codegen: ModuleType, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str], style: str) -> None:
    """As JSON (flow YAML) and as block YAML: no RecursionError traceback."""
    if style == "json":
        text = json.dumps(crd_doc(spec_props={"deep": "DEEP"})).replace('"DEEP"', deep_schema_json(2000))
    else:
        text = BLOCK_HEADER + deep_schema_block(2000, 8)
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "deep.yaml").write_text(text)
    out = tmp_path / "out"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "deep.yaml" in err, err
    assert not out.exists()


def test_schema_depth_limit_names_the_field(codegen: ModuleType, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Within the YAML limit but past the schema limit (arrays of arrays nest one mapping per level)."""
    items: dict[str, Any] = {"type": "string"}
    for _ in range(80):
        items = {"type": "array", "items": items}
    crds = write_crds(tmp_path / "crds", deep=crd_doc(spec_props={"xs": items}))
    assert codegen.main(["--crds", str(crds), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "deep.yaml" in err and "nested deeper than" in err, err


# Plain scalars PyYAML's SafeLoader mis-reads: `=` (YAML 1.1's !!value) and on/no as enum values
# and defaults, in the shape of prometheus-operator's AlertmanagerConfig matchers.
MATCHER_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: routes.alerting.example.io
spec:
  group: alerting.example.io
  names: {kind: Route, plural: routes, singular: route}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              matchers:
                type: array
                items:
                  type: object
                  properties:
                    matchType:
                      type: string
                      enum: ['!=', =, =~, '!~']
                    name: {type: string}
              mode:
                type: string
                enum: [on, no, off, yes]
                default: on
              retention:
                type: string
                pattern: ^1:20$
                default: 1:20
"""


def test_crd_with_equals_enum_and_yes_no_values_generates(codegen: ModuleType, tmp_path: Path,
                                                          load_module: Any) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "routes.yaml").write_text(MATCHER_CRD)
    out = tmp_path / "generated"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 0
    models = (out / "apis" / "alerting" / "v1alpha1" / "__init__.py").read_text()
    assert "class RouteSpecMatchersItem(" in models and "match_type: str | UnsetType" in models
    assert "mode: str | UnsetType" in models


def test_crd_reading_follows_kubernetes_not_yaml_1_1() -> None:
    """on/no are booleans (go-yaml v2, as kubectl); `=` and 1:20 are strings; 0777 is octal."""
    crd = k8syaml.load(MATCHER_CRD)
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert props["matchers"]["items"]["properties"]["matchType"]["enum"] == ["!=", "=", "=~", "!~"]
    assert props["mode"]["enum"] == [True, False, False, True] and props["mode"]["default"] is True
    assert props["retention"]["default"] == "1:20"


def test_a_property_named_on_becomes_true_as_in_kubernetes(codegen: ModuleType, tmp_path: Path) -> None:
    """kubectl turns the plain key `on` into "true"; the generator follows instead of crashing."""
    text = copy.copy(MATCHER_CRD).replace("              mode:\n", "              on:\n")
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "routes.yaml").write_text(text)
    out = tmp_path / "generated"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 0
    assert "true: str | UnsetType" in (out / "apis" / "alerting" / "v1alpha1" / "__init__.py").read_text()


def test_models_docstring_names_every_crd_file_of_the_package(codegen: ModuleType, tmp_path: Path) -> None:
    crds = write_crds(tmp_path / "crds", things=crd_doc(), widgets=crd_doc(kind="Widget", plural="widgets"),
                      gadgets=crd_doc(kind="Gadget", plural="gadgets"))
    out = tmp_path / "out"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 0
    first = (out / "apis" / "things" / "v1" / "__init__.py").read_text().splitlines()[1]
    assert first == '"""Models of things.example.com/v1 (from crds/gadgets.yaml, things.yaml, widgets.yaml).', first
