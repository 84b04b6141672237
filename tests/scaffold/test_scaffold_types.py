"""The scaffold and built-in kinds: the Scheme has them, an unregistered type's error names the fix, the
toolkit is recorded without absolute paths, and a plural that shadows a built-in is warned about."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path

import pytest

from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes.apis.batch.v1 import Job
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.scaffold import Project, main
from samplecontroller.scaffold.toolkit import Toolkit
from tests.scaffold.test_scaffold import scaffold


def test_the_scaffolded_scheme_has_the_builtin_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = scaffold(tmp_path, capsys, ["--group", "batch", "--version", "v1", "--kind", "Backup"])
    sys.path.insert(0, str(project))
    try:
        module = importlib.import_module("backupop.scheme")
        assert module.SCHEME.info_for(Job).kind == "Job"  # owns(Job) finds it
        assert module.SCHEME.info_for(importlib.import_module("backupop.generated.apis.batch.v1").Backup)
        main_source = (project / "backupop" / "__main__.py").read_text()
        assert "from backupop.scheme import SCHEME" in main_source
    finally:
        sys.path.remove(str(project))
        for name in [n for n in sys.modules if n.startswith("backupop")]:
            del sys.modules[name]


def test_an_unregistered_type_names_the_fix() -> None:
    with pytest.raises(KeyError, match=r"Job is not registered in the scheme; a built-in kind: call "
                                       r"samplecontroller\.kubernetes\.scheme\.add_to_scheme\(scheme\)"):
        Scheme().info_for(Job)
    client = ClientBuilder().with_scheme(Scheme()).build()
    with pytest.raises(ValueError, match="add_to_scheme"):
        client.get(Job, "x", "default")


def test_the_toolkit_wheel_is_kept_inside_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = tmp_path / "dist" / "samplecontroller-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"the wheel")
    project = scaffold(tmp_path, capsys, toolkit=Toolkit("wheel", str(wheel), "0.1.0"))
    recorded = (project / "PROJECT").read_text()
    assert "location: .toolkit/samplecontroller-0.1.0-py3-none-any.whl" in recorded
    assert "layout: samplecontroller/v2" in recorded
    assert (project / ".toolkit" / wheel.name).read_bytes() == b"the wheel"
    for path in project.rglob("*"):  # no path out of the project, absolute or relative
        if path.is_file() and path.suffix != ".whl":
            text = path.read_text()
            assert str(tmp_path) not in text and "../dist" not in text, path
    # moved (or copied) without the wheel it was made from, the project still has it
    moved = tmp_path / "elsewhere" / "backup-operator"
    shutil.copytree(project, moved)
    shutil.rmtree(wheel.parent)
    loaded = Project.load(moved).toolkit
    assert loaded.location == os.path.normpath(moved.resolve() / ".toolkit" / wheel.name)
    assert Path(loaded.location).read_bytes() == b"the wheel"


@pytest.mark.parametrize(("kind", "plural", "shadowed"), [
    ("CronJob", None, "batch/v1 CronJob"), ("Pod", None, "core/v1 Pod"), ("Backup", "deploy", "apps/v1 Deployment"),
])
def test_a_plural_shadowing_a_builtin_is_warned(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                               plural: str | None, shadowed: str) -> None:
    project = scaffold(tmp_path, capsys)
    capsys.readouterr()
    args = ["create", "api", "--group", "batch", "--version", "v1", "--kind", kind]
    assert main(args + (["--plural", plural] if plural else []), cwd=project) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning:" in err and shadowed in err, err


def test_no_warning_for_an_own_plural(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scaffold(tmp_path, capsys, ["--group", "batch", "--version", "v1", "--kind", "Backup"])
    assert "warning" not in capsys.readouterr().err
