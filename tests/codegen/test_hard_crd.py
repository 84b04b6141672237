"""The harder CRD (testdata/crds/widgets.yaml): every schema feature, generated into a temp tree."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
import tempfile
import typing
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest


@pytest.fixture(scope="module")
def v1(load_module: Callable[[str], ModuleType]) -> ModuleType:
    return load_module("apis/gadgets/v1/__init__.py")


@pytest.fixture(scope="module")
def v1beta1(load_module: Callable[[str], ModuleType]) -> ModuleType:
    return load_module("apis/gadgets/v1beta1/__init__.py")


def test_round_trip(v1: ModuleType, wire: ModuleType) -> None:
    w = msgspec.json.decode(json.dumps(wire.WIDGET), type=v1.Widget)
    assert json.dumps(json.loads(msgspec.json.encode(w)), sort_keys=True) == json.dumps(wire.WIDGET, sort_keys=True)
    spec = w.spec
    assert (spec.from_, spec.class_) == ("upstream", "gold")  # Python keywords get a trailing _
    assert spec.max_surge == "25%" and spec.ports[1].target == 8081  # int-or-string
    assert spec.ratio == 2 and isinstance(spec.ratio, int)  # a number keeps its integer form
    assert spec.nested.inner.weights == (1, 2.5, -3)
    assert spec.selector.tiers == (("x", "y"), ())  # arrays of arrays are tuples of tuples
    assert spec.limits["cpu"].max is None and spec.limits["mem"].max == 4  # map of objects, nullable
    assert spec.owner is None  # nullable string
    assert spec.config["anything"] == [1, {"goes": None}]  # preserve-unknown-fields: a dict
    assert spec.template["spec"] == {"unknown": True}  # embedded resource: a dict
    assert spec.color == "purple"  # enums are left to the server


def test_absent_versus_null(v1: ModuleType) -> None:
    absent = msgspec.json.decode(b'{"spec": {"replicas": 1}}', type=v1.Widget)
    null = msgspec.json.decode(b'{"spec": {"replicas": 1, "owner": null}}', type=v1.Widget)
    assert absent.spec.owner is msgspec.UNSET and null.spec.owner is None
    assert json.loads(msgspec.json.encode(null))["spec"] == {"replicas": 1, "owner": None}
    assert json.loads(msgspec.json.encode(absent))["spec"] == {"replicas": 1}


def test_required_is_typed_without_unset_and_defaults_to_go_zero(v1: ModuleType) -> None:
    hints = typing.get_type_hints(v1.WidgetSpecPortsItem)
    assert hints["port"] is int  # items.required: [port]
    lacking = msgspec.json.decode(b'{"spec": {"ports": [{}]}}', type=v1.Widget)
    assert lacking.spec.ports[0].port == 0  # as Go decodes it, and encodes it back
    assert json.loads(msgspec.json.encode(lacking))["spec"] == {"ports": [{"port": 0}]}


def test_required_with_a_default_is_left_to_the_server(v1: ModuleType) -> None:
    """spec.replicas is required with default 1: the server fills it in, so a client never sends a zero
    that would override it (decode then encode gives the input back)."""
    hints = typing.get_type_hints(v1.WidgetSpec)
    assert hints["replicas"] == int | msgspec.UnsetType
    lacking = msgspec.json.decode(b'{"spec": {}}', type=v1.Widget)
    assert lacking.spec.replicas is msgspec.UNSET
    assert json.loads(msgspec.json.encode(lacking))["spec"] == {}


def test_not_nullable_rejects_null(v1: ModuleType) -> None:
    with pytest.raises(msgspec.ValidationError, match=r"spec\.replicas"):
        msgspec.json.decode(b'{"spec": {"replicas": null}}', type=v1.Widget)


def test_two_served_versions(v1: ModuleType, v1beta1: ModuleType, hard_tree: Path) -> None:
    assert v1.Widget().api_version == "gadgets.example.io/v1"
    assert v1beta1.Widget().api_version == "gadgets.example.io/v1beta1"
    assert {f.encode_name for f in msgspec.structs.fields(v1beta1.WidgetSpec)} == {"size", "color"}
    assert not (hard_tree / "apis" / "gadgets" / "v1alpha1").exists()  # not served: not generated


def test_cluster_scope_and_subresources(v1: ModuleType, load_module: Callable[[str], ModuleType]) -> None:
    info = v1.WIDGETS
    assert not info.namespaced and info.resource == "widgets" and info.short_names == ("wg",)
    assert info.subresources == ("scale", "status")
    src = Path(load_module("apis/gadgets/v1/__init__.py").__file__ or "").parent.parent.parent.parent
    typed = src / "clientset" / "typed" / "gadgets"
    assert "def widgets(self) -> ResourceClient[gadgets_v1.Widget, gadgets_v1.WidgetList]:" in (
        typed / "v1" / "__init__.py").read_text()
    assert "def widgets(self) -> ResourceClient[gadgets_v1beta1.Widget, gadgets_v1beta1.WidgetList]:" in (
        typed / "v1beta1" / "__init__.py").read_text()
    listers = (src / "listers" / "gadgets" / "v1" / "__init__.py").read_text()
    assert "class WidgetLister(" in listers and "WidgetNamespaceLister" not in listers


def test_annotations_resolve(v1: ModuleType) -> None:
    hints = typing.get_type_hints(v1.WidgetSpec)
    assert typing.get_args(hints["ports"]) == (tuple[v1.WidgetSpecPortsItem, ...], msgspec.UnsetType)  # type: ignore[name-defined]
    assert hints["config"] == dict[str, Any] | msgspec.UnsetType


def test_frozen_everywhere(v1: ModuleType) -> None:
    for name in dir(v1):
        obj = getattr(v1, name)
        if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == v1.__name__:
            cfg = obj.__struct_config__
            assert cfg.frozen and not cfg.gc, name
            kinds = {p.kind for p in inspect.signature(obj).parameters.values()}
            assert kinds <= {inspect.Parameter.KEYWORD_ONLY}, name


def mypy_cache(root: Path) -> Path:
    """A cache kept between runs under the repository's .mypy_cache, seeded (when new) from the
    cache ``make typecheck`` leaves there (make test runs it first), so the stdlib and
    samplecontroller are not checked cold again (23 s -> 1.5 s). mypy revalidates each cached
    module against its source (the hard tree's ``generated`` differs from the repository's), so
    reuse never hides an error."""
    cache = root / ".mypy_cache" / "hard-crd"
    seed = root / ".mypy_cache" / f"{sys.version_info.major}.{sys.version_info.minor}"
    if not cache.exists() and seed.is_dir():
        staging = Path(tempfile.mkdtemp(dir=cache.parent))
        shutil.copytree(seed, staging / seed.name)
        try:
            staging.rename(cache)
        except OSError:  # another test session seeded it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    return cache


def test_generated_tree_passes_mypy_strict_and_ruff(hard_tree: Path, tmp_path: Path) -> None:
    """The whole generated tree of the harder CRD (two versions of one kind) type-checks."""
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "generated").symlink_to(hard_tree)
    (tmp_path / "samplecontroller").symlink_to(root / "samplecontroller")
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(root / "pyproject.toml"),
                           "--cache-dir", str(mypy_cache(root)), "-p", "generated"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert mypy.returncode == 0, mypy.stdout[-3000:]
    ruff = subprocess.run([sys.executable, "-m", "ruff", "check", "--config", str(root / "pyproject.toml"),
                           "--select", "F", "generated/"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert ruff.returncode == 0, ruff.stdout[-3000:]
