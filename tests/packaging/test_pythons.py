"""hack/pythons.py (``make test-pythons``, the cross-version smoke of ``make test``): which
interpreters it keeps and why it skips the others, and when it fails; and uv.lock has a wheel of
every compiled dependency for each CPython it may be run on.

Interpreters are real (this one) or small executables that answer the probe as another Python
would (a PyPy, a 3.10, a free-threaded build, ...): machines differ in what they have installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from tests.wheelenv import ROOT, uv_binary


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pythons_under_test", ROOT / "hack" / "pythons.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


pythons = _load()
THIS = f"{sys.version_info.major}.{sys.version_info.minor}"


def fake(tmp_path: Path, name: str, *, version: str, implementation: str = "cpython", release: str = "final",
         free_threaded: bool = False, ssl: str | None = "OpenSSL 3") -> str:
    """An executable that answers the probe as the described interpreter (and fails at anything
    else, as uv's own interpreter query)."""
    answer = json.dumps({"implementation": implementation, "version": [int(v) for v in version.split(".")],
                         "release": release, "base": str(tmp_path / name), "free_threaded": free_threaded,
                         "ssl": ssl})
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n[ \"$1\" = -I ] || exit 7\necho '{answer}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("CI", raising=False)
    return monkeypatch


def test_one_cpython_per_minor_version_and_a_reason_for_every_other(tmp_path: Path, only: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'no module named encodings' >&2\nexit 3\n")
    broken.chmod(0o755)
    candidates = [
        sys.executable,
        fake(tmp_path, "old", version="3.10.13"),
        fake(tmp_path, "pypy", version=f"{THIS}.1", implementation="pypy"),
        fake(tmp_path, "ft", version="3.99.0", free_threaded=True),
        fake(tmp_path, "rc", version="3.99.0", release="candidate"),
        fake(tmp_path, "nossl", version="3.98.1", ssl=None),
        fake(tmp_path, "older-patch", version=f"{THIS}.0"),
        str(broken),
        str(tmp_path / "missing"),
    ]
    only.setenv("PYTHONS", " ".join(candidates))
    found = pythons.discover()
    assert [(i.path, i.minor) for i in found.kept] == [(sys.executable, THIS)]
    reasons = dict(found.skipped)
    assert reasons[f"{tmp_path / 'old'} (cpython 3.10.13)"] == "below requires-python >=3.11"
    assert reasons[f"{tmp_path / 'pypy'} (pypy {THIS}.1)"] == "not CPython"
    assert reasons[f"{tmp_path / 'ft'} (cpython 3.99.0)"].startswith("a free-threaded build")
    assert reasons[f"{tmp_path / 'rc'} (cpython 3.99.0)"] == "a pre-release (candidate)"
    assert reasons[f"{tmp_path / 'nossl'} (cpython 3.98.1)"] == "no ssl module"
    assert reasons[f"{tmp_path / 'older-patch'} (cpython {THIS}.0)"] == (
        f"{found.kept[0].full} at {sys.executable} is used for {THIS}")
    assert reasons[str(broken)] == "exited 3: no module named encodings"
    assert reasons[str(tmp_path / "missing")].startswith("cannot be run:")
    missing = [f"CPython 3.{n}" for n in range(11, pythons.NEWEST[1] + 1) if f"3.{n}" != THIS]
    assert [reasons[m] for m in missing] == ["not in $PYTHONS"] * len(missing)


def test_the_same_interpreter_under_two_names_is_one(tmp_path: Path, only: pytest.MonkeyPatch) -> None:
    link = tmp_path / "python-again"
    link.symlink_to(sys.executable)
    only.setenv("PYTHONS", f"{sys.executable} {link}")
    found = pythons.discover()
    assert [i.path for i in found.kept] == [sys.executable]
    assert not [what for what, _ in found.skipped if str(link) in what]


def test_pyenv_versions_and_path_are_searched_but_not_pyenv_shims(tmp_path: Path, only: pytest.MonkeyPatch) -> None:
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    shim = root / "shims" / "python3.12"
    shim.write_text("#!/bin/sh\nexit 127\n")
    shim.chmod(0o755)
    (root / "versions" / "3.99.0" / "bin").mkdir(parents=True)
    installed = fake(root / "versions" / "3.99.0" / "bin", "python3", version="3.99.0")
    (root / "versions" / "some-venv" / "bin").mkdir(parents=True)
    (root / "versions" / "some-venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    fake(root / "versions" / "some-venv" / "bin", "python3", version="3.98.0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    on_path = fake(bin_dir, "python3.97", version="3.97.2")
    fake(bin_dir, "python3-config", version="3.96.0")  # not an interpreter's name
    only.delenv("PYTHONS", raising=False)
    only.setenv("PYENV_ROOT", str(root))
    only.setenv("PATH", os.pathsep.join([str(root / "shims"), str(bin_dir)]))
    assert pythons.candidates() == [on_path, installed]
    assert [i.full for i in pythons.discover().kept] == ["3.97.2", "3.99.0"]


def test_smoke_without_another_interpreter_runs_nothing(only: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    only.setenv("PYTHONS", sys.executable)
    assert pythons.main(["smoke", "--uv", uv_binary(), "--main", sys.executable]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Python interpreters found:\n  {sys.version.split()[0]} ")
    assert f"cross-version smoke: no other interpreter than {THIS} found" in out


def test_an_interpreter_that_cannot_be_set_up_fails_under_ci_only(tmp_path: Path, only: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    unusable = fake(tmp_path, "python3.99", version="3.99.1")
    only.setenv("PYTHONS", f"{sys.executable} {unusable}")
    args = ["smoke", "--uv", uv_binary(), "--main", sys.executable, "--venvs", str(tmp_path)]
    assert pythons.main(args) == 0
    captured = capsys.readouterr()
    assert "!! Python 3.99.1: .venv-3.99 could not be set up from uv.lock" in captured.err
    assert "!! not every interpreter could be set up (a failure under CI=true)" in captured.err
    assert "  Python 3.99.1   NOT SET UP" in captured.out
    only.setenv("CI", "true")
    assert pythons.main(args) == 1
    only.delenv("CI")
    only.setenv("PYTHONS", unusable)  # (with this Python too, `all` would run the whole suite)
    assert pythons.main(["all", "--uv", uv_binary(), "--venvs", str(tmp_path)]) == 1  # make test-pythons
    assert "  Python 3.99.1   NOT SET UP" in capsys.readouterr().out


@pytest.mark.slow
def test_all_runs_pytest_in_a_venv_from_the_lock_and_fails_on_a_failure(tmp_path: Path, only: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    tests = tmp_path / "case"
    tests.mkdir()
    (tests / "test_case.py").write_text(
        "import sys\n\n"
        "def test_runs_in_the_new_venv():\n    assert sys.prefix.endswith('.venv-" + THIS + "')\n\n"
        "def test_fails():\n    assert False\n")
    only.setenv("PYTHONS", sys.executable)
    code = pythons.main(["all", "--uv", uv_binary(), "--venvs", str(tmp_path), "--",
                         "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(tests / "test_case.py")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"== Python {sys.version.split()[0]}: {tmp_path / ('.venv-' + THIS)}/bin/python -m pytest" in out
    assert f"  Python {sys.version.split()[0]:<8} FAILED (exit 1)" in out
    assert out.rstrip().endswith("1 failed, 1 passed in " + out.rstrip().rsplit(" in ", 1)[1])


def test_every_smoke_test_exists() -> None:
    """The smoke names tests by node id: a renamed or moved one would make pytest exit 4."""
    for node in (*pythons.SMOKE, *pythons.SMOKE_NEWEST, *pythons.SMOKE_OTHERS):
        path, _, name = node.partition("::")
        assert (ROOT / path).is_file(), node
        if name:
            assert re.search(rf"^def {re.escape(name)}\(", (ROOT / path).read_text(), re.MULTILINE), node


# -- the lock has a wheel of every compiled dependency for every CPython the project may meet ------


def _wheel_minors(wheels: list[str]) -> set[int] | None:
    """The CPython 3 minor versions the manylinux x86_64 wheels cover; None for a pure-Python package."""
    covered: set[int] = set()
    for name in wheels:
        python, abi, platform = name.removesuffix(".whl").split("-")[-3:]
        if platform == "any":
            return None
        if "manylinux" not in platform or "x86_64" not in platform or abi.endswith("t"):
            continue
        for tag in python.split("."):
            if tag.startswith("py3") and abi == "none":  # a binary that no Python loads (ruff)
                covered |= set(range(0, 100))
            elif tag.startswith("cp3"):
                minor = int(tag[3:])
                covered |= set(range(minor, 100)) if abi.startswith("abi3") else {minor}
    return covered


def test_every_compiled_dependency_has_a_wheel_for_every_supported_python() -> None:
    """From requires-python up to the newest CPython release (Linux x86_64, what this machine and
    CI run): a dependency without one would be built from source, or not install at all."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    minors = range(pythons.minimum_version()[1], pythons.NEWEST[1] + 1)
    missing: list[str] = []
    for package in lock["package"]:
        if "wheels" not in package:
            assert package.get("source", {}).get("editable") == ".", f"{package['name']} has no wheel at all"
            continue
        covered = _wheel_minors([w["url"].rsplit("/", 1)[-1] for w in package["wheels"]])
        if covered is not None:
            missing += [f"{package['name']} {package['version']}: none for CPython 3.{m}" for m in minors
                        if m not in covered]
    assert missing == [], "uv.lock lacks manylinux x86_64 wheels:\n" + "\n".join(missing)
