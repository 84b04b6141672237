"""Unstructured objects by group/version/kind: dicts in the Manager's cache and in ``for_``/``owns``/``watches``.

controller-runtime reads and watches ``unstructured.Unstructured`` objects of any kind, with no Go
type for it; here ``Unstructured("example.com/v1", "Widget")`` stands where a model type would
(``mgr.get_cache().get_informer(key)``, ``client.get(key, ns, name)``, ``builder.for_(key)``,
``owns(key)``, ``watches(key, handler)``): the Scheme resolves it to a ``ResourceInfo`` whose model
is ``dict``, so the informer, the cache and the client carry the wire form as plain dicts (never
mutate them: they are the cache's). The resource name is the kind's guessed plural
(``Widget`` -> ``widgets``) unless given; ``namespaced`` says the scope.

Writing a dict of such a kind through the runtime client looks its kind up in the Scheme:
``key.add_to_scheme(scheme)`` registers it (the built-in and generated kinds are there already).
"""

from __future__ import annotations

from typing import Any, cast

from samplecontroller.client.types import ResourceInfo

__all__ = ["Unstructured", "guess_plural", "unstructured"]


def guess_plural(kind: str) -> str:
    """apimachinery's ``UnsafeGuessKindToResource``: ``Ingress`` -> ``ingresses``, ``Policy`` -> ``policies``."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lower[:-1] + "ies"
    return lower + "s"


class Unstructured:
    """A kind read as dicts; hashable, equal by api_version, kind and resource (see the module docstring)."""

    __slots__ = ("__name__", "api_version", "info", "kind", "namespaced", "resource")

    def __init__(self, api_version: str, kind: str, resource: str = "", namespaced: bool = True) -> None:
        if not api_version or not kind:
            raise ValueError("Unstructured needs an apiVersion and a kind (like Unstructured('batch/v1', 'Job'))")
        self.api_version = api_version
        self.kind = kind
        self.resource = resource or guess_plural(kind)
        self.namespaced = namespaced
        self.__name__ = f"Unstructured({api_version} {kind})"
        group, _, version = api_version.rpartition("/")
        self.info: ResourceInfo[Any] = ResourceInfo(group=group, version=version, resource=self.resource, kind=kind,
                                                    namespaced=namespaced, model=dict, list_model=dict,
                                                    list_kind=f"{kind}List")

    def __repr__(self) -> str:
        return self.__name__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unstructured) and (self.api_version, self.kind, self.resource) == (
            other.api_version, other.kind, other.resource)

    def __hash__(self) -> int:
        return hash(("Unstructured", self.api_version, self.kind, self.resource))

    def add_to_scheme(self, scheme: Any) -> None:
        """Register the kind (as dicts) so that the runtime client can write dicts of it."""
        try:
            scheme.info_for_gvk(self.info.group, self.info.version, self.kind)
        except KeyError:
            scheme.add(self.info)


def unstructured(api_version: str, kind: str, resource: str = "", namespaced: bool = True) -> type[dict[str, Any]]:
    """``Unstructured(...)`` typed as ``type[dict[str, Any]]``, so that ``client.get(key, ns, name)``,
    ``cache.list(key)`` and ``builder.for_(key)`` type-check as reads of dicts."""
    return cast(type[dict[str, Any]], Unstructured(api_version, kind, resource, namespaced))
