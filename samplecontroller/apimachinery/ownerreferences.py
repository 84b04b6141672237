"""Owner and controller references, as metav1's controller_ref.go and controller-runtime's controllerutil.

Objects are frozen msgspec Structs (any package's generated models) or wire-form dicts; every
function that "sets" returns a changed copy and leaves its argument alone. The group, version and
kind of an owner come from ``gvk`` when given, else from the owner's own ``apiVersion``/``kind``
(generated models always carry their own; the runtime layer passes what its Scheme says).

- ``new_controller_ref(owner, gvk)``: metav1.NewControllerRef, a reference with ``controller`` and
  ``blockOwnerDeletion`` true (a wire dict, or ``ref_type=OwnerReference`` of your package).
- ``set_controller_reference(owner, obj)``: ``obj`` controlled by ``owner``. An existing reference
  to the same object (same API group, kind and name) is replaced, another one is added; a
  different controller is an ``AlreadyOwnedError``; a namespaced owner of an object in another
  namespace (or of a cluster-scoped object) is a ValueError, since the garbage collector would
  delete the object at once.
- ``set_owner_reference(owner, obj)``: the same without control (an additional owner).
- ``remove_owner_reference(owner, obj)``: ``(copy, changed)`` without the reference to ``owner``.
- ``get_controller_of(obj)``: the controller reference or None; ``is_controlled_by(obj, owner)``:
  whether it points at ``owner`` (UID, as metav1.IsControlledBy); ``has_controller_reference``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

import msgspec

from samplecontroller.apimachinery import meta, objects
from samplecontroller.apimachinery.meta import OwnerRef, get_controller_of

__all__ = [
    "AlreadyOwnedError",
    "OwnerRef",
    "get_controller_of",
    "has_controller_reference",
    "is_controlled_by",
    "new_controller_ref",
    "owner_reference",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]

T = TypeVar("T")
R = TypeVar("R")

GVK = Sequence[str]
"""(group, version, kind); the core group is ""."""


class AlreadyOwnedError(ValueError):
    """The object already has a controller reference to a different object."""

    def __init__(self, obj: Any, owner: OwnerRef) -> None:
        self.owner = owner
        where = f"{meta.get_namespace(obj)}/{meta.get_name(obj)}" if meta.get_namespace(obj) else meta.get_name(obj)
        super().__init__(f"object {where} is already owned by another {owner.kind} controller {owner.name}")


def _api_version_and_kind(owner: Any, gvk: GVK | None) -> tuple[str, str]:
    if gvk is not None:
        group, version, kind = gvk
        return (f"{group}/{version}" if group else version), kind
    api_version, kind = meta.get_api_version(owner), meta.get_kind(owner)
    if not api_version or not kind:
        raise ValueError(f"the owner {meta.get_name(owner)!r} has no apiVersion and kind: pass gvk")
    return api_version, kind


def owner_reference(owner: Any, gvk: GVK | None = None, *, controller: bool = False) -> dict[str, Any]:
    """The wire-form ownerReference to ``owner``; ``controller`` sets controller and
    blockOwnerDeletion. ValueError when the owner has no name or uid (an object not yet created)."""
    api_version, kind = _api_version_and_kind(owner, gvk)
    name, uid = meta.get_name(owner), meta.get_uid(owner)
    if not name or not uid:
        raise ValueError("the owner needs a name and a uid (use the object the server returned)")
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller:
        ref["controller"] = True
        ref["blockOwnerDeletion"] = True
    return ref


@overload
def new_controller_ref(owner: Any, gvk: GVK | None = None) -> dict[str, Any]: ...
@overload
def new_controller_ref(owner: Any, gvk: GVK | None = None, *, ref_type: type[R]) -> R: ...
def new_controller_ref(owner: Any, gvk: GVK | None = None, *, ref_type: type[Any] = dict) -> Any:
    """metav1.NewControllerRef: a controller reference (controller and blockOwnerDeletion true) to
    ``owner``, as a wire dict or, with ``ref_type``, that type (e.g. a generated OwnerReference)."""
    ref = owner_reference(owner, gvk, controller=True)
    return ref if ref_type is dict else msgspec.convert(ref, ref_type)


def has_controller_reference(obj: Any) -> bool:
    """True when ``obj`` has an ownerReference with controller=true."""
    return get_controller_of(obj) is not None


def is_controlled_by(obj: Any, owner: Any) -> bool:
    """metav1.IsControlledBy: ``obj``'s controller reference has ``owner``'s UID."""
    ref = get_controller_of(obj)
    return ref is not None and bool(ref.uid) and ref.uid == meta.get_uid(owner)


def _refers_to_same_object(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """controller-runtime's referSameObject: API group (not version), kind and name."""
    return (meta.group_version(str(a.get("apiVersion") or ""))[0] == meta.group_version(str(b.get("apiVersion") or ""))[0]
            and a.get("kind") == b.get("kind") and a.get("name") == b.get("name"))


def _validate_owner(owner: Any, obj: Any) -> None:
    owner_ns, obj_ns = meta.get_namespace(owner), meta.get_namespace(obj)
    if not owner_ns:
        return
    if not obj_ns:
        raise ValueError(f"cluster-scoped resource must not have a namespace-scoped owner, owner's namespace {owner_ns}")
    if owner_ns != obj_ns:
        raise ValueError(f"cross-namespace owner references are disallowed, owner's namespace {owner_ns}, "
                         f"obj's namespace {obj_ns}")


def _wire_refs(obj: Any) -> list[dict[str, Any]]:
    refs = objects.to_dict(obj).get("metadata", {}).get("ownerReferences") or []
    return [dict(ref) for ref in refs]


def _with_refs(obj: T, refs: list[dict[str, Any]]) -> T:
    data = objects.to_dict(obj)
    metadata = data.setdefault("metadata", {})
    if refs:
        metadata["ownerReferences"] = refs
    else:
        metadata.pop("ownerReferences", None)
    return objects.from_dict(type(obj), data)


def _upsert(obj: T, ref: dict[str, Any]) -> T:
    refs = _wire_refs(obj)
    for index, existing in enumerate(refs):
        if _refers_to_same_object(existing, ref):
            if existing == ref:
                return obj
            refs[index] = ref
            break
    else:
        refs.append(ref)
    return _with_refs(obj, refs)


def set_controller_reference(owner: Any, obj: T, gvk: GVK | None = None) -> T:
    """A copy of ``obj`` controlled by ``owner`` (controller and blockOwnerDeletion true).

    ``AlreadyOwnedError`` when ``obj`` has a controller reference to another object (API group,
    kind and name differ); ValueError for an owner in another namespace (see the module doc).
    ``obj`` itself is returned when it already has exactly this reference.
    """
    ref = owner_reference(owner, gvk, controller=True)
    current = get_controller_of(obj)
    if current is not None and not _refers_to_same_object(
            {"apiVersion": current.api_version, "kind": current.kind, "name": current.name}, ref):
        raise AlreadyOwnedError(obj, current)
    _validate_owner(owner, obj)
    return _upsert(obj, ref)


def set_owner_reference(owner: Any, obj: T, gvk: GVK | None = None) -> T:
    """A copy of ``obj`` with a (non-controller) owner reference to ``owner``, replacing one to
    the same object; ValueError for an owner in another namespace."""
    ref = owner_reference(owner, gvk)
    _validate_owner(owner, obj)
    return _upsert(obj, ref)


def remove_owner_reference(owner: Any, obj: T, gvk: GVK | None = None) -> tuple[T, bool]:
    """(a copy of ``obj`` without its references to ``owner``, whether there was one)."""
    api_version, kind = _api_version_and_kind(owner, gvk)
    target = {"apiVersion": api_version, "kind": kind, "name": meta.get_name(owner)}
    refs = _wire_refs(obj)
    kept = [ref for ref in refs if not _refers_to_same_object(ref, target)]
    if len(kept) == len(refs):
        return obj, False
    return _with_refs(obj, kept), True
