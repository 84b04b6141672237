"""The locked environment: uv.lock matches pyproject.toml (what `make test` checks first), and a
pyproject.toml edited without re-locking makes `make check-lock` fail with one clear line."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.wheelenv import ROOT, uv_binary

FILES = ("pyproject.toml", "uv.lock", "Makefile", "README.md")


def check_lock(project: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make not found")
    return subprocess.run(["make", "--no-print-directory", "check-lock", f"UV={uv_binary()}"], cwd=project,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in FILES:
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_the_committed_lock_matches_pyproject(project: Path) -> None:
    done = check_lock(project)
    assert done.returncode == 0, done.stderr


def test_a_dependency_changed_without_relocking_is_one_clear_line(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    assert "\ndev = [\n" in text
    pyproject.write_text(text.replace("\ndev = [\n", '\ndev = [\n    "six>=1.16",\n', 1))
    done = check_lock(project)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)]
    assert lines == ["uv.lock does not match pyproject.toml: run 'make lock' and commit uv.lock"], done.stderr
