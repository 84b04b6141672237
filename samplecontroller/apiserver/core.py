"""The API server's object semantics, independent of HTTP.

``Core`` implements create/update/patch/delete (and status/scale subresources) for every
registered resource with Kubernetes' rules: uid/creationTimestamp/generation/resourceVersion
handling, optimistic concurrency (409 Conflict), generateName, dryRun, managedFields and
server-side apply, custom-resource pruning/defaulting/structural validation with
fieldValidation Strict/Warn/Ignore, finalizers and deletionTimestamp, propagation policies,
and the background controllers a real cluster runs: the garbage collector (background,
foreground with blockOwnerDeletion, orphan), the namespace controller (deleting a namespace
removes its contents), the CRD controllers (NamesAccepted/Established conditions, discovery
updated at once, deleting a CRD deletes its objects first) and the optional deployment-status
simulator.

Not simulated: there is no scheduler, kubelet or kube-controller-manager: pods never run (their
log/exec subresources answer as for an unscheduled pod, ephemeral containers are stored only),
Deployments create no ReplicaSets and ReplicaSets no Pods; Services get no cluster IP or
endpoints. (Admission webhooks are called by the web layer: see ``admission``.) Built-in kinds get the
upstream defaulting ported in ``strategies.defaults``.

Every failure is raised as ``APIError`` carrying a Status object. Methods must be called on the
server's event-loop thread (the store is not thread-safe); the controllers run as loop callbacks.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec

from samplecontroller.apimachinery import openapi_schemas
from samplecontroller.apimachinery.errors import new_status
from samplecontroller.apimachinery.jsonpatch import PatchError, apply_patch
from samplecontroller.apimachinery.mergepatch import apply_merge_patch
from samplecontroller.apimachinery.strategicpatch import apply_strategic_merge_patch
from samplecontroller.apiserver import (
    bodies,
    cluster,
    decoding,
    managedfields,
    protobuf,
    schema,
    strategies,
    validation,
)
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.storage import Entry, Event, Store

__all__ = ["APIError", "Core", "now_rfc3339"]

log = logging.getLogger(__name__)
_decode = msgspec.json.Decoder().decode

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
NS_KEY = "/namespaces"
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_GENERATION_KINDS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apiextensions.k8s.io", "CustomResourceDefinition"),
                     ("apps", "DaemonSet"), ("apps", "StatefulSet"), ("", "ReplicationController"), ("batch", "Job"),
                     ("batch", "CronJob"), ("policy", "PodDisruptionBudget"), ("autoscaling", "HorizontalPodAutoscaler"),
                     ("networking.k8s.io", "Ingress"), ("networking.k8s.io", "NetworkPolicy")}
_RETURNS_DELETED = {"/pods", "/namespaces"}
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
PATCH_JSON = "application/json-patch+json"
PATCH_MERGE = "application/merge-patch+json"
PATCH_STRATEGIC = "application/strategic-merge-patch+json"
PATCH_APPLY = "application/apply-patch+yaml"
MAX_JSON_PATCH_OPERATIONS = 10_000


class APIError(Exception):
    """An API failure: ``status`` is the Status object, ``code`` the HTTP code."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = new_status(code, reason, message, details)
        if code == 404 and "details" not in self.status:
            self.status["details"] = {}  # clients read details.name of every 404 (kubectl debug)


_clock: list[Any] = [0, ""]


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with second precision (cached per second)."""
    now = int(time.time())
    if _clock[0] != now:
        _clock[0] = now
        _clock[1] = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_clock[1])


def _details(res: Resource, name: str, kind: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "kind": kind or res.plural}
    if res.group:
        out["group"] = res.group
    return out


def not_found(res: Resource, name: str) -> APIError:
    return APIError(404, "NotFound", f'{res.group_resource} "{name}" not found', _details(res, name))


def already_exists(res: Resource, name: str) -> APIError:
    return APIError(409, "AlreadyExists", f'{res.group_resource} "{name}" already exists', _details(res, name))


def conflict(res: Resource, name: str, why: str) -> APIError:
    return APIError(409, "Conflict", f'Operation cannot be fulfilled on {res.group_resource} "{name}": {why}',
                    _details(res, name))


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def invalid(res: Resource, name: str, errors: list[FieldError]) -> APIError:
    details = _details(res, name, res.kind)
    details["causes"] = schema.status_details_causes(errors)
    return APIError(422, "Invalid", schema.format_invalid_message(res.kind_group, name, errors), details)


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def decode_body(body: bytes, content_type: str) -> Any:
    """JSON (also when no content type is given) or YAML; ``APIError`` 400/415 otherwise.
    Values nested deeper than ``bodies.MAX_DEPTH`` and YAML beyond go-yaml's alias limits are
    400s (see ``bodies``)."""
    ctype = content_type.split(";")[0].strip().lower()
    if ctype in ("", "application/json", "*/*", "text/plain"):
        return _decode_json(body)
    if ctype == "application/vnd.kubernetes.protobuf":
        try:
            value = protobuf.decode(body)
            bodies.check_depth(value)
            return value
        except (ValueError, RecursionError) as err:
            raise bad_request(f"error decoding protobuf request body: {err}") from None
    if ctype in ("application/yaml", "application/x-yaml", "text/yaml", PATCH_APPLY):
        if body.lstrip()[:1] in (b"{", b"["):
            try:  # JSON is YAML: the fast path for what kubectl sends
                value = _decode(body)
                bodies.check_depth(value, body)
                return value
            except (msgspec.DecodeError, RecursionError, bodies.BodyError):
                pass
        try:
            return bodies.load_yaml(body)
        except bodies.BodyError as err:
            raise bad_request(str(err)) from None
    raise APIError(415, "UnsupportedMediaType",
                   f"the body of the request was in an unknown format - accepted media types include: "
                   f"application/json, application/yaml (got {ctype!r})")


def _decode_json(body: bytes) -> Any:
    try:
        value = _decode(body)
    except RecursionError:
        raise bad_request(f"error decoding request body: {bodies.depth_error()}") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as err:
        raise bad_request(f"error decoding request body: {err}") from None
    try:
        bodies.check_depth(value, body)
    except bodies.BodyError as err:
        raise bad_request(f"error decoding request body: {err}") from None
    return value


def _check_size(obj: dict[str, Any]) -> None:
    """413 if ``obj`` is larger than etcd would store (``bodies.MAX_OBJECT_BYTES``).
    kube-apiserver passes etcd's "request is too large" on as a 500; a 4xx says it is the
    client's object that must shrink."""
    size = len(msgspec.json.encode(obj))
    if size > bodies.MAX_OBJECT_BYTES:
        raise APIError(413, "RequestEntityTooLarge",
                       f"Request entity too large: etcdserver: request is too large (the object is {size} bytes, "
                       f"the limit is {bodies.MAX_OBJECT_BYTES})")


def _require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    return body


def _deep_get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _same_time(a: Any, b: Any) -> bool:
    """Whether two RFC 3339 timestamps name the same second (``Z`` vs ``+00:00``)."""
    try:
        return datetime.fromisoformat(str(a)) == datetime.fromisoformat(str(b))
    except ValueError:
        return False


def _json_path_parts(path: str) -> list[str]:
    return [p for p in path.strip().lstrip(".").split(".") if p]


class Core:
    """Object semantics over a ``Store`` and a ``RESTMapper`` (see the module docstring)."""

    def __init__(self, store: Store, mapper: RESTMapper, *, simulate_deployments: bool = False,
                 simulate_delay: float = 0.3) -> None:
        self.store = store
        self.mapper = mapper
        self.simulate_deployments = simulate_deployments
        self.simulate_delay = simulate_delay
        self.crds: dict[str, dict[str, Any]] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.on_discovery_change: list[Callable[[], None]] = []
        store.listeners.append(self._on_event)
        for _, entry in store.list(CRD_KEY, None):
            self._crd_changed(entry.obj)

    # ------------------------------------------------------------------ bootstrap

    def bootstrap(self) -> None:
        """Create the default namespaces and ``cluster``'s objects if missing; resume controllers for pending
        work (and the deployment simulator for every Deployment whose status is behind its spec)."""
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            if self.store.get(NS_KEY, "", ns) is None:
                res = self.mapper.get("", "v1", "namespaces")
                assert res is not None
                self.create(res, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                            manager="kube-apiserver")
        cluster.install(self)
        for skey in list(self.store.data):
            for (ns, name), entry in list((self.store.data.get(skey) or {}).items()):
                meta = entry.obj.get("metadata") or {}
                if meta.get("deletionTimestamp") or meta.get("ownerReferences"):
                    self._schedule(self._reconcile, skey, ns, name)
        if self.simulate_deployments:
            for (ns, name), entry in list((self.store.data.get("apps/deployments") or {}).items()):
                if _simulated_status(entry.obj) is not None:
                    self._schedule(self._simulate, ns, name, delay=self.simulate_delay)

    # ------------------------------------------------------------------ reads

    def get(self, res: Resource, ns: str, name: str) -> dict[str, Any]:
        entry = self.store.get(res.storage_key, ns, name)
        if entry is None:
            raise not_found(res, name)
        return entry.obj

    def check_namespace(self, res: Resource, ns: str, creating: bool, name: str = "") -> None:
        """404 when the namespace is missing; 403 (as the NamespaceLifecycle admission plugin
        answers) when ``creating`` ``name`` in a namespace that is being terminated."""
        if not res.namespaced:
            return
        entry = self.store.get(NS_KEY, "", ns)
        if entry is None:
            raise APIError(404, "NotFound", f'namespaces "{ns}" not found', {"name": ns, "kind": "namespaces"})
        if creating and (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
            details = _details(res, name)
            details["causes"] = [{"reason": "NamespaceTerminating", "message": f"namespace {ns} is being terminated",
                                  "field": "metadata.namespace"}]
            raise APIError(403, "Forbidden",
                           f'{res.group_resource} "{name}" is forbidden: unable to create new content in namespace {ns} '
                           "because it is being terminated", details)

    def crd_for(self, res: Resource) -> dict[str, Any] | None:
        return self.crds.get(res.crd_name) if res.crd_name else None

    def version_schema(self, res: Resource) -> dict[str, Any] | None:
        crd = self.crd_for(res)
        if crd is None:
            return None
        for version in (crd.get("spec") or {}).get("versions") or ():
            if version.get("name") == res.version:
                found = (version.get("schema") or {}).get("openAPIV3Schema")
                return found if isinstance(found, dict) else None
        return None

    # ------------------------------------------------------------------ preparation

    def _tracks_generation(self, res: Resource) -> bool:
        return res.is_custom or (res.group, res.kind) in _GENERATION_KINDS

    def _validate(self, res: Resource, obj: dict[str, Any], old: dict[str, Any] | None,
                  field_validation: str, patching: bool = False) -> list[str]:
        """Prune/default/validate ``obj`` in place; returns warnings; raises 400/422.

        Decoding errors of a create or update body say which kind could not be decoded (``Foo in
        version "v1" cannot be handled as a Foo: ...``); those of a patched object (``patching``)
        do not, as in kube-apiserver's patch handler."""
        prefix = "" if patching else f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
        warnings: list[str] = []
        name = str(_meta(obj).get("name") or _meta(obj).get("generateName") or "")
        errors: list[FieldError] = []
        sch = self.version_schema(res)
        if res.is_custom:
            if sch is not None:
                warnings += self._unknown_fields(schema.prune(obj, sch), field_validation, prefix)
                schema.apply_defaults(obj, sch)
                errors += schema.validate(obj, sch)
        else:
            try:
                removed = decoding.normalize(res.group, res.version, res.kind, obj)
            except decoding.DecodeError as err:
                raise bad_request(prefix + str(err)) from None
            warnings += self._unknown_fields(removed, field_validation, prefix)
            self._default_builtin(res, obj, old is None)
            errors += validation.validate_builtin(res.group, res.kind, obj)
        errors = validation.validate_object_meta(obj, res.namespaced) + errors
        warnings += validation.finalizer_warnings(obj, old)
        if old is not None:
            errors += validation.validate_update(old, obj)
            errors += self._finalizer_rules(old, obj)
            if res.kind == "Pod" and not res.group:
                errors += validation.validate_ephemeral_update(old, obj)
        if res.storage_key == CRD_KEY:
            errors += self._crd_rules(obj, old)
        if errors:
            raise invalid(res, name, errors)
        return warnings

    @staticmethod
    def _unknown_fields(removed: list[str], field_validation: str, prefix: str = "") -> list[str]:
        """The warnings for pruned unknown fields; raises 400 under fieldValidation=Strict."""
        if removed and field_validation == "Strict":
            text = ", ".join(f'unknown field "{p}"' for p in removed)
            raise bad_request(f"{prefix}strict decoding error: {text}")
        return [] if field_validation == "Ignore" else [f'unknown field "{p}"' for p in removed]

    @staticmethod
    def _finalizer_rules(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
        if not _deep_get(old, "metadata", "deletionTimestamp"):
            return []
        before = set(_deep_get(old, "metadata", "finalizers") or ())
        after = set(_deep_get(new, "metadata", "finalizers") or ())
        if after - before:
            return [schema.forbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted, "
                                     f"found new finalizers {sorted(after - before)!r}".replace("'", '"'))]
        return []

    def _crd_rules(self, crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        group = str(_deep_get(crd, "spec", "group") or "")
        errors: list[FieldError] = []
        if group.endswith(".k8s.io") or group.endswith(".kubernetes.io") or group in ("k8s.io", "kubernetes.io"):
            annotations = _deep_get(crd, "metadata", "annotations") or {}
            if not annotations.get("api-approved.kubernetes.io"):
                errors.append(schema.required(
                    "metadata.annotations[api-approved.kubernetes.io]",
                    'protected groups must have approval annotation "api-approved.kubernetes.io", '
                    "see https://github.com/kubernetes/enhancements/pull/1111"))
        names = _deep_get(crd, "spec", "names") or {}
        expected = f"{names.get('plural', '')}.{group}"
        if _deep_get(crd, "metadata", "name") != expected:
            errors.append(schema.invalid("metadata.name", _deep_get(crd, "metadata", "name"),
                                         "must be spec.names.plural+\".\"+spec.group"))
        return errors

    def _default_builtin(self, res: Resource, obj: dict[str, Any], creating: bool) -> None:
        kind = (res.group, res.kind)
        if kind == ("", "Namespace"):
            meta = _meta(obj)
            labels = meta.setdefault("labels", {}) if isinstance(meta.get("labels"), dict) or "labels" not in meta else None
            if isinstance(labels, dict) and isinstance(meta.get("name"), str):
                labels["kubernetes.io/metadata.name"] = meta["name"]
            spec = obj.setdefault("spec", {})
            if isinstance(spec, dict):
                spec.setdefault("finalizers", ["kubernetes"])
            status = obj.setdefault("status", {})
            if isinstance(status, dict):
                status.setdefault("phase", "Active")
        else:
            strategies.apply_defaults(res.group, res.kind, obj, creating)

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
        meta = _meta(obj)
        if res.namespaced:
            body_ns = meta.get("namespace")
            if body_ns not in (None, "") and body_ns != ns:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        meta.pop("selfLink", None)

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
                paths = managedfields.field_set(new, self._definition(res), self.version_schema(res), nodes=True)
                if paths:
                    entry: dict[str, Any] = {"manager": manager, "operation": "Update", "apiVersion": res.group_version,
                                             "time": now_rfc3339(), "fieldsType": "FieldsV1",
                                             "fieldsV1": managedfields.paths_to_fields_v1(paths)}
                    new["metadata"]["managedFields"] = [entry]
                return new
            return managedfields.update_managed_fields(old, new, manager, "Update", subresource,
                                                       definition_name=self._definition(res),
                                                       schema=self.version_schema(res))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            log.debug("managedFields update failed", exc_info=True)
            return new

    # ------------------------------------------------------------------ create

    def create(self, res: Resource, ns: str, body: Any, *, manager: str = "", dry_run: bool = False,
               field_validation: str = "Warn", managed_done: bool = False,
               patching: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Create an object; returns (the stored object, warnings)."""
        obj = _require_object(body)
        self._normalize(res, ns, obj)
        meta = obj["metadata"]
        self.check_namespace(res, ns, creating=True, name=str(meta.get("name") or ""))
        if res.is_custom:
            crd = self.crd_for(res)
            if crd is not None and _deep_get(crd, "metadata", "deletionTimestamp"):
                raise APIError(405, "MethodNotAllowed",
                               "create not allowed while custom resource definition is terminating")
        if not meta.get("name") and isinstance(meta.get("generateName"), str) and meta["generateName"]:
            meta["name"] = meta["generateName"] + "".join(random.choices(_NAME_CHARS, k=5))
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            meta.pop(key, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if self._tracks_generation(res):
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if "status" in res.subresources:
            if res.is_custom:
                obj.pop("status", None)
            else:
                strategies.prepare_create_status(res.group, res.version, res.kind, obj)
        warnings = self._validate(res, obj, None, field_validation, patching)
        name = str(meta.get("name"))
        if self.store.get(res.storage_key, ns if res.namespaced else "", name) is not None:
            raise already_exists(res, name)
        if res.storage_key == CRD_KEY:
            self._prepare_crd(obj)
        if not managed_done:
            obj = self._managed(res, None, obj, manager, "")
        if dry_run:
            obj["metadata"]["resourceVersion"] = ""
            return obj, warnings
        _check_size(obj)
        event = self.store.put(res.storage_key, obj)
        return event.entry.obj, warnings

    # ------------------------------------------------------------------ update

    def update(self, res: Resource, ns: str, name: str, body: Any, *, subresource: str = "", manager: str = "",
               dry_run: bool = False, field_validation: str = "Warn", managed_done: bool = False,
               allow_create: bool = False, patching: bool = False) -> tuple[dict[str, Any], bool, list[str]]:
        """Replace an object (or its status); returns (object, created, warnings)."""
        obj = _require_object(body)
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
        old = entry.obj
        rv = meta.get("resourceVersion")
        if rv in (None, ""):
            if res.is_custom:
                raise invalid(res, name, [schema.invalid("metadata.resourceVersion", GoRawZero(),
                                                         "must be specified for an update")])
        elif str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(res, name, STALE)
        new = self._replacement(res, entry, obj, subresource, managed_done)
        new_meta = new["metadata"]
        if res.storage_key == CRD_KEY:
            self._prepare_crd(new, old)
        warnings = self._validate(res, new, old, field_validation, patching)
        if self._tracks_generation(res) and self._spec_changed(res, old, new):
            new_meta["generation"] = int(old["metadata"].get("generation") or 0) + 1
        if not managed_done:
            new = self._managed(res, old, new, manager, subresource)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if self._same(old, new):
            return old, False, warnings
        if dry_run:
            return new, False, warnings
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            event = self.store.delete(res.storage_key, ns if res.namespaced else "", name)
            assert event is not None
            return event.entry.obj, False, warnings
        _check_size(new)
        event = self.store.put(res.storage_key, new)
        return event.entry.obj, False, warnings

    @staticmethod
    def _replacement(res: Resource, entry: Entry, obj: dict[str, Any], subresource: str,
                     managed_done: bool) -> dict[str, Any]:
        """The object an update would store before validation: the request's object (or, for the
        status subresource, the stored object with the request's status), with the fields the
        server owns (uid, creationTimestamp, deletion fields, generation; status unless it is the
        status subresource) taken from the stored object."""
        old = entry.obj
        meta = obj["metadata"]
        if subresource == "ephemeralcontainers":
            new = entry.copy()
            new.setdefault("spec", {})["ephemeralContainers"] = _deep_get(obj, "spec", "ephemeralContainers")
            if new["spec"]["ephemeralContainers"] is None:
                del new["spec"]["ephemeralContainers"]
        elif subresource == "status":
            new = entry.copy()
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
                    new["status"] = msgspec.json.decode(msgspec.json.encode(old["status"]))
                else:
                    new.pop("status", None)
            if res.kind == "Namespace" and not res.group:
                new["spec"] = old.get("spec", {})
        new_meta = new["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            if key in old["metadata"]:
                if key in ("uid", "creationTimestamp") and new_meta.get(key) not in (None, "", old["metadata"][key]) \
                        and not _same_time(new_meta.get(key), old["metadata"][key]):
                    continue  # validate_update reports it
                new_meta[key] = old["metadata"][key]
            else:
                new_meta.pop(key, None)
        if not managed_done and new_meta.get("managedFields") is None and old["metadata"].get("managedFields"):
            new_meta["managedFields"] = old["metadata"]["managedFields"]
        return new

    @staticmethod
    def _same(old: dict[str, Any], new: dict[str, Any]) -> bool:
        def strip(o: dict[str, Any]) -> dict[str, Any]:
            m = dict(o.get("metadata") or {})
            m.pop("managedFields", None)
            m.pop("resourceVersion", None)
            return {**o, "metadata": m}
        return strip(old) == strip(new)

    def _spec_changed(self, res: Resource, old: dict[str, Any], new: dict[str, Any]) -> bool:
        ignore = {"metadata", "status"} if ("status" in res.subresources or not res.is_custom) else {"metadata"}
        keys = (set(old) | set(new)) - ignore
        return any(old.get(k) != new.get(k) for k in keys)

    # ------------------------------------------------------------------ patch

    def patch(self, res: Resource, ns: str, name: str, patch_type: str, raw: bytes, *, subresource: str = "",
              manager: str = "", dry_run: bool = False, force: bool = False,
              field_validation: str = "Warn") -> tuple[dict[str, Any], bool, list[str]]:
        """Apply a patch of ``patch_type`` (a media type); returns (object, created, warnings)."""
        store_ns = ns if res.namespaced else ""
        entry = self.store.get(res.storage_key, store_ns, name)
        if patch_type == PATCH_APPLY:
            return self._apply(res, ns, name, raw, entry, subresource=subresource, manager=manager,
                               dry_run=dry_run, force=force, field_validation=field_validation)
        if entry is None:
            raise not_found(res, name)
        current = entry.copy()
        current["apiVersion"] = res.group_version  # the object as the URL's version shows it
        patched = self._apply_patch(res, patch_type, raw, current)
        patched_meta: dict[str, Any] = _meta(patched)
        if patched_meta.get("resourceVersion") in (None, ""):
            _meta(patched)["resourceVersion"] = entry.obj["metadata"]["resourceVersion"]
        if patched_meta.get("name") in (None, ""):
            _meta(patched)["name"] = name
        obj, _, warnings = self.update(res, ns, name, patched, subresource=subresource, manager=manager,
                                       dry_run=dry_run, field_validation=field_validation, patching=True)
        return obj, False, warnings

    def _apply_patch(self, res: Resource, patch_type: str, raw: bytes, current: dict[str, Any]) -> dict[str, Any]:
        if patch_type == PATCH_STRATEGIC and res.is_custom:
            raise APIError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted media types include: "
                           f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}")
        if patch_type not in (PATCH_JSON, PATCH_MERGE, PATCH_STRATEGIC):
            raise APIError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted media types include: "
                           f"{PATCH_JSON}, {PATCH_MERGE}, {PATCH_APPLY}"
                           + ("" if res.is_custom else f", {PATCH_STRATEGIC}"))
        body = decode_body(raw, "application/json")
        try:
            if patch_type == PATCH_JSON:
                if not isinstance(body, list):
                    raise bad_request("json patch must be a JSON array of operations")
                if len(body) > MAX_JSON_PATCH_OPERATIONS:
                    raise APIError(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum "
                                   f"operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(body)}")
                out = apply_patch(current, body, max_copy_bytes=bodies.MAX_BODY_BYTES)
            elif patch_type == PATCH_MERGE:
                out = apply_merge_patch(current, _require_object(body))
            else:
                out = apply_strategic_merge_patch(current, _require_object(body), self._definition(res))
        except APIError:
            raise
        except PatchError as err:
            raise APIError(422, "Invalid", f"the server rejected our request due to an error in our request: {err}") from None
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as err:
            raise bad_request(f"error applying patch: {err}") from None
        if not isinstance(out, dict):
            raise bad_request("the patch did not produce a JSON object")
        return out

    def _apply(self, res: Resource, ns: str, name: str, raw: bytes, entry: Any, *, subresource: str, manager: str,
               dry_run: bool, force: bool, field_validation: str) -> tuple[dict[str, Any], bool, list[str]]:
        if not manager:
            raise bad_request("PATCH, application/apply-patch+yaml requests must have a fieldManager")
        applied = _require_object(decode_body(raw, PATCH_APPLY))
        meta: dict[str, Any] = _meta(applied)
        if meta.get("name") not in (None, "", name):
            raise bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
        self._normalize(res, ns, applied)
        _meta(applied)["name"] = name
        ignore = ["status"] if ("status" in res.subresources and not subresource) else []
        if subresource == "status":
            ignore = [k for k in applied if k not in ("apiVersion", "kind", "metadata", "status")]
        try:
            result = managedfields.apply(entry.obj if entry else None, applied, manager, force, self._definition(res),
                                         schema=self.version_schema(res), subresource=subresource, ignore=ignore)
        except managedfields.ApplyConflict as err:
            details = _details(res, name, res.kind)
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
        _meta(result)["resourceVersion"] = entry.obj["metadata"]["resourceVersion"]
        obj, _, warnings = self.update(res, ns, name, result, subresource=subresource, manager=manager,
                                       dry_run=dry_run, field_validation=field_validation, managed_done=True,
                                       patching=True)
        return obj, False, warnings

    # ------------------------------------------------------------------ scale

    def _scale_paths(self, res: Resource) -> tuple[list[str], list[str], list[str]]:
        if res.is_custom:
            return (_json_path_parts(str(res.scale.get("specReplicasPath") or ".spec.replicas")),
                    _json_path_parts(str(res.scale.get("statusReplicasPath") or ".status.replicas")),
                    _json_path_parts(str(res.scale.get("labelSelectorPath") or "")))
        return ["spec", "replicas"], ["status", "replicas"], ["status", "selector"]

    def get_scale(self, res: Resource, ns: str, name: str) -> dict[str, Any]:
        obj = self.get(res, ns, name)
        spec_path, status_path, selector_path = self._scale_paths(res)
        meta = obj["metadata"]
        selector: Any = _deep_get(obj, *selector_path) if selector_path else None
        if not res.is_custom:
            sel = (_deep_get(obj, "spec", "selector") if res.kind == "ReplicationController"
                   else _deep_get(obj, "spec", "selector", "matchLabels")) or {}
            selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        status: dict[str, Any] = {"replicas": int(_deep_get(obj, *status_path) or 0)}
        if selector:
            status["selector"] = selector
        return {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": int(_deep_get(obj, *spec_path) or 0)},
            "status": status,
        }

    def set_scale(self, res: Resource, ns: str, name: str, scale: Any, *, manager: str,
                  dry_run: bool) -> dict[str, Any]:
        scale = _require_object(scale)
        replicas = _deep_get(scale, "spec", "replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise APIError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                           f"{replicas!r}: must be greater than or equal to 0")
        entry = self.store.get(res.storage_key, ns if res.namespaced else "", name)
        if entry is None:
            raise not_found(res, name)
        rv = _deep_get(scale, "metadata", "resourceVersion")
        if rv not in (None, "") and str(rv) != entry.obj["metadata"]["resourceVersion"]:
            raise conflict(res, name, STALE)
        new = entry.copy()
        new["apiVersion"] = res.group_version
        spec_path, _, _ = self._scale_paths(res)
        target = new
        for part in spec_path[:-1]:
            target = target.setdefault(part, {})
        target[spec_path[-1]] = replicas
        self.update(res, ns, name, new, subresource="scale", manager=manager, dry_run=dry_run,
                    field_validation="Ignore")
        return self.get_scale(res, ns, name) if not dry_run else scale

    def patch_scale(self, res: Resource, ns: str, name: str, patch_type: str, raw: bytes, *, manager: str,
                    dry_run: bool) -> dict[str, Any]:
        current = self.get_scale(res, ns, name)
        if patch_type == PATCH_APPLY:
            patched = apply_merge_patch(current, _require_object(decode_body(raw, PATCH_APPLY)))
        elif patch_type == PATCH_STRATEGIC:
            patched = self._apply_patch(self.mapper.get("apps", "v1", "deployments") or res, PATCH_MERGE, raw, current)
        else:
            patched = self._apply_patch(res, patch_type, raw, current)
        return self.set_scale(res, ns, name, patched, manager=manager, dry_run=dry_run)

    # ------------------------------------------------------------------ delete

    def delete(self, res: Resource, ns: str, name: str, options: Mapping[str, Any],
               dry_run: bool = False) -> tuple[int, dict[str, Any]]:
        """Delete with finalizers/propagation; returns (HTTP code, object or Status)."""
        store_ns = ns if res.namespaced else ""
        entry = self.store.get(res.storage_key, store_ns, name)
        if entry is None:
            raise not_found(res, name)
        self._check_preconditions(res, name, entry.obj, options.get("preconditions"))
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
        if res.storage_key == NS_KEY:
            return self._delete_namespace(res, entry.obj, obj, finalizers, dry_run)
        if finalizers:
            changed = finalizers != list(meta.get("finalizers") or []) or not meta.get("deletionTimestamp")
            meta["finalizers"] = finalizers
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = now_rfc3339()
                meta["deletionGracePeriodSeconds"] = 0
                if self._tracks_generation(res):
                    meta["generation"] = int(meta.get("generation") or 0) + 1
            if dry_run or not changed:
                return 200, entry.obj if not dry_run else obj
            if res.storage_key == CRD_KEY:
                self._set_condition(obj, "Terminating", "True", "InstanceDeletionInProgress",
                                    "CustomResource deletion is in progress")
            event = self.store.put(res.storage_key, obj)
            code = 202 if options.get("orphanDependents") is False else 200
            return code, event.entry.obj
        if dry_run:
            return 200, obj
        deleted = self.store.delete(res.storage_key, store_ns, name)
        assert deleted is not None
        event = deleted
        if res.is_custom or res.storage_key in _RETURNS_DELETED:
            return 200, event.entry.obj
        details = _details(res, name)
        details["uid"] = meta.get("uid")
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

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

    def _delete_namespace(self, res: Resource, current: dict[str, Any], obj: dict[str, Any], finalizers: list[str],
                          dry_run: bool) -> tuple[int, dict[str, Any]]:
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
        obj.setdefault("status", {})["phase"] = "Terminating"
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

    # ------------------------------------------------------------------ controllers

    def _schedule(self, fn: Callable[..., None], *args: Any, delay: float = 0.0) -> None:
        loop = self.loop
        if loop is None:
            return

        def run() -> None:
            try:
                fn(*args)
            except APIError as err:
                if err.code not in (404, 409):
                    log.warning("background %s failed: %s", getattr(fn, "__name__", fn), err)
            except Exception:
                log.exception("background %s failed", getattr(fn, "__name__", fn))

        if delay > 0:
            loop.call_later(delay, run)
        else:
            loop.call_soon(run)

    def _on_event(self, event: Event) -> None:
        obj = event.entry.obj
        meta = obj.get("metadata") or {}
        if event.skey == CRD_KEY:
            if event.type == "DELETED":
                self._crd_removed(obj)
            else:
                self._crd_changed(obj)
        if event.type == "DELETED":
            uid = meta.get("uid")
            if uid and uid in self.store.dependents:
                self._schedule(self._collect_dependents, str(uid))
            if event.namespace:
                ns_entry = self.store.get(NS_KEY, "", event.namespace)
                if ns_entry is not None and (ns_entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self._schedule(self._reconcile, NS_KEY, "", event.namespace)
            for owner in meta.get("ownerReferences") or ():
                if isinstance(owner, dict) and owner.get("blockOwnerDeletion"):
                    loc = self.store.by_uid(str(owner.get("uid")))
                    if loc is not None:
                        self._schedule(self._reconcile, *loc)
            crd_name = self._crd_name_for_skey(event.skey)
            if crd_name:
                crd = self.crds.get(crd_name)
                if crd is not None and _deep_get(crd, "metadata", "deletionTimestamp"):
                    self._schedule(self._reconcile, CRD_KEY, "", crd_name)
            return
        if meta.get("deletionTimestamp") or meta.get("ownerReferences"):
            self._schedule(self._reconcile, event.skey, event.namespace, event.name)
        if self.simulate_deployments and event.skey == "apps/deployments":
            self._schedule(self._simulate, event.namespace, event.name, delay=self.simulate_delay)

    def _crd_name_for_skey(self, skey: str) -> str | None:
        group, _, plural = skey.partition("/")
        name = f"{plural}.{group}"
        return name if name in self.crds else None

    def _resource_for_skey(self, skey: str) -> Resource | None:
        found = self.mapper.by_storage_key(skey)
        return found[0] if found else None

    def _reconcile(self, skey: str, ns: str, name: str) -> None:
        """Finish what an object's deletion/ownership state asks for (GC, namespaces, CRDs)."""
        entry = self.store.get(skey, ns, name)
        if entry is None:
            return
        meta = entry.obj.get("metadata") or {}
        finalizers = list(meta.get("finalizers") or ())
        if meta.get("ownerReferences") and not meta.get("deletionTimestamp"):
            self._check_owners(skey, ns, name, entry.obj)
        if not meta.get("deletionTimestamp"):
            return
        if skey == NS_KEY:
            self._finish_namespace(name, entry.obj)
            return
        if skey == CRD_KEY and CRD_FINALIZER in finalizers:
            self._finish_crd(name, entry.obj)
            return
        uid = str(meta.get("uid"))
        if "orphan" in finalizers:
            for dep in list(self.store.dependents.get(uid, ())):
                self._strip_owner(dep, uid)
            self._remove_finalizer(skey, ns, name, "orphan")
        elif "foregroundDeletion" in finalizers:
            blocking = False
            for dep in list(self.store.dependents.get(uid, ())):
                dep_entry = self.store.get(*dep)
                if dep_entry is None:
                    continue
                refs = (dep_entry.obj.get("metadata") or {}).get("ownerReferences") or ()
                if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in refs if isinstance(r, dict)):
                    blocking = True
                if not (dep_entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self._delete_internal(dep, "Foreground")
            if not blocking:
                self._remove_finalizer(skey, ns, name, "foregroundDeletion")

    def _delete_internal(self, loc: tuple[str, str, str], policy: str) -> None:
        res = self._resource_for_skey(loc[0])
        if res is None:
            return
        try:
            self.delete(res, loc[1], loc[2], {"propagationPolicy": policy})
        except APIError as err:
            if err.code != 404:
                raise

    def _remove_finalizer(self, skey: str, ns: str, name: str, finalizer: str) -> None:
        entry = self.store.get(skey, ns, name)
        if entry is None:
            return
        obj = entry.copy()
        meta = obj["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != finalizer]
        if not meta["finalizers"]:
            del meta["finalizers"]
            if meta.get("deletionTimestamp"):
                self.store.delete(skey, ns, name)
                return
        self.store.put(skey, obj)

    def _strip_owner(self, loc: tuple[str, str, str], owner_uid: str) -> None:
        entry = self.store.get(*loc)
        if entry is None:
            return
        obj = entry.copy()
        meta = obj["metadata"]
        refs = [r for r in meta.get("ownerReferences") or () if r.get("uid") != owner_uid]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        self.store.put(loc[0], obj)

    def _collect_dependents(self, owner_uid: str) -> None:
        """The owner is gone (background deletion): delete dependents that have no owner left."""
        for dep in list(self.store.dependents.get(owner_uid, ())):
            entry = self.store.get(*dep)
            if entry is not None:
                self._check_owners(*dep, entry.obj)

    def _check_owners(self, skey: str, ns: str, name: str, obj: dict[str, Any]) -> None:
        refs = [r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if isinstance(r, dict)]
        if not refs:
            return
        alive = []
        for ref in refs:
            loc = self.store.by_uid(str(ref.get("uid")))
            if loc is not None and (loc[1] == "" or loc[1] == ns):
                alive.append(ref)
        if alive:
            return
        self._delete_internal((skey, ns, name), "Background")

    def _finish_namespace(self, name: str, ns_obj: dict[str, Any]) -> None:
        """One pass of the namespace controller: delete the namespace's content, record what
        remains in status.conditions (as kube-controller-manager's namespace deleter does), and
        remove the namespace once it is empty and its finalizers are gone."""
        stores = [r for r in self.mapper if r.namespaced and r.version == self.mapper.versions(r.group)[0]]
        for res in stores:
            for key, entry in self.store.list(res.storage_key, name):
                if not (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                    self._delete_internal((res.storage_key, key[0], key[1]), "Background")
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for res in stores:
            entries = self.store.list(res.storage_key, name)
            if entries:
                remaining[f"{res.plural}.{res.group}"] = len(entries)
            for _, entry in entries:
                for fin in (entry.obj.get("metadata") or {}).get("finalizers") or ():
                    finalizers[str(fin)] = finalizers.get(str(fin), 0) + 1
        current = self.store.get(NS_KEY, "", name)
        if current is None:
            return
        new = current.copy()
        _set_namespace_conditions(new, remaining, finalizers)
        if remaining:
            if new != current.obj:
                self.store.put(NS_KEY, new)
            self._schedule(self._reconcile, NS_KEY, "", name, delay=0.5)
            return
        spec = new.get("spec") or {}
        spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != "kubernetes"]
        if not spec["finalizers"]:
            spec.pop("finalizers")
        new["spec"] = spec
        if new["metadata"].get("finalizers"):
            self.store.put(NS_KEY, new)
        else:
            self.store.delete(NS_KEY, "", name)

    def _finish_crd(self, name: str, crd: dict[str, Any]) -> None:
        group = str(_deep_get(crd, "spec", "group") or "")
        plural = str(_deep_get(crd, "spec", "names", "plural") or "")
        skey = f"{group}/{plural}"
        keys = list(self.store.drop_all(skey))
        for ns, obj_name in keys:
            entry = self.store.get(skey, ns, obj_name)
            if entry is not None and not (entry.obj.get("metadata") or {}).get("deletionTimestamp"):
                self._delete_internal((skey, ns, obj_name), "Background")
        if self.store.count(skey):
            self._schedule(self._reconcile, CRD_KEY, "", name, delay=0.5)
            return
        self._remove_finalizer(CRD_KEY, "", name, CRD_FINALIZER)

    # ------------------------------------------------------------------ CRDs

    def _prepare_crd(self, crd: dict[str, Any], old: dict[str, Any] | None = None) -> None:
        meta = _meta(crd)
        if old is None:
            finalizers = list(meta.get("finalizers") or [])
            if CRD_FINALIZER not in finalizers:
                finalizers.append(CRD_FINALIZER)
            meta["finalizers"] = finalizers
        spec = crd.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict) and isinstance(names.get("kind"), str):
            names.setdefault("singular", names["kind"].lower())
            names.setdefault("listKind", names["kind"] + "List")
        spec.setdefault("conversion", {"strategy": "None"})
        for version in spec.get("versions") or ():
            if isinstance(version, dict):
                version.setdefault("served", True)
                version.setdefault("storage", False)
        status: dict[str, Any] = crd["status"] if isinstance(crd.get("status"), dict) else {}
        crd["status"] = status
        if isinstance(names, dict):
            status["acceptedNames"] = {k: v for k, v in names.items()}
        stored = list(status.get("storedVersions") or [])
        for version in spec.get("versions") or ():
            if isinstance(version, dict) and version.get("storage") and version.get("name") not in stored:
                stored.append(version.get("name"))
        status["storedVersions"] = stored
        self._set_condition(crd, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
        self._set_condition(crd, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
        group = str(spec.get("group") or "")
        if group.endswith(".k8s.io") or group.endswith(".kubernetes.io"):
            approval = str((meta.get("annotations") or {}).get("api-approved.kubernetes.io") or "")
            if approval.startswith("unapproved"):
                self._set_condition(crd, "KubernetesAPIApprovalPolicyConformant", "False", "ApprovalBypassed",
                                    "bypassed by annotation: " + approval)
            else:
                self._set_condition(crd, "KubernetesAPIApprovalPolicyConformant", "True", "ApprovedAnnotation",
                                    "approved in " + approval)

    @staticmethod
    def _set_condition(obj: dict[str, Any], ctype: str, status: str, reason: str, message: str) -> None:
        st = obj.setdefault("status", {})
        conditions = [c for c in st.get("conditions") or () if isinstance(c, dict)]
        for cond in conditions:
            if cond.get("type") == ctype:
                if cond.get("status") != status:
                    cond["lastTransitionTime"] = now_rfc3339()
                cond.update(status=status, reason=reason, message=message)
                break
        else:
            conditions.append({"type": ctype, "status": status, "lastTransitionTime": now_rfc3339(),
                               "reason": reason, "message": message})
        st["conditions"] = conditions

    def _crd_changed(self, crd: dict[str, Any]) -> None:
        name = str(_deep_get(crd, "metadata", "name") or "")
        self.crds[name] = crd
        self.mapper.set_crd(crd)
        for cb in self.on_discovery_change:
            cb()

    def _crd_removed(self, crd: dict[str, Any]) -> None:
        name = str(_deep_get(crd, "metadata", "name") or "")
        self.crds.pop(name, None)
        self.mapper.remove_crd(name)
        group = str(_deep_get(crd, "spec", "group") or "")
        plural = str(_deep_get(crd, "spec", "names", "plural") or "")
        self.store.close_watchers(f"{group}/{plural}")
        for cb in self.on_discovery_change:
            cb()

    # ------------------------------------------------------------------ deployment simulator

    def _simulate(self, ns: str, name: str) -> None:
        entry = self.store.get("apps/deployments", ns, name)
        if entry is None:
            return
        status = _simulated_status(entry.obj)
        if status is None:
            return
        new = entry.copy()
        now = now_rfc3339()
        status["conditions"] = [
            {"type": "Available", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": now, "lastTransitionTime": now,
             "reason": "NewReplicaSetAvailable", "message": f'ReplicaSet "{name}" has successfully progressed.'},
        ]
        new["status"] = status
        self.store.put("apps/deployments", new)


_NS_CONDITIONS_OK = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentRemoved", "All content successfully removed"),
)


def _set_namespace_conditions(ns: dict[str, Any], remaining: Mapping[str, int], finalizers: Mapping[str, int]) -> None:
    """Set the five deletion conditions the namespace controller maintains on a terminating
    namespace: ``remaining`` counts objects per ``<resource>.<group>``, ``finalizers`` counts the
    finalizers those objects still carry."""
    failing: dict[str, tuple[str, str]] = {}
    if remaining:
        listed = ", ".join(sorted(f"{gr} has {n} resource instances" for gr, n in remaining.items()))
        failing["NamespaceContentRemaining"] = ("SomeResourcesRemain", f"Some resources are remaining: {listed}")
    if finalizers:
        listed = ", ".join(sorted(f"{fin} in {n} resource instances" for fin, n in finalizers.items()))
        failing["NamespaceFinalizersRemaining"] = ("SomeFinalizerRemain", f"Some finalizers are remaining: {listed}")
    for ctype, ok_reason, ok_message in _NS_CONDITIONS_OK:
        reason, message = failing.get(ctype, (ok_reason, ok_message))
        Core._set_condition(ns, ctype, "True" if ctype in failing else "False", reason, message)


def _simulated_status(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The status the simulator gives a Deployment (all replicas ready, the generation observed),
    or None if its status already says so (or it is being deleted). With zero replicas the ready,
    available and updated counts are omitted; an absent count counts as zero."""
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return None
    replicas = _deep_get(obj, "spec", "replicas")
    replicas = 1 if replicas is None else int(replicas)
    generation = int(_deep_get(obj, "metadata", "generation") or 1)
    status = dict(obj.get("status") or {})
    want = {"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas}
    if all((status.get(k) or 0) == v for k, v in want.items()):
        return None
    status.update(want)
    if replicas == 0:
        for key in ("readyReplicas", "availableReplicas", "updatedReplicas"):
            del status[key]
    return status


class GoRawZero(schema.GoRaw):
    """Renders as Go's ``0x0`` (the uint64 zero Kubernetes prints for a missing resourceVersion)."""

    def __new__(cls) -> GoRawZero:
        return super().__new__(cls, "0x0")
