"""The StorageVersionMigration strategy (storagemigration.k8s.io/v1; pkg/apis/storagemigration/
validation as of its v1 API):

- ``spec.resource.resource`` is required and a DNS-1035 label, ``spec.resource.group`` empty or
  a DNS-1123 subdomain (ValidateStorageVersionMigration); the whole spec is immutable;
- a status write (ValidateStorageVersionMigrationStatusUpdate): ``status.resourceVersion`` a
  well-formed resource version (resourceversion.CompareResourceVersion: digits without a leading
  zero; an empty one is not), never changed once set; the conditions as metav1.Conditions
  (``condition_errors``); Succeeded and Failed not both True, Running not True with either of
  them, and neither Succeeded nor Failed turned back from True.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from samplecontroller.apiserver import schema
from samplecontroller.apiserver.objects import deep_get
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.validation import (
    dns1035_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)

__all__ = ["StorageVersionMigrationStrategy", "condition_errors"]

_STATUSES = ("False", "True", "Unknown")
_REASON_FORMAT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON = re.compile(f"^{_REASON_FORMAT}$")
_REASON_ERROR = (
    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric "
    "characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
    f"'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '{_REASON_FORMAT}')")
_CHECKED = frozenset({"spec.resource.group", "spec.resource.resource"})


def condition_errors(conditions: Any, where: str) -> list[FieldError]:
    """metav1validation.ValidateConditions: one condition per type; each type a qualified name,
    status True/False/Unknown, observedGeneration not negative, lastTransitionTime and reason set,
    the reason CamelCase-like and at most 1024 bytes, the message at most 32768."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions if isinstance(conditions, list) else ()):
        condition = condition if isinstance(condition, Mapping) else {}
        path = f"{where}[{i}]"
        ctype = str(condition.get("type") or "")
        if ctype in seen:
            errors.append(schema.duplicate(f"{path}.type", ctype))
        seen.add(ctype)
        errors += [schema.invalid(f"{path}.type", ctype, m) for m in qualified_name_errors(ctype)]
        status = condition.get("status") or ""
        if status not in _STATUSES:
            errors.append(schema.not_supported(f"{path}.status", status, _STATUSES))
        generation = condition.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            errors.append(schema.invalid(f"{path}.observedGeneration", generation,
                                         "must be greater than or equal to zero"))
        if not condition.get("lastTransitionTime"):
            errors.append(schema.required(f"{path}.lastTransitionTime", "must be set"))
        reason = str(condition.get("reason") or "")
        if not reason:
            errors.append(schema.required(f"{path}.reason", "must be set"))
        else:
            if not _REASON.match(reason):
                errors.append(schema.invalid(f"{path}.reason", reason, _REASON_ERROR))
            if len(reason.encode()) > 1024:
                errors.append(schema.too_long(f"{path}.reason", 1024))
        if len(str(condition.get("message") or "").encode()) > 32 * 1024:
            errors.append(schema.too_long(f"{path}.message", 32 * 1024))
    return errors


def _true(obj: Obj, ctype: str) -> bool:
    """meta.FindStatusCondition(conditions, ctype).Status == True (the first of that type)."""
    conditions = deep_get(obj, "status", "conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == ctype:
            return condition.get("status") == "True"
    return False


def _go_spec(spec: Any) -> schema.GoRaw:
    """The internal spec as Go's ``%#v`` prints it (ValidateImmutableField's value)."""
    resource = spec.get("resource") if isinstance(spec, Mapping) else None
    resource = resource if isinstance(resource, Mapping) else {}
    return schema.GoRaw('storagemigration.StorageVersionMigrationSpec{Resource:v1.GroupResource{Group:'
                        f'"{resource.get("group") or ""}", Resource:"{resource.get("resource") or ""}"}}}}')


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _go_time(value: Any) -> str:
    """A decoded metav1.Time as ``%#v`` prints it (kube decodes to the server's local zone, UTC)."""
    found = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", str(value or ""))
    if not found:
        return "v1.Time{Time:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)}"
    y, mo, d, h, mi, sec = (int(g) for g in found.groups())
    return f"v1.Time{{Time:time.Date({y}, time.{_MONTHS[mo - 1]}, {d}, {h}, {mi}, {sec}, 0, time.Local)}}"


def _go_conditions(conditions: Any) -> schema.GoRaw:
    """A []metav1.Condition as Go's ``%#v`` prints it (the conditions rules' value)."""
    items = []
    for c in conditions if isinstance(conditions, list) else ():
        c = c if isinstance(c, Mapping) else {}
        generation = c.get("observedGeneration") if isinstance(c.get("observedGeneration"), int) else 0
        items.append(f"v1.Condition{{Type:{json.dumps(str(c.get('type') or ''))}, "
                     f"Status:{json.dumps(str(c.get('status') or ''))}, ObservedGeneration:{generation}, "
                     f"LastTransitionTime:{_go_time(c.get('lastTransitionTime'))}, "
                     f"Reason:{json.dumps(str(c.get('reason') or ''))}, "
                     f"Message:{json.dumps(str(c.get('message') or ''))}}}")
    return schema.GoRaw("[]v1.Condition{" + ", ".join(items) + "}")


class StorageVersionMigrationStrategy(Strategy):
    """StorageVersionMigration (see the module's docstring)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        # 1.37's definitions mark group and resource required; kube accepts an empty group (the
        # core group) and says "resource is required to be set"
        errors = [e for e in super().validate(res, obj, sch) if e.field not in _CHECKED]
        resource = str(deep_get(obj, "spec", "resource", "resource") or "")
        group = str(deep_get(obj, "spec", "resource", "group") or "")
        if not resource:
            errors.append(schema.required("spec.resource.resource", "resource is required to be set"))
        elif messages := dns1035_label_errors(resource):
            errors.append(schema.invalid("spec.resource.resource", resource, ",".join(messages)))
        if group and (messages := dns1123_subdomain_errors(group)):
            errors.append(schema.invalid("spec.resource.group", group, ",".join(messages)))
        return errors

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        errors: list[FieldError] = []
        version = str(deep_get(obj, "status", "resourceVersion") or "")
        if not version or version[0] == "0" or not version.isascii() or not version.isdigit():
            errors.append(schema.invalid("status.resourceVersion", version,
                                         f"resource version is not well formed: {version}"))
        errors += condition_errors(deep_get(obj, "status", "conditions"), "status.conditions")
        before = str(deep_get(old, "status", "resourceVersion") or "")
        if before and before != version:
            errors.append(schema.invalid("status.resourceVersion", version, "field is immutable"))
        conditions = _go_conditions(deep_get(obj, "status", "conditions"))
        succeeded, failed, running = _true(obj, "Succeeded"), _true(obj, "Failed"), _true(obj, "Running")
        checks = ((succeeded and failed, "Both success and failed conditions cannot be true at the same time"),
                  (succeeded and running, "Running condition cannot be true when success condition is true"),
                  (failed and running, "Running condition cannot be true when failed condition is true"),
                  (_true(old, "Succeeded") and not succeeded, "Success condition cannot be set to false once it is true"),
                  (_true(old, "Failed") and not failed, "Failed condition cannot be set to false once it is true"))
        errors += [schema.invalid("status.conditions", conditions, detail) for broken, detail in checks if broken]
        return errors

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None or obj.get("spec") == old.get("spec"):
            return []
        return [schema.invalid("spec", _go_spec(obj.get("spec")), "field is immutable")]
