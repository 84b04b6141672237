"""storage.k8s.io kinds' validation beyond their schema, as pkg/apis/storage/validation does:

- VolumeAttributesClass (GA 1.34): ``driverName`` a qualified name (lower-cased), ``parameters``
  at least one pair, no empty key, at most 512 pairs and 256 KiB; on update ``driverName`` and
  ``parameters`` cannot change (``Forbidden: updates to ... are forbidden.``);
- CSIDriver: on update ``attachRequired`` (field path ``spec.attachedRequired``, as kube spells
  it) and ``volumeLifecycleModes`` are immutable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError, GoRaw, forbidden, invalid, required, too_long
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.validation import qualified_name_errors

__all__ = ["CSIDriverStrategy", "VolumeAttributesClassStrategy"]

_MAX_PARAMETERS = 512
_MAX_PARAMETERS_SIZE = 256 * (1 << 10)


def _provisioner(value: Any, field: str) -> list[FieldError]:
    """validateProvisioner (a missing one is the schema's ``Required value``)."""
    if not isinstance(value, str):
        return []
    if not value:
        return [required(field)]
    lower = value.lower()
    return [invalid(field, lower, m) for m in qualified_name_errors(lower)]


def _parameters(params: Any, allow_empty: bool, field: str) -> list[FieldError]:
    """validateParameters."""
    params = params if isinstance(params, Mapping) else {}
    if len(params) > _MAX_PARAMETERS:
        return [too_long(field, _MAX_PARAMETERS)]
    errors: list[FieldError] = []
    size = 0
    for key, value in params.items():
        if not key:
            errors.append(invalid(field, key, "field can not be empty."))
        size += len(str(key).encode()) + len(str(value).encode())
    if size > _MAX_PARAMETERS_SIZE:
        errors.append(too_long(field, _MAX_PARAMETERS_SIZE))
    if not allow_empty and not params:
        errors.append(required(field, "must contain at least one key/value pair"))
    return errors


class VolumeAttributesClassStrategy(Strategy):
    """ValidateVolumeAttributesClass and ValidateVolumeAttributesClassUpdate."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        errors = super().validate(res, obj, sch)
        return errors + _provisioner(obj.get("driverName"), "driverName") + \
            _parameters(obj.get("parameters"), False, "parameters")

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        errors: list[FieldError] = []
        if obj.get("driverName") != old.get("driverName"):
            errors.append(forbidden("driverName", "updates to driverName are forbidden."))
        if (obj.get("parameters") or {}) != (old.get("parameters") or {}):
            errors.append(forbidden("parameters", "updates to parameters are forbidden."))
        return errors


def _modes(value: Any) -> GoRaw:
    """Go's ``%#v`` of a []storage.VolumeLifecycleMode."""
    if not isinstance(value, list):
        return GoRaw("[]storage.VolumeLifecycleMode(nil)")
    return GoRaw("[]storage.VolumeLifecycleMode{" + ", ".join(json.dumps(str(m)) for m in value) + "}")


class CSIDriverStrategy(Strategy):
    """ValidateCSIDriverUpdate's immutable fields."""

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        spec, before = obj.get("spec") or {}, old.get("spec") or {}
        errors: list[FieldError] = []
        if spec.get("attachRequired") != before.get("attachRequired"):
            errors.append(invalid("spec.attachedRequired", spec.get("attachRequired"), "field is immutable"))
        if spec.get("volumeLifecycleModes") != before.get("volumeLifecycleModes"):
            errors.append(invalid("spec.volumeLifecycleModes", _modes(spec.get("volumeLifecycleModes")),
                                  "field is immutable"))
        return errors
