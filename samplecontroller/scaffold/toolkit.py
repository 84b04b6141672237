"""Where this toolkit was installed from, so that a scaffolded project installs the same one.

``samplecontroller`` is not published on a package index, so ``samplecontroller init`` records
the source it ran from (``current()``):

- running from a checkout (an editable install, or the source tree on ``sys.path``): that
  directory;
- else, from the installed distribution's ``direct_url.json`` (PEP 610): a wheel file
  (``pip install dist/samplecontroller-0.1.0-py3-none-any.whl``) or a directory it was built from;
- anything else (an index, or no metadata at all): the index, by name and version.

``Toolkit.requirement`` is what the project's Makefile passes to pip/uv (a PEP 508 direct
reference for a file or directory, with the ``apiserver`` and ``codegen`` extras).

A project never refers to a checkout (it would break when moved alone): ``build_wheel`` builds the
checkout's wheel, which ``init`` and ``upgrade`` keep in the project's ``.toolkit/`` as they keep a
wheel the toolkit was installed from.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["EXTRAS", "Toolkit", "ToolkitBuildError", "build_wheel", "current"]

DIST = "samplecontroller"
EXTRAS = "apiserver,codegen"


@dataclass(frozen=True)
class Toolkit:
    """The toolkit's source: ``kind`` is ``wheel``, ``directory`` or ``index``; ``location`` the
    absolute path (empty for ``index``); ``version`` the installed version."""

    kind: str
    location: str
    version: str

    @property
    def requirement(self) -> str:
        """The requirement (with the dev extras) pip and uv install it by."""
        if self.kind == "index":
            return f"{DIST}[{EXTRAS}]=={self.version}"
        return f"{DIST}[{EXTRAS}] @ {Path(self.location).as_uri()}"

    def describe(self) -> str:
        """Where the toolkit comes from, in words ("the checkout PATH", "the wheel PATH", "the package index (...)")."""
        return {"wheel": f"the wheel {self.location}", "directory": f"the checkout {self.location}",
                "index": f"the package index ({DIST}=={self.version})"}[self.kind]


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def checkout() -> Path | None:
    """The source tree this module runs from, if it is one (not an installed copy)."""
    root = Path(__file__).resolve().parents[2]
    try:
        text = (root / "pyproject.toml").read_text()
    except OSError:
        return None
    return root if f'name = "{DIST}"' in text else None


def current() -> Toolkit:
    """The source of the running toolkit (see the module docstring)."""
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    version = dist.version if dist is not None else "0"
    source_tree = checkout()
    if source_tree is not None:
        return Toolkit("directory", str(source_tree), version)
    if dist is None:
        return Toolkit("index", "", version)
    text = dist.read_text("direct_url.json")
    if text:
        try:
            info = json.loads(text)
        except ValueError:
            info = {}
        path = _local_path(str(info.get("url", "")))
        if path is not None:
            if "dir_info" in info and path.is_dir():
                return Toolkit("directory", str(path), version)
            if path.suffix == ".whl" and path.is_file():
                return Toolkit("wheel", str(path), version)
    return Toolkit("index", "", version)


class ToolkitBuildError(Exception):
    """The checkout's wheel could not be built; ``str()`` is one line saying why and what to do."""


_BUILT: dict[str, Path] = {}


def _builder(source: Path, out_dir: Path) -> list[str]:
    """The command that builds ``source``'s wheel into ``out_dir``: the checkout's pinned uv (``make
    venv`` puts it in ``.tools/``), else ``uv`` on PATH, else pip."""
    for uv in (source / ".tools" / "bin" / "uv", shutil.which("uv")):
        if uv is not None and os.access(uv, os.X_OK):
            return [str(uv), "build", "--quiet", "--wheel", "--python", sys.executable, "--out-dir", str(out_dir),
                    str(source)]
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out_dir), str(source)]
    raise ToolkitBuildError(f"cannot build the wheel of the checkout {source}: neither uv nor pip is installed "
                            "(install uv, or build it with `make dist` there and install that wheel)")


def build_wheel(toolkit: Toolkit) -> Toolkit:
    """``toolkit`` as a wheel: a checkout (``kind == "directory"``) is built into a temporary directory
    (once per process and checkout; removed at exit); a wheel or the index as it is."""
    if toolkit.kind != "directory":
        return toolkit
    source = Path(toolkit.location)
    built = _BUILT.get(str(source))
    if built is None or not built.is_file():
        out_dir = Path(tempfile.mkdtemp(prefix="samplecontroller-toolkit-"))
        atexit.register(shutil.rmtree, out_dir, True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
        try:
            done = subprocess.run(_builder(source, out_dir), capture_output=True, text=True, env=env, check=False,
                                  timeout=900)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ToolkitBuildError(f"building the wheel of the checkout {source} failed: {err}") from None
        wheels = sorted(out_dir.glob(f"{DIST}-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            last = (done.stderr.strip() or done.stdout.strip() or "no wheel written").splitlines()[-1]
            raise ToolkitBuildError(f"building the wheel of the checkout {source} failed (exit {done.returncode}): "
                                    f"{last}")
        built = _BUILT[str(source)] = wheels[0]
    return Toolkit("wheel", str(built), toolkit.version)
