"""Uniform read access to object metadata, for generated msgspec models and for plain dicts.

The machinery (cache, workqueue keys, garbage collection, predicates) must work on both the
generated typed models and the dynamic (dict) objects, without importing generated code. These
accessors are that seam: each returns the Go zero value ("" / {} / [] / 0 / None) for a missing
or unset field and never raises for an object of either shape.

Typed models follow the generated conventions: attributes are snake_case, optional fields are
``msgspec.UNSET`` when absent, and ``obj.metadata`` is an ObjectMeta struct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

_UNSET = msgspec.UNSET
_Struct = msgspec.Struct

# snake_case attribute -> camelCase wire key, for the fields read here
_WIRE = {
    "name": "name",
    "namespace": "namespace",
    "generate_name": "generateName",
    "uid": "uid",
    "resource_version": "resourceVersion",
    "generation": "generation",
    "labels": "labels",
    "annotations": "annotations",
    "owner_references": "ownerReferences",
    "finalizers": "finalizers",
    "deletion_timestamp": "deletionTimestamp",
    "creation_timestamp": "creationTimestamp",
    "api_version": "apiVersion",
    "kind": "kind",
    "controller": "controller",
    "block_owner_deletion": "blockOwnerDeletion",
}


def _field(obj: Any, attr: str) -> Any:
    # Exact and Struct type checks first: these run several times per cached object per event,
    # and an isinstance() against the Mapping ABC costs more than the rest of the lookup.
    if type(obj) is dict:
        return obj.get(_WIRE.get(attr, attr))
    if obj is None or obj is _UNSET:
        return None
    if not isinstance(obj, _Struct) and isinstance(obj, Mapping):
        return obj.get(_WIRE.get(attr, attr))
    value = getattr(obj, attr, None)
    return None if value is _UNSET else value


def metadata(obj: Any) -> Any:
    """The object's metadata (an ObjectMeta struct or a dict), or None."""
    return _field(obj, "metadata")


def _meta_field(obj: Any, attr: str) -> Any:
    if isinstance(obj, _Struct):  # the typed models' path, a few times per watch event: no generic lookups
        md = getattr(obj, "metadata", None)
        if isinstance(md, _Struct):
            value = getattr(md, attr, None)
            return None if value is _UNSET else value
    return _field(metadata(obj), attr)


def get_name(obj: Any) -> str:
    """``metadata.name``, or ""."""
    return _meta_field(obj, "name") or ""


def get_namespace(obj: Any) -> str:
    """``metadata.namespace``, or "" (cluster-scoped objects)."""
    return _meta_field(obj, "namespace") or ""


def get_generate_name(obj: Any) -> str:
    """``metadata.generateName``, or ""."""
    return _meta_field(obj, "generate_name") or ""


def get_uid(obj: Any) -> str:
    """``metadata.uid``, or ""."""
    return _meta_field(obj, "uid") or ""


def get_resource_version(obj: Any) -> str:
    """``metadata.resourceVersion``, or ""."""
    return _meta_field(obj, "resource_version") or ""


def get_generation(obj: Any) -> int:
    """``metadata.generation``, or 0."""
    return int(_meta_field(obj, "generation") or 0)


def get_labels(obj: Any) -> Mapping[str, str]:
    """``metadata.labels``, or an empty mapping (never mutate the result)."""
    return _meta_field(obj, "labels") or {}


def get_annotations(obj: Any) -> Mapping[str, str]:
    """``metadata.annotations``, or an empty mapping (never mutate the result)."""
    return _meta_field(obj, "annotations") or {}


def get_finalizers(obj: Any) -> Sequence[str]:
    """``metadata.finalizers``, or an empty sequence."""
    return _meta_field(obj, "finalizers") or ()


def get_deletion_timestamp(obj: Any) -> Any:
    """The deletionTimestamp (a datetime for typed models, a string for dicts), or None."""
    return _meta_field(obj, "deletion_timestamp")


def get_creation_timestamp(obj: Any) -> Any:
    """``metadata.creationTimestamp`` as stored (a string on the wire), or None."""
    return _meta_field(obj, "creation_timestamp")


def get_api_version(obj: Any) -> str:
    """The object's ``apiVersion``, or ""."""
    return _field(obj, "api_version") or ""


def get_kind(obj: Any) -> str:
    """The object's ``kind``, or ""."""
    return _field(obj, "kind") or ""


class OwnerRef(msgspec.Struct, frozen=True):
    """The fields of a metav1.OwnerReference that the machinery reads, shape-independent."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""


def get_owner_references(obj: Any) -> list[OwnerRef]:
    """``metadata.ownerReferences`` as ``OwnerRef``s (the fields the machinery reads), or []."""
    return [_owner_ref(r) for r in _meta_field(obj, "owner_references") or ()]


def _owner_ref(ref: Any) -> OwnerRef:
    if isinstance(ref, _Struct):  # the typed models: a field is a value or UNSET (falsy)
        return OwnerRef(getattr(ref, "api_version", "") or "", getattr(ref, "kind", "") or "",
                        getattr(ref, "name", "") or "", getattr(ref, "uid", "") or "",
                        getattr(ref, "controller", None) is True, getattr(ref, "block_owner_deletion", None) is True)
    return OwnerRef(
        api_version=_field(ref, "api_version") or "",
        kind=_field(ref, "kind") or "",
        name=_field(ref, "name") or "",
        uid=_field(ref, "uid") or "",
        controller=bool(_field(ref, "controller")),
        block_owner_deletion=bool(_field(ref, "block_owner_deletion")),
    )


def get_controller_of(obj: Any) -> OwnerRef | None:
    """The ownerReference with controller=true, like metav1.GetControllerOf; None if there is none."""
    for ref in get_owner_references(obj):
        if ref.controller:
            return ref
    return None


def group_version(api_version: str) -> tuple[str, str]:
    """Split an apiVersion into (group, version); the core group is ""."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version
