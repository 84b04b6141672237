"""The API reference's docstring check (docs/hooks/reference.py): a public name without a docstring
fails the site's build; no name is exempt."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import griffe
import pytest
from mkdocs.exceptions import PluginError

from docs.hooks import public_api, reference


@pytest.fixture(scope="module")
def package() -> griffe.Module:
    return public_api.load()


def test_the_library_passes_the_check(package: griffe.Module) -> None:
    assert reference.check(package) == []


def test_a_public_function_without_a_docstring_fails_the_build(package: griffe.Module,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    target = package["runtime.builder"].members["controller_managed_by"]
    monkeypatch.setattr(target, "docstring", None)
    assert reference.check(package) == [
        "samplecontroller.runtime.builder.controller_managed_by: public name without a docstring"]
    monkeypatch.setattr(public_api, "load", lambda: package)
    config: Any = SimpleNamespace(nav=[{"API reference": []}])
    with pytest.raises(PluginError, match="controller_managed_by: public name without a docstring"):
        reference.on_config(config)


def test_a_public_method_and_a_module_without_docstrings_are_reported(package: griffe.Module,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    builder = package["runtime.builder"]
    monkeypatch.setattr(builder.members["Builder"].members["for_"], "docstring", None)
    monkeypatch.setattr(builder, "docstring", None)
    assert set(public_api.missing_docstrings(package)) == {
        "samplecontroller.runtime.builder", "samplecontroller.runtime.builder.Builder.for_"}


def test_private_names_need_no_docstring(package: griffe.Module) -> None:
    missing = public_api.missing_docstrings(package)
    assert not [path for path in missing if any(part.startswith("_") for part in path.split("."))]


def test_every_public_module_has_a_reference_page(package: griffe.Module) -> None:
    paths = {m.path for m in public_api.modules(package)}
    for expected in ("samplecontroller.runtime.manager", "samplecontroller.client", "samplecontroller.cache",
                     "samplecontroller.workqueue", "samplecontroller.informers", "samplecontroller.record",
                     "samplecontroller.leaderelection", "samplecontroller.apimachinery.conditions",
                     "samplecontroller.testing.pytest_plugin", "samplecontroller.codegen",
                     "samplecontroller.apiserver", "samplecontroller.apiserver.testing"):
        assert expected in paths
    assert not [p for p in paths if p.startswith(("samplecontroller.kubernetes", "samplecontroller.apiserver.handlers"))]


def test_a_package_page_gives_each_reexported_name_its_summary(package: griffe.Module,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "_package", [package])
    (consistency,) = [m for m in public_api.modules(package) if m.path == "samplecontroller.runtime.consistency"]
    page = reference._render(consistency)
    assert ("- [`Recording`][samplecontroller.runtime.consistency.recorder.Recording]: "
            "The writes of one reconcile, in order.\n") in page
