"""Conversion between the versions of a kind through a hub (controller-runtime's pkg/conversion).

A kind served in several versions picks one of them as its **hub**; every other version is a
**spoke** that knows how to convert itself to and from the hub. Any pair of versions then
converts through the hub (spoke -> hub -> spoke), so N versions need N - 1 conversions, not N².

The generated models are the generator's (frozen msgspec Structs, never edited by hand), so the
conversions live beside them, one object per spoke, typed on the models of both versions::

    class BackupV1Alpha1Conversion:  # a Convertible[v1alpha1.Backup, v1.Backup]
        spoke = v1alpha1.Backup
        hub = v1.Backup

        def convert_to(self, src: v1alpha1.Backup) -> v1.Backup: ...
        def convert_from(self, hub: v1.Backup) -> v1alpha1.Backup: ...

    converter = Converter(scheme).register(hub(v1.Backup), BackupV1Alpha1Conversion())
    converter.convert(obj_as_dict, "ops.example.com/v1alpha1")   # a dict in that version

Contract:
- One hub per kind (group and kind): a second hub for the kind, a spoke whose ``hub`` is not
  the registered hub, a spoke of another kind, or two conversions for one version raise
  ``ConversionError`` at registration.
- ``check(kind)`` names the versions of a kind the scheme knows that have no conversion (Go's
  ``IsConvertible`` refusing a kind whose versions are not all convertible).
- ``convert(obj, desired_api_version)`` decodes the wire-form ``obj`` into its version's model,
  converts through the hub and returns the wire form of the result with ``apiVersion`` set to
  the desired one. An object already in the desired version comes back unchanged. A kind
  without a registered hub, a version without a conversion, a model that does not decode, or a
  conversion that raises are ``ConversionError`` with one line naming them.

The ConversionReview webhook serving a Converter is ``samplecontroller.runtime.webhook.conversion``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from samplecontroller.apimachinery import meta, objects
from samplecontroller.client.scheme import Scheme
from samplecontroller.runtime._gvk import gvk_for_type

__all__ = ["ConversionError", "Convertible", "Converter", "Hub", "hub"]

HubT = TypeVar("HubT")
SpokeT = TypeVar("SpokeT")
HubT_co = TypeVar("HubT_co", covariant=True)


class ConversionError(Exception):
    """A conversion that cannot be made (``str()`` is one line)."""


class Hub(Protocol[HubT_co]):
    """The declaration of a kind's hub version (Go's ``conversion.Hub``): ``model`` is its type.
    ``hub(v1.Backup)`` makes one."""

    @property
    def model(self) -> type[HubT_co]: ...


@dataclass(frozen=True)
class _HubOf(Generic[HubT]):
    model: type[HubT]


def hub(model: type[HubT]) -> Hub[HubT]:
    """Declare ``model`` the hub version of its kind."""
    return _HubOf(model)


class Convertible(Protocol[SpokeT, HubT]):
    """One spoke version of a kind and its conversion to and from the hub (Go's ``conversion.Convertible``).

    ``convert_to`` and ``convert_from`` return new objects (the models are frozen) and must keep
    ``metadata`` (name, namespace, UID, labels, ...): the API server rejects a conversion that
    changes the identity of an object.
    """

    @property
    def spoke(self) -> type[SpokeT]: ...

    @property
    def hub(self) -> type[HubT]: ...

    def convert_to(self, src: SpokeT) -> HubT:
        """``src`` in the hub version."""
        ...

    def convert_from(self, hub: HubT) -> SpokeT:
        """``hub`` in this spoke's version."""
        ...


@dataclass
class _Kind:
    hub_version: str
    hub: type[Any]
    spokes: dict[str, Convertible[Any, Any]]


class Converter:
    """The hubs and spokes of some kinds; converts wire-form objects between their versions."""

    def __init__(self, scheme: Scheme | None = None) -> None:
        self.scheme = scheme
        self._kinds: dict[tuple[str, str], _Kind] = {}

    def _gvk(self, model: type[Any]) -> tuple[str, str, str]:
        try:
            return gvk_for_type(model, self.scheme)
        except ValueError as err:
            raise ConversionError(str(err)) from None

    def register(self, hub: Hub[Any], *spokes: Convertible[Any, Any]) -> Converter:
        """Declare ``hub`` the hub of its kind and add ``spokes``; ``self`` (for chaining)."""
        group, version, kind = self._gvk(hub.model)
        entry = self._kinds.get((group, kind))
        if entry is None:
            entry = self._kinds[(group, kind)] = _Kind(version, hub.model, {})
        elif entry.hub is not hub.model:
            raise ConversionError(f"{kind}.{group} has more than one hub version: {entry.hub_version} and {version}")
        for spoke in spokes:
            self._add_spoke(group, kind, entry, spoke)
        return self

    def _add_spoke(self, group: str, kind: str, entry: _Kind, spoke: Convertible[Any, Any]) -> None:
        s_group, s_version, s_kind = self._gvk(spoke.spoke)
        name = type(spoke).__name__
        if (s_group, s_kind) != (group, kind):
            raise ConversionError(f"{name} converts {s_kind}.{s_group}, not {kind}.{group}")
        if spoke.hub is not entry.hub:
            _, h_version, _ = self._gvk(spoke.hub)
            raise ConversionError(f"{name} converts {kind}.{group}/{s_version} through {h_version}, but the hub "
                                  f"of {kind}.{group} is {entry.hub_version}")
        if s_version == entry.hub_version:
            raise ConversionError(f"{name}: {kind}.{group}/{s_version} is the hub version; it converts to nothing")
        if s_version in entry.spokes:
            raise ConversionError(f"{kind}.{group}/{s_version} has two conversions: "
                                  f"{type(entry.spokes[s_version]).__name__} and {name}")
        entry.spokes[s_version] = spoke

    def kinds(self) -> list[tuple[str, str]]:
        """The (group, kind) pairs with a hub."""
        return sorted(self._kinds)

    def versions(self, group: str, kind: str) -> list[str]:
        """The hub's and the spokes' versions of a kind (the hub first); empty without a hub."""
        entry = self._kinds.get((group, kind))
        return [entry.hub_version, *sorted(entry.spokes)] if entry else []

    def check(self, group: str, kind: str) -> None:
        """ConversionError unless every version of the kind in the scheme converts through the hub."""
        entry = self._kinds.get((group, kind))
        if entry is None:
            raise ConversionError(f"{kind}.{group} has no hub version: declare one with conversion.hub(<model>)")
        if self.scheme is None:
            return
        known = {info.version for info in self.scheme.all() if (info.group, info.kind) == (group, kind)}
        missing = sorted(known - {entry.hub_version, *entry.spokes})
        if missing:
            raise ConversionError(f"{kind}.{group}: versions {', '.join(missing)} have no conversion to the hub "
                                  f"{entry.hub_version}")

    def convert(self, obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        """``obj`` (wire form) in ``desired_api_version``; see the module docstring."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            raise ConversionError("the object has no apiVersion or kind")
        if api_version == desired_api_version:
            return obj
        group, version = meta.group_version(api_version)
        desired_group, desired_version = meta.group_version(desired_api_version)
        if desired_group != group:
            raise ConversionError(f"cannot convert {kind} from group {group!r} to group {desired_group!r}")
        entry = self._kinds.get((group, kind))
        if entry is None:
            raise ConversionError(f"{kind}.{group} has no hub version registered with the conversion webhook")
        hub = self._to_hub(entry, group, version, kind, obj)
        out = objects.to_dict(self._from_hub(entry, group, desired_version, kind, hub))
        out["apiVersion"], out["kind"] = desired_api_version, kind
        return out

    def _spoke(self, entry: _Kind, group: str, version: str, kind: str) -> Convertible[Any, Any]:
        spoke = entry.spokes.get(version)
        if spoke is None:
            raise ConversionError(f"{kind}.{group}/{version} has no conversion to the hub {entry.hub_version} "
                                  f"(convertible versions: {', '.join([entry.hub_version, *sorted(entry.spokes)])})")
        return spoke

    def _to_hub(self, entry: _Kind, group: str, version: str, kind: str, obj: dict[str, Any]) -> Any:
        if version == entry.hub_version:
            return _decode(entry.hub, obj, f"{kind}.{group}/{version}")
        spoke = self._spoke(entry, group, version, kind)
        src = _decode(spoke.spoke, obj, f"{kind}.{group}/{version}")
        return _call(spoke.convert_to, src, f"{type(spoke).__name__}.convert_to")

    def _from_hub(self, entry: _Kind, group: str, version: str, kind: str, hub: Any) -> Any:
        if version == entry.hub_version:
            return hub
        spoke = self._spoke(entry, group, version, kind)
        return _call(spoke.convert_from, hub, f"{type(spoke).__name__}.convert_from")


def _decode(model: type[Any], obj: dict[str, Any], what: str) -> Any:
    try:
        return objects.from_dict(model, obj)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        raise ConversionError(f"cannot decode the {what} object: {err}") from None


def _call(fn: Any, arg: Any, what: str) -> Any:
    try:
        return fn(arg)
    except ConversionError:
        raise
    except Exception as err:
        raise ConversionError(f"{what} failed: {type(err).__name__}: {err}") from None
