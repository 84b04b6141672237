"""A core/v1 ObjectReference to an object (client-go's k8s.io/client-go/tools/reference.GetReference).

``get_reference(obj, scheme)`` fills kind, apiVersion, name, namespace, uid and resourceVersion from
the object; where the object does not carry its kind (an object decoded without TypeMeta), the
``scheme`` gives it by the object's type, as Go's ``scheme.ObjectKinds``. An object whose kind is
known to neither is a ValueError naming the fix.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from samplecontroller.apimachinery import meta
from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes.apis.core.v1 import ObjectReference

__all__ = ["get_reference"]


def get_reference(obj: Any, scheme: Scheme | None = None) -> ObjectReference:
    """The ObjectReference of ``obj`` (a model or a dict); see the module docstring."""
    if isinstance(obj, ObjectReference):
        return obj
    api_version, kind = meta.get_api_version(obj), meta.get_kind(obj)
    if (not api_version or not kind) and scheme is not None and not isinstance(obj, dict) \
            and scheme.recognizes(type(obj)):
        info = scheme.info_for(type(obj))
        api_version, kind = info.api_version, info.kind
    if not kind:
        raise ValueError(f"no kind for the {type(obj).__name__} {meta.get_name(obj)!r}: the object has no "
                         "kind and the scheme does not register its type (add its group's add_to_scheme)")
    return ObjectReference(api_version=_opt(api_version), kind=kind, name=_opt(meta.get_name(obj)),
                           namespace=_opt(meta.get_namespace(obj)), uid=_opt(meta.get_uid(obj)),
                           resource_version=_opt(meta.get_resource_version(obj)))


def _opt(value: str) -> str | UnsetType:
    return value if value else UNSET
