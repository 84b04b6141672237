"""The storage layer of the API server: object semantics, independent of HTTP.

``Core`` implements get/list/create/update/patch/delete (and the status subresource) for every
resource the REST mapper serves, with Kubernetes' generic rules: uid/creationTimestamp/
generation/resourceVersion handling, optimistic concurrency (409 Conflict), generateName,
dryRun, managedFields and server-side apply, fieldValidation Strict/Warn/Ignore, finalizers and
deletionTimestamp, propagation policies (kube-apiserver's generic registry store). What differs
per kind (defaulting, decoding and validation, status reset, delete behaviour) is the kind's
strategy (``strategies.for_resource``); the background controllers (garbage collector,
namespaces, CRDs, the deployment simulator) are ``controllers``, store listeners.

Not simulated: there is no scheduler, kubelet or kube-controller-manager: pods never run (their
log/exec subresources answer as for an unscheduled pod, ephemeral containers are stored only),
Deployments create no ReplicaSets (unless the deployment simulator runs) and ReplicaSets no Pods;
Services get cluster IPs and node ports (``strategies.services``) but no endpoints. (Admission
webhooks are called by the handlers: see ``admission``.)

Every failure is raised as ``APIError`` carrying a Status object. Methods must be called on the
server's event-loop thread (the store is not thread-safe).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apiserver import (
    bodies,
    conversion,
    crdconversion,
    decoding,
    managedfields,
    patching,
    schema,
    strategies,
    validation,
)
from samplecontroller.apiserver.errors import (
    STALE,
    APIError,
    GoRawZero,
    already_exists,
    bad_request,
    conflict,
    details_for,
    invalid,
    not_found,
)
from samplecontroller.apiserver.negotiation import PATCH_APPLY, decode_body
from samplecontroller.apiserver.objects import (
    copy_json,
    deep_get,
    meta_of,
    new_uid,
    now_rfc3339,
    parse_rfc3339,
    random_suffix,
    rfc3339,
    same_time,
)
from samplecontroller.apiserver.patching import require_object
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.storage import Entry, Event, Expired, Page, Store, TooLarge
from samplecontroller.apiserver.warning import go_quote

__all__ = ["CRD_KEY", "NS_KEY", "CRDPlan", "Core"]

log = logging.getLogger(__name__)
_decode = bodies.decode
_encode = bodies.encode

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
NS_KEY = "/namespaces"


def _too_large(err: TooLarge) -> APIError:
    """413 for an object larger than etcd would store (``bodies.MAX_OBJECT_BYTES``).
    kube-apiserver passes etcd's "request is too large" on as a 500; a 4xx says it is the
    client's object that must shrink."""
    return APIError(413, "RequestEntityTooLarge",
                    f"Request entity too large: etcdserver: request is too large (the object is {err.size} bytes, "
                    f"the limit is {err.limit})")


class UndecodablePatch(APIError):
    """A patched object that does not decode (a 400 where apply made it; the patch handler turns
    it into kube's 422 ``"" is invalid: patch: Invalid value: ...``)."""

    def __init__(self, message: str) -> None:
        super().__init__(400, "BadRequest", message)


class CRDPlan(NamedTuple):
    """What a CRD object says that every write of its resources reads: each version's
    ``openAPIV3Schema`` (None when it has none), the storage version's name ("" when none is
    marked) and whether objects convert through a webhook (``crdconversion.strategy``)."""

    crd: dict[str, Any]
    schemas: dict[str, dict[str, Any] | None]
    storage_version: str
    webhook: bool

    @staticmethod
    def of(crd: dict[str, Any]) -> CRDPlan:
        """The plan of the stored CRD object ``crd``."""
        schemas: dict[str, dict[str, Any] | None] = {}
        storage = ""
        for version in (crd.get("spec") or {}).get("versions") or ():
            if not isinstance(version, dict):
                continue
            found = (version.get("schema") or {}).get("openAPIV3Schema")
            schema: dict[str, Any] | None = found if isinstance(found, dict) else None
            name = version.get("name")
            if isinstance(name, str):
                schemas.setdefault(name, schema)  # the first version of a name counts
            if not storage and version.get("storage") and version.get("name"):
                storage = str(version["name"])
        return CRDPlan(crd, schemas, storage, crdconversion.strategy(crd) == "Webhook")


def _same_json(before: Any, after: Any) -> bool:
    """Whether two JSON values are equal and spelled alike (``1``, ``1.0`` and ``true`` are ``==``
    in Python, not in JSON): False when in doubt (keys in another order, a value msgspec cannot
    encode)."""
    if before is None or not bodies.equal(before, after):
        return False
    try:
        return _encode(before) == _encode(after)
    except (TypeError, ValueError):
        return False


class Core:
    """Object semantics over a ``Store`` and a ``RESTMapper`` (see the module docstring).
    ``crds`` holds the stored CRDs by name (kept by ``controllers.crd``)."""

    def __init__(self, store: Store, mapper: RESTMapper) -> None:
        self.store = store
        self.mapper = mapper
        self.crds: dict[str, dict[str, Any]] = {}
        self._plans: dict[str, CRDPlan] = {}
        self._stored = _StoredView(store)

    # ------------------------------------------------------------------ reads

    @property
    def rev(self) -> int:
        """The store's current revision (the resourceVersion a list made now has)."""
        return self.store.rev

    def get(self, res: Resource, ns: str, name: str) -> dict[str, Any]:
        entry = self.store.get(res.storage_key, ns, name)
        if entry is None:
            raise not_found(res, name)
        return entry.obj


    def get_entry(self, res: Resource, ns: str, name: str) -> Entry | None:
        """The stored entry of ``name`` (None if there is none)."""
        return self.store.get(res.storage_key, ns if res.namespaced else "", name)

    def list_entries(self, res: Resource, ns: str | None) -> list[tuple[tuple[str, str], Entry]]:
        """The current ((namespace, name), entry) pairs of ``res`` (in ``ns``, or everywhere)."""
        return self.store.list(res.storage_key, ns if res.namespaced else None)

    def snapshot(self, res: Resource, ns: str | None, rev: int) -> list[tuple[tuple[str, str], Entry]]:
        """As ``list_entries`` at revision ``rev``; 410 Expired once it is compacted away."""
        try:
            return self.store.snapshot(res.storage_key, ns, rev)
        except Expired:
            raise APIError(410, "Expired", f"too old resource version: {rev} ({self.store.compacted})") from None

    def seek(self, res: Resource, ns: str | None, rev: int, after: tuple[str, str] | None) -> Page:
        """The objects of ``res`` (in ``ns``) at revision ``rev`` after key ``after``, in key
        order (``Store.seek``: one page of a paginated list). 410 Expired once ``rev`` is compacted."""
        try:
            return self.store.seek(res.storage_key, ns if res.namespaced else None, rev, after)
        except Expired:
            raise APIError(410, "Expired", f"too old resource version: {rev} ({self.store.compacted})") from None

    def check_namespace(self, res: Resource, ns: str, creating: bool, name: str = "") -> None:
        """404 when the namespace is missing; 403 (as the NamespaceLifecycle admission plugin
        answers) when ``creating`` ``name`` in a namespace that is being terminated."""
        if not res.namespaced:
            return
        entry = self.store.get(NS_KEY, "", ns)
        if entry is None:
            raise APIError(404, "NotFound", f'namespaces "{ns}" not found', {"name": ns, "kind": "namespaces"})
        if creating and (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
            details = details_for(res, name)
            details["causes"] = [{"reason": "NamespaceTerminating", "message": f"namespace {ns} is being terminated",
                                  "field": "metadata.namespace"}]
            raise APIError(403, "Forbidden",
                           f'{res.group_resource} "{name}" is forbidden: unable to create new content in namespace {ns} '
                           "because it is being terminated", details)

    def crd_for(self, res: Resource) -> dict[str, Any] | None:
        return self.crds.get(res.crd_name) if res.crd_name else None

    def crd_plan(self, res: Resource) -> CRDPlan | None:
        """What the writes of ``res`` read of its CRD, worked out once per stored CRD object (as
        kube-apiserver's CRD handler keeps a serving info per CRD): None when ``res`` has no CRD."""
        name = res.crd_name
        if not name:
            return None
        crd = self.crds.get(name)
        if crd is None:
            self._plans.pop(name, None)
            return None
        plan = self._plans.get(name)
        if plan is None or plan.crd is not crd:  # a new CRD object: the CRD was written (stored objects are not mutated)
            plan = self._plans[name] = CRDPlan.of(crd)
        return plan

    def version_schema(self, res: Resource) -> dict[str, Any] | None:
        plan = self.crd_plan(res)
        return plan.schemas.get(res.version) if plan is not None else None

    def _put(self, res: Resource, obj: dict[str, Any]) -> Event:
        """Store a validated object (413 when it is larger than etcd would store)."""
        try:
            return self.store.put(res.storage_key, obj, max_bytes=bodies.MAX_OBJECT_BYTES)
        except TooLarge as err:
            raise _too_large(err) from None

    # ------------------------------------------------------------------ preparation

    def _validate(self, res: Resource, obj: dict[str, Any], old: dict[str, Any] | None,
                  field_validation: str, patching: bool = False, stored_but: str = "") -> list[str]:
        """Prune/default/validate ``obj`` in place; returns warnings; raises 400/422.

        Decoding errors of a create or update body say which kind could not be decoded (``Foo in
        version "v1" cannot be handled as a Foo: ...``); those of a patched object (``patching``)
        do not, as in kube-apiserver's patch handler. ``stored_but``: every top-level field of
        ``obj`` except this one is the stored object's (a status update: its metadata too, the
        managed fields aside, which the server made), already decoded and defaulted when it was
        stored: only that field is decoded again, that field and ``metadata`` defaulted; the kind's
        status validation (``Strategy.validate_status``) replaces its whole one."""
        prefix = "" if patching else f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
        name = str(meta_of(obj).get("name") or meta_of(obj).get("generateName") or "")
        errors: list[FieldError] = []
        sch = self.version_schema(res)
        strategy = strategies.for_resource(res)
        warnings = self._decode(res, strategy, obj, old, sch, stored_but, field_validation, prefix)
        if stored_but:  # what defaulting adds beside them (a spec the view lacks) is dropped
            fresh = {k: v for k, v in obj.items() if k in ("apiVersion", "kind", "metadata", stored_but)}
            strategy.default(res, fresh, old is None, sch)
            obj["metadata"] = fresh["metadata"]
            if stored_but in fresh:
                obj[stored_but] = fresh[stored_but]
            else:
                obj.pop(stored_but, None)
            if stored_but == "status" and old is not None:
                strategy.drop_disabled_status(res, obj, old, self.mapper.emulated_minor)
        else:
            strategy.default(res, obj, old is None, sch)
            strategy.drop_disabled(res, obj, old, self.mapper.emulated_minor)
        if stored_but == "status" and old is not None:
            errors += strategy.validate_status(res, obj, old, sch)
        else:
            errors += strategy.validate(res, obj, sch)
            errors += strategy.validate_gated(res, obj, old, self.mapper.emulated_minor)
        errors = validation.validate_object_meta(obj, res.namespaced) + errors
        warnings += validation.finalizer_warnings(obj, old)
        if old is not None:
            errors += validation.validate_update(old, obj)
            errors += self._finalizer_rules(old, obj)
        rule_errors, rule_warnings = strategy.validate_rules(res, obj, old, sch, errors)
        errors, warnings = errors + rule_errors, warnings + rule_warnings
        errors += strategy.validate_extra(obj, old)
        errors += strategy.validate_compatibility(obj, old, self.mapper.emulated_minor)
        if errors:
            raise invalid(res, name, errors)
        return warnings

    def _decode(self, res: Resource, strategy: strategies.Strategy, obj: dict[str, Any], old: dict[str, Any] | None,
                sch: dict[str, Any] | None, stored_but: str, field_validation: str, prefix: str) -> list[str]:
        """``Strategy.decode`` of ``obj`` in place; returns the unknown fields' warnings (400 under
        Strict, or for a value that cannot be decoded). Of an update of a built-in kind, only
        ``metadata`` and the top-level fields whose values differ from the stored ``old``'s: an
        equal one was decoded by the same definition when it was stored, decoding it again changes
        nothing (a Deployment's revision annotation does not decode its pod template again; a
        custom resource's schema differs between versions and changes with its CRD, so its fields
        are all pruned again); of a status update only ``stored_but``."""
        keys: set[str] | None = None
        if stored_but:
            keys = {"apiVersion", "kind", stored_but}
        elif old is not None and not res.is_custom:
            keys = {k for k, v in obj.items()
                    if k in ("apiVersion", "kind", "metadata") or v is None or not _same_json(old.get(k), v)}
        part = obj if keys is None else {k: v for k, v in obj.items() if k in keys}
        try:
            removed = strategy.decode(res, part, sch)
        except decoding.DecodeError as err:
            text = str(err)  # decoding.normalize says which kind already: once, as Go does
            if not prefix:  # a patched object: the patch handler says which (``patch``), apply does not
                raise UndecodablePatch(text) from None
            raise bad_request(text if text.startswith(prefix) else prefix + text) from None
        if part is not obj:
            for key in keys or ():
                if key in part:
                    obj[key] = part[key]
                else:
                    obj.pop(key, None)
        return self._unknown_fields(removed, field_validation, prefix)

    def _allocate(self, res: Resource, strategy: strategies.Strategy, obj: dict[str, Any],
                  old: dict[str, Any] | None) -> None:
        """The strategy's allocations (``Strategy.allocate``); 422 when a requested value is taken."""
        errors = strategy.allocate(obj, old, self._stored)
        if errors:
            raise invalid(res, str(meta_of(obj).get("name") or ""), errors)

    @staticmethod
    def _unknown_fields(removed: list[str], field_validation: str, prefix: str = "") -> list[str]:
        """The warnings for pruned unknown fields; raises 400 under fieldValidation=Strict."""
        if removed and field_validation == "Strict":
            text = ", ".join(f"unknown field {go_quote(p)}" for p in removed)
            raise bad_request(f"{prefix}strict decoding error: {text}")
        return [] if field_validation == "Ignore" else [f"unknown field {go_quote(p)}" for p in removed]

    @staticmethod
    def _finalizer_rules(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
        if not deep_get(old, "metadata", "deletionTimestamp"):
            return []
        before = set(deep_get(old, "metadata", "finalizers") or ())
        after = set(deep_get(new, "metadata", "finalizers") or ())
        if after - before:
            return [schema.forbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted, "
                                     f"found new finalizers {sorted(after - before)!r}".replace("'", '"'))]
        return []

    def _normalize(self, res: Resource, ns: str, obj: dict[str, Any]) -> None:
        """apiVersion/kind/namespace checks shared by create and update (400 on mismatch)."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version not in (None, "", res.group_version):  # no other version, custom resources' neither
            raise bad_request(f"the API version in the data ({api_version}) does not match the expected API version "
                              f"({res.group_version})")
        if kind not in (None, "", res.kind):
            raise bad_request(f"the kind in the data ({kind}) does not match the expected kind ({res.kind})")
        obj["apiVersion"] = res.group_version
        obj["kind"] = res.kind
        meta = meta_of(obj)
        if res.namespaced:
            body_ns = meta.get("namespace")
            if body_ns not in (None, "") and body_ns != ns:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        meta.pop("selfLink", None)

    def _stored_api_version(self, res: Resource, obj: dict[str, Any]) -> None:
        """Set a custom resource's apiVersion to its CRD's storage version, as etcd holds it
        (conversion None: versions differ only in apiVersion), so that the version a client
        writes in is not a change of the object. Under conversion Webhook the object stays in
        the request's version: the handlers convert it (``handlers.converting``)."""
        plan = self.crd_plan(res)
        if plan is not None and not plan.webhook and plan.storage_version:
            obj["apiVersion"] = f"{res.group}/{plan.storage_version}"

    def _definition(self, res: Resource) -> str | None:
        if res.is_custom:
            return None
        return openapi_schemas.definition_name_for_gvk(res.group, res.version, res.kind)

    def _managed(self, res: Resource, old: dict[str, Any] | None, new: dict[str, Any], manager: str,
                 subresource: str) -> dict[str, Any]:
        try:
            if old is None:
                # create: the manager owns every field (no copy of the object needed)
                new["metadata"].pop("managedFields", None)
                fields = managedfields.fields_v1(new, self._definition(res), self.version_schema(res))
                if fields:
                    entry: dict[str, Any] = {"manager": manager, "operation": "Update", "apiVersion": res.group_version,
                                             "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": fields}
                    new["metadata"]["managedFields"] = [entry]
                return new
            return managedfields.update_managed_fields(old, new, manager, "Update", subresource,
                                                       definition_name=self._definition(res),
                                                       schema=self.version_schema(res), in_place=True)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            log.debug("managedFields update failed", exc_info=True)
            return new

    # ------------------------------------------------------------------ create

    def create(self, res: Resource, ns: str, body: Any, *, manager: str = "", dry_run: bool = False,
               field_validation: str = "Warn", managed_done: bool = False,
               patching: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Create an object; returns (the stored object, warnings)."""
        obj = require_object(body)
        self._normalize(res, ns, obj)
        meta = obj["metadata"]
        self.check_namespace(res, ns, creating=True, name=str(meta.get("name") or ""))
        if res.is_custom:
            crd = self.crd_for(res)
            if crd is not None and deep_get(crd, "metadata", "deletionTimestamp"):
                raise APIError(405, "MethodNotAllowed",
                               "create not allowed while custom resource definition is terminating")
        if not meta.get("name") and isinstance(meta.get("generateName"), str) and meta["generateName"]:
            meta["name"] = meta["generateName"] + random_suffix()
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            meta.pop(key, None)
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now_rfc3339()
        strategy = strategies.for_resource(res)
        if strategy.tracks_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if "status" in res.subresources:
            strategy.reset_status(res.group, res.version, res.kind, obj)
        warnings = self._validate(res, obj, None, field_validation, patching)
        name = str(meta.get("name"))
        if self.store.get(res.storage_key, ns if res.namespaced else "", name) is not None:
            raise already_exists(res, name)
        self._allocate(res, strategy, obj, None)
        strategy.finish_create(obj)
        if res.is_custom:
            self._stored_api_version(res, obj)
        if not managed_done:
            obj = self._managed(res, None, obj, manager, "")
        if dry_run:
            obj["metadata"]["resourceVersion"] = ""
            return obj, warnings
        event = self._put(res, obj)
        return event.entry.obj, warnings

    # ------------------------------------------------------------------ update

    def update(self, res: Resource, ns: str, name: str, body: Any, *, subresource: str = "", manager: str = "",
               dry_run: bool = False, field_validation: str = "Warn", managed_done: bool = False,
               allow_create: bool = False, patching: bool = False,
               old_view: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool, list[str]]:
        """Replace an object (or its status); returns (object, created, warnings).

        ``old_view``: the stored object as the request's version shows it, when it is stored in
        another version (conversion Webhook: converted by the handler); used in place of the
        stored object, and the update must be a dry run (the handler stores the converted result)."""
        obj = require_object(body)
        self._normalize(res, ns, obj)
        meta = obj["metadata"]
        if meta.get("name") not in (None, "", name):
            raise bad_request("the name of the object "
                              f"({meta.get('name')}) does not match the name on the URL ({name})")
        meta["name"] = name
        entry = self.store.get(res.storage_key, ns if res.namespaced else "", name)
        if entry is None:
            if allow_create and not subresource:
                created, warnings = self.create(res, ns, obj, manager=manager, dry_run=dry_run,
                                                field_validation=field_validation, managed_done=managed_done,
                                                patching=patching)
                return created, True, warnings
            raise not_found(res, name)
        old = entry.obj if old_view is None else old_view
        rv = meta.get("resourceVersion")
        if rv in (None, ""):
            if res.is_custom:
                raise invalid(res, name, [schema.invalid("metadata.resourceVersion", GoRawZero(),
                                                         "must be specified for an update")])
        elif str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(res, name, STALE)
        new = self._replacement(res, old, obj, subresource, managed_done, entry.raw if old is entry.obj else None)
        new_meta = new["metadata"]
        strategy = strategies.for_resource(res)
        strategy.prepare_for_update(new, old, subresource)
        warnings = self._validate(res, new, old, field_validation, patching,
                                  stored_but="status" if subresource == "status" and old_view is None else "")
        if not subresource:
            self._allocate(res, strategy, new, old)
        if res.is_custom:
            self._stored_api_version(res, new)
        if strategy.tracks_generation and self._spec_changed(res, old, new):
            new_meta["generation"] = int(old["metadata"].get("generation") or 0) + 1
        if not managed_done:
            new = self._managed(res, old, new, manager, subresource)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if self._same(old, new):
            return old, False, warnings
        if dry_run:
            return new, False, warnings
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") \
                and not new["metadata"].get("deletionGracePeriodSeconds"):  # a graceful deletion is the node's
            event = self.store.delete(res.storage_key, ns if res.namespaced else "", name)
            assert event is not None
            return event.entry.obj, False, warnings
        event = self._put(res, new)
        return event.entry.obj, False, warnings

    @staticmethod
    def _replacement(res: Resource, old: dict[str, Any], obj: dict[str, Any], subresource: str,
                     managed_done: bool, old_raw: bytes | None = None) -> dict[str, Any]:
        """The object an update would store before validation: the request's object (or, for the
        status subresource, the stored object with the request's status), with the fields the
        server owns (uid, creationTimestamp, deletion fields, generation; status unless it is the
        status subresource) taken from the stored object. ``old_raw``: ``old``'s stored JSON when
        ``old`` is the stored object, decoded for the copy instead of encoding ``old`` again."""
        meta = obj["metadata"]
        new: dict[str, Any]
        if subresource == "ephemeralcontainers":
            new = copy_json(old) if old_raw is None else _decode(old_raw)
            new.setdefault("spec", {})["ephemeralContainers"] = deep_get(obj, "spec", "ephemeralContainers")
            if new["spec"]["ephemeralContainers"] is None:
                del new["spec"]["ephemeralContainers"]
        elif subresource in ("status", "approval"):  # approval: a CSR's conditions, in its status
            new = copy_json(old) if old_raw is None else _decode(old_raw)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            if managed_done:
                new["metadata"]["managedFields"] = meta.get("managedFields")
        else:
            new = obj
            if "status" in res.subresources:
                if "status" in old:
                    new["status"] = copy_json(old["status"])
                else:
                    new.pop("status", None)
        new_meta = new["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            if key in old["metadata"]:
                if key in ("uid", "creationTimestamp") and new_meta.get(key) not in (None, "", old["metadata"][key]) \
                        and not same_time(new_meta.get(key), old["metadata"][key]):
                    continue  # validate_update reports it
                new_meta[key] = old["metadata"][key]
            else:
                new_meta.pop(key, None)
        if not managed_done and new_meta.get("managedFields") is None and old["metadata"].get("managedFields"):
            new_meta["managedFields"] = old["metadata"]["managedFields"]
        return new

    @staticmethod
    def _same(old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether a write changes nothing: the managed fields' timestamps alone are no change, but
        a manager gaining (or losing) fields is, as kube-apiserver's
        IgnoreManagedFieldsTimestampsTransformer (an apply of values already there shares them)."""
        if any(not bodies.equal(old.get(key), new.get(key)) for key in old.keys() | new.keys() if key != "metadata"):
            return False  # (a status write: no copies of the metadata to compare)

        def strip(o: dict[str, Any]) -> dict[str, Any]:
            m = dict(o.get("metadata") or {})
            m["managedFields"] = [{k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e
                                  for e in m.get("managedFields") or []]
            m.pop("resourceVersion", None)
            return {**o, "metadata": m}
        return bodies.equal(strip(old), strip(new))

    def _spec_changed(self, res: Resource, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether an update changes what metadata.generation counts: everything but metadata (and
        status where it is a subresource, or for built-in kinds), compared as one version (the
        version an object is stored or written in is no change)."""
        ignore = {"metadata", "status"} if ("status" in res.subresources or not res.is_custom) else {"metadata"}
        ignore |= {"apiVersion", "kind"}
        keys = (set(old) | set(new)) - ignore
        return any(not bodies.equal(old.get(k), new.get(k)) for k in keys)

    # ------------------------------------------------------------------ patch

    def patch(self, res: Resource, ns: str, name: str, patch_type: str, raw: bytes, *, subresource: str = "",
              manager: str = "", dry_run: bool = False, force: bool = False,
              field_validation: str = "Warn", served: Resource | None = None,
              old_view: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool, list[str]]:
        """Apply a patch of ``patch_type`` (a media type); returns (object, created, warnings).

        ``old_view``: as for ``update`` (the patch applies to it; a dry run).

        ``served``: the resource of the URL when objects of ``res`` are stored in another version
        (``conversion``): the patch applies to the object as ``served`` shows it, and the result is
        converted back and stored as ``res`` (apply patches are refused there: 405)."""
        store_ns = ns if res.namespaced else ""
        entry = self.store.get(res.storage_key, store_ns, name)
        view = served or res
        if patch_type == PATCH_APPLY:
            if served is not None:
                raise APIError(405, "MethodNotAllowed", f"the embedded API server does not apply {view.group_version} "
                               f"{view.kind} objects (stored as another version): apply them in {res.group_version}")
            return self._apply(res, ns, name, raw, entry, subresource=subresource, manager=manager,
                               dry_run=dry_run, force=force, field_validation=field_validation, old_view=old_view)
        if entry is None:
            raise not_found(view, name)
        current = conversion.from_storage(entry.copy() if old_view is None else copy_json(old_view), view.version)
        current["apiVersion"] = view.group_version  # the object as the URL's version shows it
        patched = patching.apply_patch(view, patch_type, raw, current, self._definition(view))
        if served is not None and isinstance(patched, dict):
            patched = conversion.to_storage({**patched, "apiVersion": view.group_version})
        patched_meta: dict[str, Any] = meta_of(patched)
        if patched_meta.get("resourceVersion") in (None, ""):
            meta_of(patched)["resourceVersion"] = entry.obj["metadata"]["resourceVersion"]
        if patched_meta.get("name") in (None, ""):
            meta_of(patched)["name"] = name
        try:
            obj, _, warnings = self.update(res, ns, name, patched, subresource=subresource, manager=manager,
                                           dry_run=dry_run, field_validation=field_validation, patching=True,
                                           old_view=old_view)
        except UndecodablePatch as err:  # kube's patch handler: 422 naming the patched object, no kind or name
            value = json.dumps(patched, separators=(",", ":"), ensure_ascii=False)
            cause = schema.invalid("patch", value, str(err))
            raise APIError(422, "Invalid", schema.format_invalid_message("", "", [cause]),
                           {"causes": schema.status_details_causes([cause])}) from None
        return obj, False, warnings

    def _apply(self, res: Resource, ns: str, name: str, raw: bytes, entry: Any, *, subresource: str, manager: str,
               dry_run: bool, force: bool, field_validation: str,
               old_view: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool, list[str]]:
        if not manager:
            raise bad_request("PATCH, application/apply-patch+yaml requests must have a fieldManager")
        applied = require_object(decode_body(raw, PATCH_APPLY))
        meta: dict[str, Any] = meta_of(applied)
        if meta.get("name") not in (None, "", name):
            raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
        self._normalize(res, ns, applied)
        meta_of(applied)["name"] = name
        ignore = ["status"] if ("status" in res.subresources and not subresource) else []
        if subresource == "status":
            ignore = [k for k in applied if k not in ("apiVersion", "kind", "metadata", "status")]
        try:
            current = (entry.obj if old_view is None else old_view) if entry else None
            result = managedfields.apply(current, applied, manager, force, self._definition(res),
                                         schema=self.version_schema(res), subresource=subresource, ignore=ignore)
        except managedfields.ApplyConflict as err:
            details = details_for(res, name, res.kind)
            details["causes"] = err.causes()
            raise APIError(409, "Conflict", managedfields.conflict_message(err.conflicts), details) from None
        except ValueError as err:
            raise bad_request(str(err)) from None
        if entry is None:
            if subresource:
                raise not_found(res, name)
            obj, warnings = self.create(res, ns, result, manager=manager, dry_run=dry_run,
                                        field_validation=field_validation, managed_done=True, patching=True)
            return obj, True, warnings
        meta_of(result)["resourceVersion"] = entry.obj["metadata"]["resourceVersion"]
        obj, _, warnings = self.update(res, ns, name, result, subresource=subresource, manager=manager,
                                       dry_run=dry_run, field_validation=field_validation, managed_done=True,
                                       patching=True, old_view=old_view)
        return obj, False, warnings

    # ------------------------------------------------------------------ converted writes

    def store_converted(self, res: Resource, obj: dict[str, Any], expected: Entry | None) -> dict[str, Any]:
        """Store ``obj``: what a dry-run create or update prepared in the request's version,
        converted to the storage version by the CRD's conversion webhook (``handlers.converting``).
        ``expected`` is the entry the update was prepared from (None: a create); when the stored
        object changed meanwhile this is a 409 Conflict (the handler prepares it again), when one
        was created meanwhile a 409 AlreadyExists. A finalized object being deleted is removed."""
        meta = meta_of(obj)
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        current = self.store.get(res.storage_key, ns, name)
        if expected is None:
            if current is not None:
                raise already_exists(res, name)
        elif current is None:
            raise not_found(res, name)
        elif current.obj["metadata"]["resourceVersion"] != expected.obj["metadata"]["resourceVersion"]:
            raise conflict(res, name, STALE)
        if expected is not None and meta.get("deletionTimestamp") and not meta.get("finalizers") \
                and not meta.get("deletionGracePeriodSeconds"):
            event = self.store.delete(res.storage_key, ns, name)
            assert event is not None
            return event.entry.obj
        return self._put(res, obj).entry.obj

    # ------------------------------------------------------------------ delete

    def delete(self, res: Resource, ns: str, name: str, options: Mapping[str, Any],
               dry_run: bool = False) -> tuple[int, dict[str, Any]]:
        """Delete with finalizers/propagation; returns (HTTP code, object or Status)."""
        store_ns = ns if res.namespaced else ""
        entry = self.store.get(res.storage_key, store_ns, name)
        if entry is None:
            raise not_found(res, name)
        self._check_preconditions(res, name, entry.obj, options.get("preconditions"))
        strategies.for_resource(res).check_delete(res, entry.obj)
        policy = self._policy(res, options)
        obj = entry.copy()
        meta = obj["metadata"]
        finalizers: list[str] = list(meta.get("finalizers") or [])
        if policy == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
            finalizers = [f for f in finalizers if f != "foregroundDeletion"]
        elif policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
            finalizers = [f for f in finalizers if f != "orphan"]
        strategy = strategies.for_resource(res)
        if strategy.deletes_in_phases:
            return self._delete_in_phases(res, entry.obj, obj, finalizers, dry_run)
        graceful = self._graceful(res, entry.obj, obj, finalizers, strategy.grace_period(entry.obj, options), dry_run)
        if graceful is not None:
            return graceful
        if finalizers:
            changed = finalizers != list(meta.get("finalizers") or []) or not meta.get("deletionTimestamp")
            meta["finalizers"] = finalizers
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = now_rfc3339()
                meta["deletionGracePeriodSeconds"] = 0
                if strategy.tracks_generation:
                    meta["generation"] = int(meta.get("generation") or 0) + 1
            if dry_run or not changed:
                return 200, entry.obj if not dry_run else obj
            strategy.on_terminating(obj)
            event = self.store.put(res.storage_key, obj)
            code = 202 if options.get("orphanDependents") is False else 200
            return code, event.entry.obj
        if dry_run:
            gone = obj
        else:
            deleted = self.store.delete(res.storage_key, store_ns, name)
            assert deleted is not None
            gone = deleted.entry.obj
        if strategy.returns_deleted:  # the registry's ReturnDeletedObject, dry run or not
            return 200, gone
        details = details_for(res, name)
        details["uid"] = meta.get("uid")
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def _graceful(self, res: Resource, current: dict[str, Any], obj: dict[str, Any], finalizers: list[str],
                  grace: int | None, dry_run: bool) -> tuple[int, dict[str, Any]] | None:
        """Graceful deletion (the generic store's BeforeDelete): a positive ``grace`` marks the
        object with deletionTimestamp = now + grace and deletionGracePeriodSeconds instead of
        deleting it; on an object already terminating only a shorter period changes anything.
        None when the delete goes on at once (no or zero grace, or a zero/unset pending period)."""
        meta = obj["metadata"]
        pending = meta.get("deletionGracePeriodSeconds")
        if meta.get("deletionTimestamp"):
            if not pending or grace is None or (grace == 0 and not finalizers):
                return None
            if grace >= pending:
                return 200, current
            expires = parse_rfc3339(str(meta["deletionTimestamp"])) - pending + grace  # grace 0: finalizers hold it
        elif not grace:
            return None
        else:
            expires = time.time() + grace
            if isinstance(meta.get("generation"), int) and meta["generation"] > 0:
                meta["generation"] += 1  # rest.BeforeDelete: the first graceful deletion bumps it
        meta["deletionTimestamp"] = rfc3339(expires)
        meta["deletionGracePeriodSeconds"] = grace
        if finalizers:
            meta["finalizers"] = finalizers
        if dry_run:
            return 200, obj
        return 200, self.store.put(res.storage_key, obj).entry.obj

    def _check_preconditions(self, res: Resource, name: str, obj: dict[str, Any], pre: Any) -> None:
        if not isinstance(pre, dict):
            return
        meta = obj["metadata"]
        uid, rv = pre.get("uid"), pre.get("resourceVersion")
        if uid and uid != meta.get("uid"):
            raise conflict(res, name, f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}")
        if rv and rv != meta.get("resourceVersion"):
            raise conflict(res, name, f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                      f"ResourceVersion in object meta: {meta.get('resourceVersion')}")

    @staticmethod
    def _policy(res: Resource, options: Mapping[str, Any]) -> str:
        policy = options.get("propagationPolicy")
        orphan = options.get("orphanDependents")
        if policy not in (None, "", "Orphan", "Background", "Foreground"):
            raise APIError(422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                           f'"{policy}": supported values: "Foreground", "Background", "Orphan", "nil"')
        if policy and orphan is not None:
            raise APIError(422, "Invalid", "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: "
                           f'"{policy}": orphanDependents and deletionPropagation cannot be both set')
        if policy:
            return str(policy)
        if orphan is True:
            return "Orphan"
        return "Background"

    def _delete_in_phases(self, res: Resource, current: dict[str, Any], obj: dict[str, Any], finalizers: list[str],
                          dry_run: bool) -> tuple[int, dict[str, Any]]:
        """A delete that only marks the object terminating (a namespace: its controller removes it)."""
        meta = obj["metadata"]
        if dry_run:
            return 200, obj
        if meta.get("deletionTimestamp"):
            return 200, current
        meta["deletionTimestamp"] = now_rfc3339()
        meta["deletionGracePeriodSeconds"] = 0
        meta["finalizers"] = finalizers
        if not meta["finalizers"]:
            meta.pop("finalizers")
        strategies.for_resource(res).on_terminating(obj)
        event = self.store.put(res.storage_key, obj)
        return 200, event.entry.obj

    def delete_collection(self, res: Resource, ns: str | None, names: list[str], options: Mapping[str, Any],
                          dry_run: bool = False) -> None:
        for name in names:
            try:
                self.delete(res, ns or "", name, options, dry_run)
            except APIError as err:
                if err.code != 404:
                    raise

    def finalize(self, res: Resource, name: str, body: Any) -> dict[str, Any]:
        """The namespace finalize subresource: replace ``spec.finalizers`` (nothing else)."""
        entry = self.store.get(res.storage_key, "", name)
        if entry is None:
            raise not_found(res, name)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        new = entry.copy()
        spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
        new["spec"] = {"finalizers": list(spec.get("finalizers") or [])} if spec.get("finalizers") else {}
        return self.store.put(res.storage_key, new).entry.obj


class _StoredView:
    """``strategies.base.Stored`` over the store: what allocation and admission read."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __call__(self, skey: str) -> Iterator[dict[str, Any]]:
        return (e.obj for _, e in self._store.list(skey, None))

    def get(self, skey: str, ns: str, name: str) -> dict[str, Any] | None:
        entry = self._store.get(skey, ns, name)
        return entry.obj if entry is not None else None
