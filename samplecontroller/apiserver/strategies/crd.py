"""The CustomResourceDefinition strategy: names and versions defaulted, the cleanup finalizer
added, NamesAccepted/Established (and the API approval policy) conditions set, the protected
groups' approval annotation, the name rule and the schemas' validation rules (a rule that does
not compile or whose estimated cost exceeds kube's limits rejects the CRD; on update the per-rule
limit is not applied to a version whose schema is unchanged, as kube) checked, Terminating on
delete."""

from __future__ import annotations

from samplecontroller.apiserver import cel, schema
from samplecontroller.apiserver.objects import deep_get, meta_of, set_condition
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Strategy

__all__ = ["CRD_FINALIZER", "CRDStrategy", "prepare_crd"]

CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class CRDStrategy(Strategy):
    tracks_generation = True

    def finish_create(self, obj: Obj) -> None:
        prepare_crd(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str) -> None:
        prepare_crd(new, old)

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return _crd_rules(obj, old)

    def validate_compatibility(self, obj: Obj, old: Obj | None, emulated_minor: int) -> list[FieldError]:
        """The CEL rules' errors (``cel.schema_errors``), a new rule compiled as kube-apiserver
        compiles it, for the server's minimum compatibility version (the emulated version minus
        one); the old CRD's expressions compile with every library."""
        old_schemas = _schemas_by_version(old)
        preexisting = frozenset().union(*(cel.expressions(s) for s in old_schemas.values()))
        return _validation_rule_errors(deep_get(obj, "spec", "versions"), old_schemas, emulated_minor - 1, preexisting)

    def on_terminating(self, obj: Obj) -> None:
        set_condition(obj, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")


def prepare_crd(crd: Obj, old: Obj | None) -> None:
    """Default a CRD and set its status as the apiextensions controllers would at once."""
    meta = meta_of(crd)
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
    status: Obj = crd["status"] if isinstance(crd.get("status"), dict) else {}
    crd["status"] = status
    if isinstance(names, dict):
        status["acceptedNames"] = {k: v for k, v in names.items()}
    stored = list(status.get("storedVersions") or [])
    for version in spec.get("versions") or ():
        if isinstance(version, dict) and version.get("storage") and version.get("name") not in stored:
            stored.append(version.get("name"))
    status["storedVersions"] = stored
    set_condition(crd, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
    set_condition(crd, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    _approval_condition(crd, str(spec.get("group") or ""), meta)


def _approval_condition(crd: Obj, group: str, meta: Obj) -> None:
    if not (group.endswith(".k8s.io") or group.endswith(".kubernetes.io")):
        return
    approval = str((meta.get("annotations") or {}).get("api-approved.kubernetes.io") or "")
    if approval.startswith("unapproved"):
        set_condition(crd, "KubernetesAPIApprovalPolicyConformant", "False", "ApprovalBypassed",
                      "bypassed by annotation: " + approval)
    else:
        set_condition(crd, "KubernetesAPIApprovalPolicyConformant", "True", "ApprovedAnnotation",
                      "approved in " + approval)


def _crd_rules(crd: Obj, old: Obj | None = None) -> list[FieldError]:
    group = str(deep_get(crd, "spec", "group") or "")
    errors: list[FieldError] = []
    if group.endswith(".k8s.io") or group.endswith(".kubernetes.io") or group in ("k8s.io", "kubernetes.io"):
        annotations = deep_get(crd, "metadata", "annotations") or {}
        if not annotations.get("api-approved.kubernetes.io"):
            errors.append(schema.required(
                "metadata.annotations[api-approved.kubernetes.io]",
                'protected groups must have approval annotation "api-approved.kubernetes.io", '
                "see https://github.com/kubernetes/enhancements/pull/1111"))
    # (the CEL rules' errors: validate_compatibility, which knows the compatibility version)
    names = deep_get(crd, "spec", "names") or {}
    expected = f"{names.get('plural', '')}.{group}"
    if deep_get(crd, "metadata", "name") != expected:
        errors.append(schema.invalid("metadata.name", deep_get(crd, "metadata", "name"),
                                     "must be spec.names.plural+\".\"+spec.group"))
    return errors


def _schemas_by_version(crd: Obj | None) -> dict[str, object]:
    """The old CRD's schema of each version (empty on create)."""
    versions = deep_get(crd, "spec", "versions") if crd is not None else None
    return {str(v.get("name")): deep_get(v, "schema", "openAPIV3Schema")
            for v in versions if isinstance(v, dict)} if isinstance(versions, list) else {}


def _validation_rule_errors(versions: object, old: dict[str, object] | None = None, compat_minor: int | None = None,
                            preexisting: frozenset[str] = frozenset()) -> list[FieldError]:
    """The schemas' rule errors. As in kube-apiserver (whose internal CRD has one top-level
    ``spec.validation`` when every version has the same schema) the path is
    ``spec.validation.openAPIV3Schema`` then, else ``spec.versions[i].schema.openAPIV3Schema``.
    ``old``: the old CRD's schema by version name; a version whose schema it leaves unchanged
    is not held to the per-rule cost limit (kube's versionsWithUnchangedSchemas).
    ``compat_minor``, ``preexisting``: see ``cel.schema_errors``."""
    if not isinstance(versions, list):
        return []
    old = old or {}
    names = [str(v.get("name")) if isinstance(v, dict) else "" for v in versions]
    schemas = [deep_get(v, "schema", "openAPIV3Schema") if isinstance(v, dict) else None for v in versions]

    def unchanged(i: int) -> bool:
        return names[i] in old and old[names[i]] == schemas[i]

    if schemas and all(s == schemas[0] for s in schemas):
        return cel.schema_errors(schemas[0], "spec.validation.openAPIV3Schema", unchanged(0), compat_minor, preexisting)
    errors: list[FieldError] = []
    for i, sch in enumerate(schemas):
        errors += cel.schema_errors(sch, f"spec.versions[{i}].schema.openAPIV3Schema", unchanged(i), compat_minor,
                                    preexisting)
    return errors
