"""The package as users get it: build this checkout's wheel once, install it into fresh virtual
environments outside the checkout.

``build_wheel`` runs ``uv build`` (the Makefile's pinned uv in ``.tools/``, else ``uv`` on PATH);
``WheelEnv.create`` makes a virtualenv in a temporary directory and installs the wheel with the
given extras, constrained to the versions in ``uv.lock`` so the test sees what ``make test``
locked, not whatever an index serves today. Nothing here imports from the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def uv_binary() -> str:
    """The uv executable: the Makefile's pinned one, else one on PATH; skip (fail under CI) if none."""
    pinned = ROOT / ".tools" / "bin" / "uv"
    if pinned.is_file():
        return str(pinned)
    found = shutil.which("uv")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("uv is required under CI=true (make venv installs it into .tools/)")
    pytest.skip("uv not found: run `make venv` (it installs the pinned uv into .tools/)")


def run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing output; raise AssertionError with its output if it fails."""
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise AssertionError(f"{args} exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


def build_wheel(out_dir: Path) -> Path:
    """Build the sdist and wheel of this checkout into ``out_dir``; the wheel's path."""
    run([uv_binary(), "build", "--quiet", "--python", sys.executable, "--out-dir", str(out_dir), str(ROOT)])
    wheels = sorted(out_dir.glob("samplecontroller-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def locked_constraints(out_dir: Path) -> Path:
    """uv.lock's versions (every extra) as a pip constraints file, without the project itself."""
    path = out_dir / "constraints.txt"
    result = run([uv_binary(), "export", "--quiet", "--frozen", "--all-extras", "--no-emit-project",
                  "--no-hashes", "--project", str(ROOT)])
    path.write_text(result.stdout)
    return path


@dataclass(frozen=True)
class WheelEnv:
    """A virtualenv outside the checkout with the wheel installed."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    def env(self) -> dict[str, str]:
        """An environment for commands run in it: its bin/ first, no PYTHONPATH, no CI checkout paths."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["VIRTUAL_ENV"] = str(self.root)
        env["PATH"] = f"{self.root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    @classmethod
    def create(cls, root: Path, wheel: Path, extras: str = "", constraints: Path | None = None,
               requirements: tuple[str, ...] = ()) -> WheelEnv:
        """The wheel (with ``extras``) and ``requirements`` installed into a new virtualenv at ``root``."""
        uv = uv_binary()
        run([uv, "venv", "--quiet", "--python", sys.executable, str(root)])
        requirement = f"samplecontroller[{extras}] @ {wheel.as_uri()}" if extras else str(wheel)
        args = [uv, "pip", "install", "--quiet", "--python", str(root / "bin" / "python"), requirement, *requirements]
        if constraints is not None:
            args += ["--constraint", str(constraints)]
        run(args)
        return cls(root)
