"""A registry of resources: model type <-> ResourceInfo <-> group/version/kind (like runtime.Scheme)."""

from __future__ import annotations

from typing import Any

from samplecontroller.client.types import ResourceInfo
from samplecontroller.client.unstructured import Unstructured


class Scheme:
    """Maps model types and GVKs to their ResourceInfo. Adding the same type twice is an error."""

    def __init__(self) -> None:
        self._by_type: dict[type[Any], ResourceInfo[Any]] = {}
        self._by_gvk: dict[tuple[str, str, str], ResourceInfo[Any]] = {}
        self._by_gvr: dict[tuple[str, str, str], ResourceInfo[Any]] = {}

    def add(self, info: ResourceInfo[Any]) -> None:
        """Register a resource; ValueError if its group/version/kind is registered already."""
        gvk = (info.group, info.version, info.kind)
        if gvk in self._by_gvk:
            raise ValueError(f"{info.api_version} {info.kind} is already registered")
        self._by_gvk[gvk] = info
        self._by_gvr[(info.group, info.version, info.resource)] = info
        if info.model is not dict:
            self._by_type[info.model] = info

    def info_for(self, model: type[Any]) -> ResourceInfo[Any]:
        """The ResourceInfo of a model type; KeyError names the type when unknown."""
        try:
            return self._by_type[model]
        except KeyError:
            if isinstance(model, Unstructured):
                return model.info  # dicts of that kind
            raise KeyError(f"{model.__name__} is not registered in the scheme; {registration_hint(model)}") from None

    def info_for_gvk(self, group: str, version: str, kind: str) -> ResourceInfo[Any]:
        """The ResourceInfo of a group/version/kind; KeyError naming it when unknown."""
        try:
            return self._by_gvk[(group, version, kind)]
        except KeyError:
            raise KeyError(f"no kind {kind} in {group or 'core'}/{version}") from None

    def info_for_gvr(self, group: str, version: str, resource: str) -> ResourceInfo[Any]:
        """The ResourceInfo of a group/version/resource; KeyError naming it when unknown."""
        try:
            return self._by_gvr[(group, version, resource)]
        except KeyError:
            raise KeyError(f"no resource {resource} in {group or 'core'}/{version}") from None

    def type_for_gvk(self, group: str, version: str, kind: str) -> type[Any]:
        """The model type of a group/version/kind; KeyError when unknown."""
        return self.info_for_gvk(group, version, kind).model

    def gvk_for(self, model: type[Any]) -> tuple[str, str, str]:
        """(group, version, kind) of a model type; KeyError when unknown."""
        info = self.info_for(model)
        return info.group, info.version, info.kind

    def recognizes(self, model: type[Any]) -> bool:
        """True when ``model`` is registered (an ``Unstructured`` kind always is)."""
        return model in self._by_type or isinstance(model, Unstructured)

    def all(self) -> list[ResourceInfo[Any]]:
        """Every registered ResourceInfo, in registration order."""
        return list(self._by_gvk.values())


def registration_hint(model: type[Any]) -> str:
    """How to register ``model``'s group: the add_to_scheme of the package it comes from, as a kubebuilder
    main.go calls ``clientgoscheme.AddToScheme(scheme)`` and ``<group>v1.AddToScheme(scheme)``."""
    module = getattr(model, "__module__", "") or ""
    if module.startswith("samplecontroller.kubernetes."):
        return ("a built-in kind: call samplecontroller.kubernetes.scheme.add_to_scheme(scheme) on the Scheme "
                "(a scaffolded project's <package>/scheme.py does)")
    root, sep, _ = module.partition(".apis.")
    if sep:
        return f"call {root}.scheme.add_to_scheme(scheme) on the Scheme"
    return "add its ResourceInfo with scheme.add(info), or its package's add_to_scheme(scheme)"
