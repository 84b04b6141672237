"""Bad CRD files: one line naming the file, exit status 2, nothing written (as kube-apiserver refuses them)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.codegen.test_generator import crd_doc, snapshot, write_crds

BOMB = "\n".join(["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
                 + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]) + "\n"

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("binary", {"blob": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"}, ["blob.yaml", "not UTF-8", "binary"]),
    ("latin1", {"latin": "spec:\n  group: caf\xe9.example.com\n".encode("latin-1")}, ["latin.yaml", "line 2", "not UTF-8"]),
    ("nul_byte", {"nul": b"apiVersion: v1\x00\n"}, ["nul.yaml", "NUL", "binary"]),
    ("empty", {"empty": b""}, ["empty.yaml", "empty file"]),
    ("only_separators", {"seps": b"---\n---\n# nothing\n"}, ["seps.yaml", "empty file"]),
    ("alias_bomb", {"bomb": BOMB.encode()}, ["bomb.yaml", "excessive aliasing"]),
    ("recursive_alias", {"loop": b"a: &a [*a]\n"}, ["loop.yaml", "contains itself"]),
    ("any_of_with_types", {"thing": crd_doc(spec_props={"size": {"type": "integer", "anyOf": [
        {"type": "integer"}, {"type": "string"}]}})},
     ["thing.yaml", "properties.size.anyOf[0].type", "must be empty to be structural"]),
    ("one_of_with_a_default", {"thing": crd_doc(spec_props={"size": {"type": "integer", "oneOf": [
        {"minimum": 1, "default": 2}]}})}, ["thing.yaml", "oneOf[0].default", "structural"]),
    ("all_of_with_an_unknown_property", {"thing": crd_doc(spec_props={"size": {"type": "object", "properties": {
        "a": {"type": "string"}}, "allOf": [{"properties": {"b": {"minLength": 1}}}]}})},
     ["thing.yaml", "allOf[0].properties[b]", "corresponding property"]),
    ("int_or_string_with_a_type", {"thing": crd_doc(spec_props={"port": {
        "type": "string", "x-kubernetes-int-or-string": True}})}, ["thing.yaml", "port.type", "must be empty"]),
]


@pytest.mark.parametrize(("files", "expected"), [(f, e) for _, f, e in CASES], ids=[n for n, _, _ in CASES])
def test_bad_files(codegen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   files: dict[str, Any], expected: list[str]) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    write_crds(crds, good=crd_doc(group="good.example.com"))
    for name, content in files.items():
        if isinstance(content, bytes):
            (crds / f"{name}.yaml").write_bytes(content)
        else:
            write_crds(crds, **{name: content})
    out = tmp_path / "generated"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in expected:
        assert fragment in err, err
    assert not out.exists()


def test_bad_files_leave_an_existing_output_untouched(codegen: ModuleType, tmp_path: Path) -> None:
    crds = write_crds(tmp_path / "crds", good=crd_doc(group="good.example.com"))
    out = tmp_path / "generated"
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 0
    before = snapshot(out)
    (crds / "bomb.yaml").write_text(BOMB)
    assert codegen.main(["--crds", str(crds), "--output", str(out)]) == 2
    assert snapshot(out) == before


def test_int_or_string_any_of_is_structural(codegen: ModuleType, tmp_path: Path) -> None:
    crds = write_crds(tmp_path / "crds", thing=crd_doc(spec_props={
        "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "size": {"type": "integer", "anyOf": [{"minimum": 1}, {"maximum": -1}], "not": {"enum": [0]}}}))
    assert codegen.main(["--crds", str(crds), "--output", str(tmp_path / "generated")]) == 0
