"""Shared fixtures for every test area: the embedded API server (see samplecontroller.apiserver.testing).

Hypothesis runs without its per-example deadline everywhere: a wall-clock limit on a shared,
loaded machine is a timing assert on a real clock (it failed tests/apiserver/test_storage.py
under load), and properties are about behaviour, not speed (benchmarks/ measures speed).
"""

from pathlib import Path

import pytest
from hypothesis import settings

from samplecontroller.apiserver.testing import apiserver, fresh_apiserver, kubeconfig, kubectl
from tests.wheelenv import WheelEnv, build_wheel, locked_constraints

settings.register_profile("samplecontroller", deadline=None)
settings.load_profile("samplecontroller")

__all__ = ["apiserver", "fresh_apiserver", "kubeconfig", "kubectl"]
# projects kept as test data (tests/testdata/scaffold-0.1.0: made by 0.1.0) run their own tests
collect_ignore_glob = ["testdata/scaffold-*"]

# The modules that keep a worker busy longest (10 s or more each in `--durations` of a whole
# run), longest first. `make test`'s `--dist loadfile` hands modules to the workers in collection
# order: these go first, so the run ends on short modules and no worker waits for the other's
# last long one.
LONG_MODULES = (
    "tests/scaffold/test_e2e.py",
    "tests/conformance/test_kubectl_old.py",
    "tests/conformance/test_kubectl_new.py",
    "tests/controller/test_e2e.py",
    "tests/reliability/test_crash.py",
    "tests/scaffold/test_e2e_webhooks.py",
    "tests/docs/test_tutorial.py",
    "tests/scaffold/test_pytest_plugin.py",
    "tests/conformance/test_kubectl_newest.py",
    "tests/reliability/test_soak.py",
    "tests/codegen/test_corpus.py",
    "tests/conformance/test_kubectl_cluster.py",
    "tests/scaffold/test_scaffold.py",
    "tests/runtime/test_read_your_writes.py",
    "tests/apiserver/test_durability.py",
    "tests/codegen/test_builtins.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``LONG_MODULES`` first, longest first; the rest in their usual order."""
    rank = {module: i for i, module in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's wheel, built once per test process (tests/wheelenv.py)."""
    return build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def lock_constraints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv.lock's versions as a constraints file, for installs of the wheel."""
    return locked_constraints(tmp_path_factory.mktemp("constraints"))


@pytest.fixture(scope="session")
def wheel_env(built_wheel: Path, lock_constraints: Path, tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """A virtualenv outside the checkout with the wheel and its apiserver and codegen extras, made once
    per test process (tests/packaging and the docs' shell snippets share it; treat it as read-only)."""
    return WheelEnv.create(tmp_path_factory.mktemp("venv"), built_wheel, extras="apiserver,codegen",
                           constraints=lock_constraints)
