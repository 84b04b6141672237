"""An ObjectTracker with field management (client-go's ``testing.NewFieldManagedObjectTracker``).

It records ``metadata.managedFields`` and merges server-side apply with the API server's own
implementation (``samplecontroller.apimachinery.fieldmanager``, which the embedded API server
uses too):

- create, update and patch give their field manager an Update entry for the fields it changed
  (a write without one is recorded under ``DEFAULT_FIELD_MANAGER``, as the server names a client of
  this toolkit after its User-Agent);
- ``apply`` owns what the applied configuration sets, removes the fields its manager applied
  before and no longer does (unless another manager owns them), and a field another manager owns
  with another value is a 409 Conflict naming the managers and fields (the server's message and
  ``details.causes``) unless ``force``, which takes them over;
- lists and maps merge by the kind's schema, found through the ``type_converter``
  (``fieldmanager.TypeConverter``) by group, version and kind: a kind it does not know is a
  ValueError naming it (never a silent atomic merge).

The kind of a resource is the REST mapping the fake clients register (``kinds``), else the
object's own ``kind``.
"""

from __future__ import annotations

import copy
from typing import Any

from samplecontroller.apimachinery import errors, fieldmanager, meta
from samplecontroller.testing.tracker import GroupVersionResource, ObjectTracker

__all__ = ["DEFAULT_FIELD_MANAGER", "FieldManagedObjectTracker"]

DEFAULT_FIELD_MANAGER = "samplecontroller"
"""The manager of writes without a field manager (the server takes the User-Agent's first word)."""


class FieldManagedObjectTracker(ObjectTracker):
    """The ObjectTracker plus managed fields and server-side apply (see the module doc)."""

    default_field_manager: str | None = DEFAULT_FIELD_MANAGER

    def __init__(self, type_converter: fieldmanager.TypeConverter, history: int = 10000) -> None:
        super().__init__(history)
        self.type_converter = type_converter

    def type_schema(self, gvr: GroupVersionResource, obj: Any = None) -> fieldmanager.TypeSchema:
        """How ``gvr``'s kind merges; ValueError naming the kind when the type converter does not know it."""
        kind = self.kinds.get(gvr) or (meta.get_kind(obj) if obj is not None else "")
        found = self.type_converter.schema_for(gvr.group, gvr.version, kind)
        if found is None:
            api_version = f"{gvr.group}/{gvr.version}" if gvr.group else gvr.version
            raise ValueError(f"no type converter knows {api_version} {kind or gvr.resource}: give the fake one "
                             "(a generated package's applyconfigurations.new_type_converter(), "
                             "fieldmanager.SchemaTypeConverter.from_crds, fieldmanager.BuiltinTypeConverter)")
        return found

    def manage_fields(self, gvr: GroupVersionResource, old: dict[str, Any] | None, new: dict[str, Any],
                      requested: Any, subresource: str | None, field_manager: str | None) -> None:
        """A write by ``field_manager`` owns the fields it changed (an Update entry), as on the server;
        without a manager (an apply, computed already; a deletion's bookkeeping) ``requested`` is kept."""
        md = new.setdefault("metadata", {})
        if field_manager is None:
            if requested is None:
                md.pop("managedFields", None)
            else:
                md["managedFields"] = requested
            return
        schema = self.type_schema(gvr, new)
        if old is not None:
            md["managedFields"] = (old.get("metadata") or {}).get("managedFields")
            if requested == []:
                md["managedFields"] = []
        managed = fieldmanager.update_managed_fields(old, new, field_manager, "Update", subresource or "",
                                                     definition_name=schema.definition, schema=schema.schema)
        entries = (managed.get("metadata") or {}).get("managedFields")
        if entries:
            md["managedFields"] = entries
        else:
            md.pop("managedFields", None)

    def apply(self, gvr: GroupVersionResource, applied: Any, namespace: str | None, name: str, *,
              field_manager: str, force: bool = False, subresource: str | None = None) -> dict[str, Any]:
        """Server-side apply ``applied`` (the request body, a wire dict) to object ``name`` as
        ``field_manager``; creates it when absent (not through a subresource: NotFoundError).
        Returns the stored object. StatusErrors: 400 without a manager or for a body that is not
        an object, 409 Conflict (see the module doc), 404, and the tracker's own."""
        if not field_manager:
            raise errors.from_status(errors.new_status(
                400, errors.REASON_BAD_REQUEST, "PATCH, application/apply-patch+yaml requests must have a fieldManager"))
        if not isinstance(applied, dict):
            raise errors.from_status(errors.new_status(
                400, errors.REASON_BAD_REQUEST, "an apply configuration must be a JSON object"))
        with self._lock:
            body = copy.deepcopy(applied)
            body.setdefault("metadata", {})["name"] = name
            schema = self.type_schema(gvr, body)
            try:
                current: dict[str, Any] | None = self.get(gvr, namespace, name)
            except errors.NotFoundError:
                if subresource:
                    raise
                current = None
            result = self._merge(gvr, current, body, field_manager, force, subresource, schema)
            if current is None:
                return self.create(gvr, result, namespace)
            result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            return self.update(gvr, result, namespace, subresource)

    def _merge(self, gvr: GroupVersionResource, current: dict[str, Any] | None, body: dict[str, Any], manager: str,
               force: bool, subresource: str | None, schema: fieldmanager.TypeSchema) -> dict[str, Any]:
        # the main resource of a kind with a status subresource ignores .status; /status only .status
        ignore = ["status"] if (gvr in self.status_subresources and not subresource) else []
        if subresource == "status":
            ignore = [k for k in body if k not in ("apiVersion", "kind", "metadata", "status")]
        try:
            return fieldmanager.apply(current, body, manager, force, schema.definition, schema=schema.schema,
                                      subresource=subresource or "", ignore=ignore)
        except fieldmanager.ApplyConflict as err:
            kind = self.kinds.get(gvr) or meta.get_kind(body)
            raise errors.from_status(errors.new_status(
                409, errors.REASON_CONFLICT, fieldmanager.conflict_message(err.conflicts),
                {"name": meta.get_name(body), "group": gvr.group, "kind": kind, "causes": err.causes()})) from None
        except ValueError as err:
            raise errors.from_status(errors.new_status(400, errors.REASON_BAD_REQUEST, str(err))) from None
