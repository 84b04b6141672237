"""Shared fixtures of the code generator tests.

``codegen``: hack/update_codegen.py imported as a module (in-process runs are fast).
``hard_tree``: generated/ produced once per session from tests/codegen/testdata/crds (the harder
CRD) into a temporary directory; ``load_module`` imports one generated file from it under a
private name (the generated models only import samplecontroller.kubernetes.apis.meta.v1, which is identical in
every tree, and samplecontroller).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = Path(__file__).resolve().parent / "testdata"


def _import_file(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def codegen() -> ModuleType:
    return _import_file("_codegen_under_test", ROOT / "hack" / "update_codegen.py")


@pytest.fixture(scope="session")
def hard_tree(codegen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hard") / "generated"
    assert codegen.main(["--crds", str(TESTDATA / "crds"), "--output", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def load_module(hard_tree: Path) -> Callable[[str], ModuleType]:
    def load(rel: str) -> ModuleType:
        name = "_hard_" + rel.replace("/", "_").removesuffix(".py")
        if name in sys.modules:
            return sys.modules[name]
        return _import_file(name, hard_tree / rel)

    return load


@pytest.fixture(scope="session")
def wire() -> ModuleType:
    """tests/codegen/wire_objects.py: realistic wire objects."""
    return _import_file("_codegen_wire_objects", Path(__file__).resolve().parent / "wire_objects.py")
