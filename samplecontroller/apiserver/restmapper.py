"""The REST mapper: the resource types the embedded API server serves (built-ins plus the CRDs'
custom resources) and the mapping between group/version/resource, kind and storage key.

A ``Resource`` describes one group/version/resource (its kind, scope, names, verbs and
subresources). The storage key of a resource is ``group/plural`` (versions of one CRD share
their storage, conversion strategy None: only ``apiVersion`` changes between versions).
``RESTMapper`` holds them and answers lookups and discovery; it is mutated only on the server's
event loop (CRD establish/removal), so it needs no locking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver import builtins
from samplecontroller.apiserver.version import BINARY_MINOR

__all__ = ["RESTMapper", "Resource", "builtin_resources", "resources_from_crd"]

ALL_VERBS = builtins.ALL_VERBS


@dataclass(frozen=True)
class Resource:
    """One served group/version/resource."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    list_kind: str = ""
    crd_name: str = ""  # set for custom resources
    verbs: tuple[str, ...] = ALL_VERBS
    scale: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_key(self) -> str:
        return f"{self.group}/{self.plural}"

    @property
    def group_resource(self) -> str:
        """``foos.samplecontroller.k8s.io`` / ``pods`` as in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def kind_group(self) -> str:
        """``Foo.samplecontroller.k8s.io`` / ``Pod`` as in Invalid messages."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    @property
    def is_custom(self) -> bool:
        return bool(self.crd_name)

    @property
    def the_list_kind(self) -> str:
        return self.list_kind or self.kind + "List"

    @property
    def the_singular(self) -> str:
        return self.singular or self.kind.lower()


def builtin_resources(emulated_minor: int = BINARY_MINOR) -> tuple[Resource, ...]:
    """Every built-in resource of the pinned Kubernetes version, or of the emulated one (see ``builtins``)."""
    return tuple(Resource(group, version, plural, kind, namespaced, kind.lower(), short, cats, subs, verbs=verbs)
                 for group, version, plural, kind, namespaced, short, cats, subs, verbs
                 in builtins.builtin_resources(emulated_minor))


def _served_versions(crd: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return [v for v in versions if isinstance(v, Mapping) and v.get("served", True)]


def resources_from_crd(crd: Mapping[str, Any]) -> list[Resource]:
    """One Resource per served version of ``crd`` (an apiextensions.k8s.io/v1 object)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out: list[Resource] = []
    for version in _served_versions(crd):
        subs = version.get("subresources") or {}
        out.append(Resource(
            group=str(spec.get("group", "")),
            version=str(version.get("name", "")),
            plural=str(names.get("plural", "")),
            kind=str(names.get("kind", "")),
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            singular=str(names.get("singular") or str(names.get("kind", "")).lower()),
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            subresources=tuple(s for s in ("status", "scale") if s in subs),
            list_kind=str(names.get("listKind") or ""),
            crd_name=str((crd.get("metadata") or {}).get("name", "")),
            scale=dict(subs.get("scale") or {}),
        ))
    return out


class RESTMapper:
    """Lookup of served resources by group/version/plural, and by storage key."""

    def __init__(self, emulated_minor: int = BINARY_MINOR) -> None:
        self.emulated_minor = emulated_minor
        """The Kubernetes minor version whose built-in resources are served (``version``)."""
        self._by_gvr: dict[tuple[str, str, str], Resource] = {}
        self._group_order: list[str] = []
        self.on_change: list[Callable[[], None]] = []
        """Called after the served resources changed (discovery and OpenAPI caches drop)."""
        for res in builtin_resources(emulated_minor):
            self.add(res)

    def add(self, res: Resource) -> None:
        self._by_gvr[(res.group, res.version, res.plural)] = res
        if res.group not in self._group_order:
            self._group_order.append(res.group)

    def remove_crd(self, crd_name: str) -> None:
        for key, res in list(self._by_gvr.items()):
            if res.crd_name == crd_name:
                del self._by_gvr[key]
        used = {r.group for r in self._by_gvr.values()}
        self._group_order = [g for g in self._group_order if g in used]

    def set_crd(self, crd: Mapping[str, Any]) -> None:
        """(Re)register the served versions of ``crd``."""
        self.remove_crd(str((crd.get("metadata") or {}).get("name", "")))
        for res in resources_from_crd(crd):
            if res.group and res.plural and res.kind and (res.group, res.version, res.plural) not in self._by_gvr:
                self.add(res)

    def changed(self) -> None:
        """Tell ``on_change`` that the served resources changed."""
        for callback in self.on_change:
            callback()

    def get(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_gvr.get((group, version, plural))

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._by_gvr.values()))

    def groups(self) -> list[str]:
        """Served groups in registration order (core ``""`` first)."""
        return list(self._group_order)

    def versions(self, group: str) -> list[str]:
        """Served versions of ``group``, preferred first (GA > beta > alpha, higher first)."""
        found: list[str] = []
        for res in self._by_gvr.values():
            if res.group == group and res.version not in found:
                found.append(res.version)
        return sorted(found, key=_version_priority)

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        return [r for r in self._by_gvr.values() if r.group == group and r.version == version]

    def by_storage_key(self, key: str) -> list[Resource]:
        return [r for r in self._by_gvr.values() if r.storage_key == key]


def _version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' version ordering: GA > beta > alpha, higher numbers first, others last."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), version)
