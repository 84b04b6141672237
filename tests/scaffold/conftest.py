"""The scaffold's end-to-end tests share one environment per test process (a session fixture).

``project_env`` is this checkout's wheel, with every extra a scaffolded project asks for and its
dev tools, in a virtualenv outside the checkout: the ``samplecontroller`` those tests run, and the
environment their projects' ``make`` uses (``VENV=``, documented for users: what is installed is
not installed again, each project installs itself into it), so a test pays for neither a venv of
its own nor a cold mypy of the toolkit's modules (``MYPY_CACHE_DIR`` is shared too).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.wheelenv import WheelEnv, uv_binary

DEV_TOOLS = ("pytest>=8", "mypy>=1.10", "ruff>=0.6")
"""The scaffolded pyproject.toml's ``dev`` extra, besides the toolkit."""


@pytest.fixture(scope="session")
def project_env(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path, lock_constraints: Path) -> WheelEnv:
    return WheelEnv.create(tmp_path_factory.mktemp("project-env") / "venv", built_wheel,
                           extras="apiserver,codegen,webhook,async", constraints=lock_constraints,
                           requirements=DEV_TOOLS)


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def project_make_env(project_env: WheelEnv, lock_constraints: Path, mypy_cache: Path) -> dict[str, str]:
    """The environment a test runs the scaffold's commands and a project's ``make`` in: ``project_env``
    first on PATH and as ``VENV``, no outer make, pytest or virtualenv settings. (The venv's install
    stamp records the project's directory: each test's project installs itself, and the toolkit it
    keeps, into it again.)"""
    drop = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")
    env = {k: v for k, v in project_env.env().items() if k not in drop and not k.startswith("PYTEST_")}
    env.update(UV=uv_binary(), PYTHON=sys.executable, UV_CONSTRAINT=str(lock_constraints),
               VENV=str(project_env.root), MYPY_CACHE_DIR=str(mypy_cache))
    return env
