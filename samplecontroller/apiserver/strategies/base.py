"""The strategy of a kind: what create, update and delete do to its objects beyond the generic
rules (kube-apiserver's RESTCreateStrategy/RESTUpdateStrategy/RESTDeleteStrategy, plus its
table convertor, selectable fields and scale subresource).

``Strategy`` is the generic built-in behaviour (upstream defaulting, the OpenAPI-derived
validation, the zero status on create); ``CustomResourceStrategy`` serves every custom resource
from its CRD's structural schema. Per-kind subclasses live in ``kinds`` and ``crd``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from samplecontroller.apiserver import builtins, cel, decoding, schema, tables
from samplecontroller.apiserver.objects import deep_get, json_path_parts
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.defaults import apply_defaults
from samplecontroller.apiserver.strategies.recent import drop_disabled, drop_disabled_status, gated_errors
from samplecontroller.apiserver.strategies.validation import validate_builtin, validate_builtin_status

__all__ = ["BASE_FIELD_LABELS", "CustomResourceStrategy", "Strategy"]

Obj = dict[str, Any]
Schema = dict[str, Any] | None


class Stored(Protocol):
    """What ``Strategy.allocate`` may read of other stored objects."""

    def __call__(self, skey: str) -> Iterable[Obj]:
        """The stored objects of a resource (``/services``, ``scheduling.k8s.io/priorityclasses``),
        in every namespace, read when called."""

    def get(self, skey: str, ns: str, name: str) -> Obj | None:
        """One stored object (``ns`` is "" for a cluster-scoped resource), else None."""


BASE_FIELD_LABELS = frozenset({"metadata.name", "metadata.namespace"})


class Strategy:
    """The generic strategy of a built-in kind. ``tracks_generation``: spec changes bump
    metadata.generation; ``returns_deleted``: a delete answers with the object, not a Status
    (the kinds whose registry sets ``ReturnDeletedObject``: namespaces, pods, pod templates,
    services, service accounts, persistent volumes and claims, resource quotas, storage classes,
    CSI drivers and nodes, volume attachments and attributes classes, resource.k8s.io's device
    classes, claims, claim templates and slices; custom resources do not);
    ``deletes_in_phases``: a delete only marks the object terminating (namespaces);
    ``field_labels``: the field selectors the kind supports beyond metadata.name/namespace;
    ``create_action``: "" for kinds whose create stores the object, else what answers a create
    without storing anything ("review" for access and token reviews, "bind" for Bindings);
    ``records_requester``: ``set_requester`` records who creates an object (the handler reads
    the requester only then)."""

    tracks_generation = False
    returns_deleted = False
    deletes_in_phases = False
    records_requester = False

    def __init__(self, *, tracks_generation: bool | None = None, field_labels: Iterable[str] = (),
                 create_action: str = "", returns_deleted: bool | None = None) -> None:
        if tracks_generation is not None:
            self.tracks_generation = tracks_generation
        if returns_deleted is not None:
            self.returns_deleted = returns_deleted
        self.field_labels = BASE_FIELD_LABELS | frozenset(field_labels)
        self.create_action = create_action

    # ---------------------------------------------------------------- create/update

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        """Reset ``obj``'s status on create as the kind's PrepareForCreate does (the zero status
        as Go encodes it)."""
        obj["status"] = builtins.empty_status(group, version, kind)

    def decode(self, res: Resource, obj: Obj, sch: Schema) -> list[str]:
        """Drop unknown fields and normalize values; returns the dropped paths
        (``decoding.DecodeError`` when a value cannot be decoded)."""
        return decoding.normalize(res.group, res.version, res.kind, obj)

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        """Apply the kind's defaults in place."""
        apply_defaults(res.group, res.kind, obj, creating)

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        """The kind's field validation (before the object-meta and update rules)."""
        return validate_builtin(res.group, res.kind, obj)

    def drop_disabled(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> None:
        """Drop the fields whose feature gate is off by default in Kubernetes ``1.<minor>`` (the
        emulated version) unless ``old`` (the stored object of an update) uses them: the kind's
        PrepareForCreate/PrepareForUpdate ``dropDisabledFields`` (``recent.drop_disabled``)."""
        drop_disabled(res.group, res.kind, obj, old, minor)

    def drop_disabled_status(self, res: Resource, obj: Obj, old: Obj, minor: int) -> None:
        """The same for a status write (the status strategies' PrepareForUpdate
        ``dropDisabledStatusFields``: ``recent.drop_disabled_status``)."""
        drop_disabled_status(res.group, res.kind, obj, old, minor)

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        """The values refused while their feature gate is off at Kubernetes ``1.<minor>`` (the
        emulated version) and ``old`` does not use them (``recent.gated_errors``)."""
        return gated_errors(res.group, res.kind, obj, old, minor)

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        """The kind's validation of a status write (``obj``, whose spec is the stored ``old``'s),
        in place of ``validate``: what its status strategy's ValidateUpdate checks beyond the
        object meta (a Deployment's or ReplicaSet's status alone, not its spec again); the whole
        ``validate`` for a kind without known status rules (stricter than kube-apiserver, never
        weaker)."""
        found = validate_builtin_status(res.group, res.kind, obj, old)
        return self.validate(res, obj, sch) if found is None else found

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        """Kind-specific rules checked after every generic one (``old`` is None on create)."""
        return []

    def validate_compatibility(self, obj: Obj, old: Obj | None, emulated_minor: int) -> list[FieldError]:
        """The CEL expressions new in ``obj`` (not in ``old``) that use a library the server's
        minimum compatibility version (``emulated_minor`` - 1) lacks, as kube compiles new
        expressions (CRD rules, admission policies); none for other kinds."""
        return []

    def validate_rules(self, res: Resource, obj: Obj, old: Obj | None, sch: Schema,
                       found: list[FieldError]) -> tuple[list[FieldError], list[str]]:
        """The schema's validation rules (CEL ``x-kubernetes-validations``): errors and warnings.
        ``found`` are the errors so far (some of them block the rules)."""
        return [], []

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str) -> None:
        """Adjust the object an update would store (before validation)."""

    def allocate(self, obj: Obj, old: Obj | None, stored: Stored) -> list[FieldError]:
        """Fill in what depends on other stored objects (``stored``) in a validated object about to
        be stored (``old`` is None on create): a Service's cluster IP and node ports from the
        ranges Services share (a requested value that is taken is a field error), a new Pod's
        priority from its PriorityClass (admission: may raise ``APIError``)."""
        return []

    def set_requester(self, obj: Obj, user: Mapping[str, Any]) -> None:
        """Record who creates ``obj`` where the kind keeps it (a CertificateSigningRequest's spec);
        ``user`` has ``username``, ``uid``, ``groups`` and ``extra``."""

    def grace_period(self, obj: Obj, options: Mapping[str, Any]) -> int | None:
        """The graceful-deletion period of ``obj`` under delete ``options`` (CheckGracefulDelete),
        None for kinds that are deleted at once; 0 also deletes at once."""
        return None

    def check_delete(self, res: Resource, obj: Obj) -> None:
        """Raise ``APIError`` when ``obj`` may not be deleted at all (a system PriorityClass)."""

    def finish_create(self, obj: Obj) -> None:
        """Fill in what the server sets on a validated new object, before it is stored."""

    def on_terminating(self, obj: Obj) -> None:
        """Mark ``obj`` as being deleted (it keeps finalizers, so it is not removed yet)."""

    # ---------------------------------------------------------------- reads

    def columns(self, res: Resource, crd: Mapping[str, Any] | None) -> list[tables.Column]:
        """The Table columns of the kind (``kubectl get``)."""
        return tables.builtin_columns(res.group, res.kind)

    def selectable_fields(self, res: Resource, crd: Mapping[str, Any] | None) -> frozenset[str]:
        """The field selector labels the kind supports."""
        return self.field_labels

    def scale_paths(self, res: Resource) -> tuple[list[str], list[str], list[str]]:
        """The spec replicas, status replicas and label selector paths of the scale subresource."""
        return ["spec", "replicas"], ["status", "replicas"], ["status", "selector"]

    def scale_selector(self, res: Resource, obj: Obj) -> Any:
        """The label selector the Scale's status shows, as a string."""
        sel = deep_get(obj, "spec", "selector", "matchLabels") or {}
        return ",".join(f"{k}={v}" for k, v in sorted(sel.items()))


class CustomResourceStrategy(Strategy):
    """Custom resources: pruning, defaulting and validation from the CRD's structural schema;
    the status is dropped on create; scale paths from the CRD's scale subresource."""

    tracks_generation = True

    def reset_status(self, group: str, version: str, kind: str, obj: Obj) -> None:
        obj.pop("status", None)

    def decode(self, res: Resource, obj: Obj, sch: Schema) -> list[str]:
        return schema.prune(obj, sch) if sch is not None else []

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        if sch is not None:
            schema.apply_defaults(obj, sch)

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return schema.validate(obj, sch) if sch is not None else []

    def drop_disabled(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> None:
        """Custom resources have no feature-gated fields."""

    def drop_disabled_status(self, res: Resource, obj: Obj, old: Obj, minor: int) -> None:
        """Custom resources have no feature-gated fields."""

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        return []

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        """The whole object against the schema, as the custom resource status strategy validates."""
        return self.validate(res, obj, sch)

    def validate_rules(self, res: Resource, obj: Obj, old: Obj | None, sch: Schema,
                       found: list[FieldError]) -> tuple[list[FieldError], list[str]]:
        if sch is None or not cel.has_rules(sch):
            return [], []
        blocked = cel.blocking_error(found)
        if blocked is not None:
            return [blocked], []
        return cel.validate(obj, old, sch)

    def columns(self, res: Resource, crd: Mapping[str, Any] | None) -> list[tables.Column]:
        return tables.crd_columns(crd, res.version) if crd else [tables.NAME_COLUMN]

    def selectable_fields(self, res: Resource, crd: Mapping[str, Any] | None) -> frozenset[str]:
        if crd is None:
            return self.field_labels
        for version in (crd.get("spec") or {}).get("versions") or ():
            if version.get("name") == res.version:
                return self.field_labels | {str(f.get("jsonPath", "")).lstrip(".")
                                            for f in version.get("selectableFields") or () if isinstance(f, dict)}
        return self.field_labels

    def scale_paths(self, res: Resource) -> tuple[list[str], list[str], list[str]]:
        return (json_path_parts(str(res.scale.get("specReplicasPath") or ".spec.replicas")),
                json_path_parts(str(res.scale.get("statusReplicasPath") or ".status.replicas")),
                json_path_parts(str(res.scale.get("labelSelectorPath") or "")))

    def scale_selector(self, res: Resource, obj: Obj) -> Any:
        path = self.scale_paths(res)[2]
        return deep_get(obj, *path) if path else None
