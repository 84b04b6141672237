"""Validation of object metadata and built-in kinds, with Kubernetes' field error messages.

Every function returns a list of ``schema.FieldError`` (empty when valid) and never raises on
decoded JSON input, whatever its shape. Rules follow k8s.io/apimachinery's validation
(names, labels, annotations, owner references) and the built-in kinds' strategies for the
kinds this server serves (Deployment, ReplicaSet, Pod, Namespace, Service, ConfigMap, Secret,
Lease, Event, CustomResourceDefinition).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apiserver import builtins
from samplecontroller.apiserver.schema import (
    ERROR_FORBIDDEN,
    FieldError,
    GoRaw,
    check_structural,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)

__all__ = [
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "finalizer_warnings",
    "qualified_name_errors",
    "validate_builtin",
    "validate_ephemeral_update",
    "validate_name",
    "validate_object_meta",
    "validate_update",
]

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"
_CONFIG_KEY = "[-._a-zA-Z0-9]+"
_RE = {p: re.compile("^" + p + "$") for p in (_DNS1123_LABEL, _DNS1123_SUBDOMAIN, _DNS1035_LABEL, _QUALIFIED_NAME, _LABEL_VALUE, _CONFIG_KEY)}
_TOTAL_ANNOTATION_SIZE = 256 * 1024

# kinds whose names are DNS-1123 labels / DNS-1035 labels rather than subdomains
_LABEL_NAMED = {("", "Namespace")}
_DNS1035_NAMED = {("", "Service")}


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def dns1123_label_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 label (names of namespaces)."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_DNS1123_LABEL].match(value):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            f"and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{_DNS1123_LABEL}')"
        )
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 subdomain (most object names)."""
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _RE[_DNS1123_SUBDOMAIN].match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            f"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN}')"
        )
    return errs


def dns1035_label_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1035 label (names of services)."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_DNS1035_LABEL].match(value):
        errs.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
            f"character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '{_DNS1035_LABEL}')"
        )
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """Messages for a label/annotation key that is not a qualified name (``prefix/name``)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs = ["prefix part must be non-empty"]
        else:
            errs = ["prefix part " + e for e in dns1123_subdomain_errors(prefix)]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            f"'{_QUALIFIED_NAME}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if name and not _RE[_QUALIFIED_NAME].match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            f"alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{_QUALIFIED_NAME}')"
        )
    return errs


def _label_value_errors(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_LABEL_VALUE].match(value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
            f"start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE}')"
        )
    return errs


def _path_segment_errors(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _name_rule(group: str, kind: str) -> Any:
    if (group, kind) in _LABEL_NAMED:
        return dns1123_label_errors
    if (group, kind) in _DNS1035_NAMED:
        return dns1035_label_errors
    return dns1123_subdomain_errors


def validate_name(name: Any, namespaced: bool = True, kind: str = "", group: str = "", field: str = "metadata.name") -> list[FieldError]:
    """Errors for an object name of ``kind`` (empty list if valid).

    Namespaces use RFC 1123 labels, Services RFC 1035 labels, every other kind (custom
    resources included) RFC 1123 subdomains. ``namespaced`` is accepted for symmetry with
    Kubernetes' ValidateObjectMeta; the namespace itself is checked by ``validate_object_meta``.
    """
    if name is None or name == "":
        return [required(field, "name or generateName is required")]
    if not isinstance(name, str):
        return [invalid(field, name, "must be a string")]
    messages = _path_segment_errors(name) + _name_rule(group, kind)(name)
    return [invalid(field, name, m) for m in messages]


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return group, str(obj.get("kind") or "")


def validate_object_meta(obj: Mapping[str, Any], namespaced: bool | None = None) -> list[FieldError]:
    """Errors in ``metadata``: name/generateName, namespace, labels, annotations, owner references, finalizers.

    ``namespaced`` True requires a namespace, False forbids one, None does not check it.
    """
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        return [invalid("metadata", "", "must be an object")]
    group, kind = _group_kind(obj)
    errors: list[FieldError] = []
    name, generate = meta.get("name"), meta.get("generateName")
    if name:
        errors += validate_name(name, bool(namespaced), kind, group)
    elif generate:
        if not isinstance(generate, str):
            errors.append(invalid("metadata.generateName", generate, "must be a string"))
        else:
            masked = generate[:-1] + "a" if generate.endswith("-") else generate
            errors += [invalid("metadata.generateName", generate, m) for m in _path_segment_errors(generate) + _name_rule(group, kind)(masked)]
    else:
        errors.append(required("metadata.name", "name or generateName is required"))
    errors += _validate_namespace(meta.get("namespace"), namespaced)
    errors += _validate_labels(meta.get("labels"), "metadata.labels")
    errors += _validate_annotations(meta.get("annotations"))
    errors += _validate_owner_references(meta.get("ownerReferences"))
    errors += _validate_finalizers(meta.get("finalizers"))
    return errors


def _validate_namespace(namespace: Any, namespaced: bool | None) -> list[FieldError]:
    if namespaced is None:
        return []
    if namespaced and not namespace:
        return [required("metadata.namespace")]
    if not namespaced and namespace:
        return [forbidden("metadata.namespace", "not allowed on this type")]
    if namespace and isinstance(namespace, str):
        return [invalid("metadata.namespace", namespace, m) for m in dns1123_label_errors(namespace)]
    return []


def _validate_labels(labels: Any, field: str) -> list[FieldError]:
    if labels is None:
        return []
    if not isinstance(labels, Mapping):
        return [invalid(field, labels, "must be a map of string keys to string values")]
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors += [invalid(field, key, m) for m in qualified_name_errors(str(key))]
        if not isinstance(value, str):
            errors.append(invalid(f"{field}[{key}]", value, "must be a string"))
        else:
            errors += [invalid(field, value, m) for m in _label_value_errors(value)]
    return errors


def _validate_annotations(annotations: Any) -> list[FieldError]:
    if annotations is None:
        return []
    if not isinstance(annotations, Mapping):
        return [invalid("metadata.annotations", annotations, "must be a map of string keys to string values")]
    errors: list[FieldError] = []
    total = 0
    for key, value in annotations.items():
        errors += [invalid("metadata.annotations", key.lower() if isinstance(key, str) else key, m) for m in qualified_name_errors(str(key).lower())]
        if not isinstance(value, str):
            errors.append(invalid(f"metadata.annotations[{key}]", value, "must be a string"))
            continue
        total += len(str(key)) + len(value)
    if total > _TOTAL_ANNOTATION_SIZE:
        errors.append(FieldError("FieldValueTooLong", "metadata.annotations", detail=f"must have at most {_TOTAL_ANNOTATION_SIZE} bytes"))
    return errors


def _validate_owner_references(refs: Any) -> list[FieldError]:
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [invalid("metadata.ownerReferences", refs, "must be a list")]
    errors: list[FieldError] = []
    controllers = 0
    for i, ref in enumerate(refs):
        path = f"metadata.ownerReferences[{i}]"
        if not isinstance(ref, Mapping):
            errors.append(invalid(path, ref, "must be an object"))
            continue
        if not ref.get("apiVersion"):
            errors.append(invalid(f"{path}.apiVersion", ref.get("apiVersion") or "", "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errors.append(invalid(f"{path}.{key}", ref.get(key) or "", f"{key} must not be empty"))
        if ref.get("controller") is True:
            controllers += 1
    if controllers > 1:
        errors.append(invalid("metadata.ownerReferences", controllers, "Only one reference can have Controller set to true"))
    return errors


def _validate_finalizers(finalizers: Any) -> list[FieldError]:
    if finalizers is None:
        return []
    if not isinstance(finalizers, list):
        return [invalid("metadata.finalizers", finalizers, "must be a list of strings")]
    errors: list[FieldError] = []
    for i, item in enumerate(finalizers):
        if not isinstance(item, str):
            errors.append(invalid(f"metadata.finalizers[{i}]", item, "must be a string"))
        else:
            errors += [invalid(f"metadata.finalizers[{i}]", item, m) for m in qualified_name_errors(item)]
    return errors


_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion", "customresourcecleanup.apiextensions.k8s.io"})


def finalizer_warnings(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    """Kubernetes' warnings for finalizers a write adds (those in ``new`` but not in ``old``)
    that are neither standard nor domain-qualified with a path: such names are accepted (they
    are valid qualified names) but may clash with other finalizer writers."""
    added = _get(new, "metadata", "finalizers")
    before = set(_get(old, "metadata", "finalizers") or ()) if old is not None else set()
    if not isinstance(added, list):
        return []
    return [f'metadata.finalizers: "{f}": prefer a domain-qualified finalizer name including a path (/) to avoid '
            "accidental conflicts with other finalizer writers"
            for f in added if isinstance(f, str) and f not in before and "/" not in f and f not in _STANDARD_FINALIZERS]


# ---------------------------------------------------------------------------- built-in kinds


def _get(obj: Any, *path: str) -> Any:
    cur = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _go_map(value: Any) -> GoRaw:
    if not isinstance(value, Mapping):
        return GoRaw(json.dumps(value))
    inner = ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}" for k, v in sorted(value.items()))
    return GoRaw("map[string]string{" + inner + "}")


def _go_selector(value: Any) -> GoRaw:
    if not isinstance(value, Mapping):
        return GoRaw("(*v1.LabelSelector)(nil)")
    labels = value.get("matchLabels")
    shown = _go_map(labels) if isinstance(labels, Mapping) else "map[string]string(nil)"
    exprs = "[]v1.LabelSelectorRequirement(nil)" if not value.get("matchExpressions") else "[]v1.LabelSelectorRequirement{...}"
    return GoRaw(f"v1.LabelSelector{{MatchLabels:{shown}, MatchExpressions:{exprs}}}")


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        if not isinstance(expr, Mapping):
            return False
        key, op, values = str(expr.get("key")), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (op == "In" and labels.get(key) not in values) or (op == "NotIn" and present and labels.get(key) in values):
            return False
        if (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


def _non_negative(value: Any, field: str) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [invalid(field, value, "must be an integer")]
    return [invalid(field, value, "must be greater than or equal to 0")] if value < 0 else []


def _containers(containers: Any, field: str) -> list[FieldError]:
    if not containers:
        return [required(field)]
    if not isinstance(containers, list):
        return [invalid(field, containers, "must be a list")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        path = f"{field}[{i}]"
        if not isinstance(c, Mapping):
            errors.append(invalid(path, c, "must be an object"))
            continue
        name = c.get("name")
        if not name:
            errors.append(required(f"{path}.name"))
        elif isinstance(name, str):
            errors += [invalid(f"{path}.name", name, m) for m in dns1123_label_errors(name)]
            if name in seen:
                errors.append(duplicate(f"{path}.name", name))
            seen.add(name)
        if not c.get("image"):
            errors.append(required(f"{path}.image"))
    return errors


def _selector_errors(selector: Mapping[str, Any], field: str) -> list[FieldError]:
    """ValidateLabelSelector: matchLabels as labels, matchExpressions' keys, operators and values."""
    errors = _validate_labels(selector.get("matchLabels"), f"{field}.matchLabels")
    exprs = selector.get("matchExpressions") or []
    for i, expr in enumerate(exprs if isinstance(exprs, list) else []):
        path = f"{field}.matchExpressions[{i}]"
        if not isinstance(expr, Mapping):
            errors.append(invalid(path, expr, "must be an object"))
            continue
        op, values = expr.get("operator"), expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            errors.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist") and values:
            errors.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            errors.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        errors += [invalid(f"{path}.key", expr.get("key"), m) for m in qualified_name_errors(str(expr.get("key") or ""))]
    return errors


def _pod_template_owner(spec: Any, field: str) -> list[FieldError]:
    """ValidateDeploymentSpec/ValidateReplicaSetSpec: replicas, the selector, then (only when the
    selector parses) the template, whose labels a nil selector never matches."""
    errors: list[FieldError] = []
    selector = _get(spec, "selector")
    errors += _non_negative(_get(spec, "replicas"), f"{field}.replicas")
    selector_errors: list[FieldError] = []
    if selector is None:
        errors.append(required(f"{field}.selector"))
    elif not isinstance(selector, Mapping):
        selector_errors.append(invalid(f"{field}.selector", selector, "must be an object"))
    else:
        selector_errors = _selector_errors(selector, f"{field}.selector")
        errors += selector_errors
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errors.append(invalid(f"{field}.selector", _go_selector(selector), "empty selector is invalid for deployment"))
    if selector_errors:
        return [*errors, invalid(f"{field}.selector", _go_selector(selector), "invalid label selector")]
    raw_labels = _get(spec, "template", "metadata", "labels")
    labels = raw_labels if isinstance(raw_labels, Mapping) else {}
    selects_all = isinstance(selector, Mapping) and not (selector.get("matchLabels") or selector.get("matchExpressions"))
    if not selects_all and (selector is None or not _selector_matches(selector, labels)):
        shown = _go_map(raw_labels) if isinstance(raw_labels, Mapping) else GoRaw("map[string]string(nil)")
        errors.append(invalid(f"{field}.template.metadata.labels", shown, "`selector` does not match template `labels`"))
    errors += _validate_labels(raw_labels, f"{field}.template.labels")
    errors += _containers(_get(spec, "template", "spec", "containers"), f"{field}.template.spec.containers")
    return errors


def _validate_crd(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return [required("spec")]
    errors: list[FieldError] = []
    group = spec.get("group")
    raw_names = spec.get("names")
    names: Mapping[str, Any] = raw_names if isinstance(raw_names, Mapping) else {}
    plural, kind = names.get("plural"), names.get("kind")
    if not group:
        errors.append(required("spec.group"))
    elif isinstance(group, str):
        if "." not in group:
            errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
        errors += [invalid("spec.group", group, m) for m in dns1123_subdomain_errors(group)]
    if not plural:
        errors.append(required("spec.names.plural"))
    elif isinstance(plural, str):
        errors += [invalid("spec.names.plural", plural, m) for m in dns1123_label_errors(plural)]
    if not kind:
        errors.append(required("spec.names.kind"))
    name = _get(obj, "metadata", "name")
    if plural and group and name != f"{plural}.{group}":
        errors.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errors.append(FieldError("FieldValueNotSupported", "spec.scope", spec.get("scope") or "", 'supported values: "Cluster", "Namespaced"'))
    errors += _validate_crd_versions(spec.get("versions"))
    return errors


def _validate_crd_versions(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [invalid("spec.versions", versions if versions is not None else "null", "must have exactly one version marked as storage version")]
    errors: list[FieldError] = []
    storage = 0
    seen: set[str] = set()
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, Mapping):
            errors.append(invalid(path, version, "must be an object"))
            continue
        vname = version.get("name")
        if not vname or not isinstance(vname, str):
            errors.append(required(f"{path}.name"))
        else:
            errors += [invalid(f"{path}.name", vname, m) for m in dns1035_label_errors(vname)]
            if vname in seen:
                errors.append(FieldError("FieldValueDuplicate", f"{path}.name", vname))
            seen.add(vname)
        storage += 1 if version.get("storage") is True else 0
        schema = _get(version, "schema", "openAPIV3Schema")
        if schema is None:
            errors.append(required(f"{path}.schema.openAPIV3Schema", "schemas are required"))
        else:
            for message in check_structural(schema, f"{path}.schema.openAPIV3Schema"):
                errors.append(_structural_error(message))
    if storage != 1:
        errors.append(invalid("spec.versions", storage, "must have exactly one version marked as storage version"))
    return errors


def _structural_error(message: str) -> FieldError:
    field, _, rest = message.partition(": ")
    kind, _, detail = rest.partition(": ")
    types = {"Required value": "FieldValueRequired", "Forbidden": ERROR_FORBIDDEN}
    if kind in types:
        return FieldError(types[kind], field, detail=detail)
    return FieldError("FieldValueInvalid", field, detail=rest)


MAX_SECRET_SIZE = 1024 * 1024
"""The most a ConfigMap's or Secret's data may hold in total (core.MaxSecretSize)."""


def _data_size(obj: Mapping[str, Any], kind: str) -> int:
    """The bytes a ConfigMap's data and binaryData (or a Secret's data) hold once decoded;
    base64 values count as their decoded length."""
    total = 0
    fields = (("data", False), ("binaryData", True)) if kind == "ConfigMap" else (("data", True),)
    for field, encoded in fields:
        values = obj.get(field)
        for value in values.values() if isinstance(values, Mapping) else ():
            if isinstance(value, str):
                total += len(value) * 3 // 4 - value[-2:].count("=") if encoded else len(value.encode("utf-8", "surrogatepass"))
    return total


def validate_builtin(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """Kind-specific errors of a built-in object (metadata is ``validate_object_meta``'s job)."""
    if not isinstance(obj, Mapping):
        return [invalid("", obj, "must be an object")]
    spec = obj.get("spec")
    if (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet")):
        if not isinstance(spec, Mapping):
            return [required("spec.selector"), required("spec.template.spec.containers")]
        return _pod_template_owner(spec, "spec")
    if (group, kind) == ("", "Pod"):
        return _containers(_get(spec, "containers"), "spec.containers")
    if (group, kind) == ("", "Service"):
        if _get(spec, "type") != "ExternalName" and not _get(spec, "ports"):
            return [required("spec.ports")]
        return []
    if (group, kind) in (("", "ConfigMap"), ("", "Secret")):
        errors: list[FieldError] = []
        for field in ("data", "binaryData", "stringData"):
            values = obj.get(field)
            for key in values if isinstance(values, Mapping) else ():
                if not _RE[_CONFIG_KEY].match(str(key)) or len(str(key)) > 253:
                    errors.append(invalid(f"{field}[{key}]", key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
        if _data_size(obj, kind) > MAX_SECRET_SIZE:
            errors.append(too_long("[]" if kind == "ConfigMap" else "data", MAX_SECRET_SIZE))
        return errors
    if (group, kind) == ("coordination.k8s.io", "Lease"):
        duration = _get(spec, "leaseDurationSeconds")
        if isinstance(duration, int) and duration <= 0:
            return [invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")]
        return []
    if kind == "Event" and group in ("", "events.k8s.io"):
        return _validate_event(group, obj)
    if (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        return _validate_crd(obj)
    if group == "admissionregistration.k8s.io" and kind in ("MutatingWebhookConfiguration",
                                                             "ValidatingWebhookConfiguration"):
        return _validate_webhooks(obj.get("webhooks"))
    return _validate_by_schema(group, kind, obj)


_JOB_RESTART = ("OnFailure", "Never")


def _validate_by_schema(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """The other kinds: the upstream schema's required fields, plus the pod template rules of
    the workload kinds (containers; a Job's restartPolicy)."""
    version = str(obj.get("apiVersion") or "").rpartition("/")[2]
    errors = [required(path) for path, _ in builtins.required_errors(group, version, kind, dict(obj))]
    template: Any = None
    if (group, kind) in (("batch", "Job"), ("apps", "DaemonSet"), ("apps", "StatefulSet"), ("", "ReplicationController")):
        template, path = _get(obj, "spec", "template", "spec"), "spec.template.spec"
    elif (group, kind) == ("batch", "CronJob"):
        template, path = _get(obj, "spec", "jobTemplate", "spec", "template", "spec"), "spec.jobTemplate.spec.template.spec"
    if isinstance(template, Mapping):
        if not any(e.field.startswith(path + ".containers") for e in errors):
            errors += _containers(template.get("containers"), path + ".containers")
        if group == "batch" and template.get("restartPolicy") not in _JOB_RESTART:
            errors.append(not_supported(path + ".restartPolicy", template.get("restartPolicy") or "", _JOB_RESTART)
                          if template.get("restartPolicy") else
                          required(path + ".restartPolicy", 'valid values: "OnFailure", "Never"'))
    return errors


_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")


def _validate_webhooks(webhooks: Any) -> list[FieldError]:
    """admissionregistration/v1 rules: names, clientConfig, sideEffects, review versions, rules,
    failurePolicy, timeoutSeconds and selectors."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, hook in enumerate(webhooks if isinstance(webhooks, list) else ()):
        path = f"webhooks[{i}]"
        if not isinstance(hook, Mapping):
            errors.append(invalid(path, hook, "must be an object"))
            continue
        name = hook.get("name")
        if not name:
            errors.append(required(f"{path}.name"))
        elif str(name) in seen:
            errors.append(duplicate(f"{path}.name", name))
        else:
            seen.add(str(name))
            if str(name).count(".") < 2 or dns1123_subdomain_errors(str(name)):
                errors.append(invalid(f"{path}.name", name, "should be a domain with at least three segments separated by dots"))
        errors += _client_config(hook.get("clientConfig"), f"{path}.clientConfig")
        if hook.get("sideEffects") not in ("None", "NoneOnDryRun"):
            errors.append(not_supported(f"{path}.sideEffects", hook.get("sideEffects") or "", ["None", "NoneOnDryRun"])
                          if hook.get("sideEffects") else required(f"{path}.sideEffects"))
        versions = hook.get("admissionReviewVersions") or []
        if not versions:
            errors.append(required(f"{path}.admissionReviewVersions", "must specify one of v1, v1beta1"))
        elif not {"v1", "v1beta1"} & set(versions):
            errors.append(invalid(f"{path}.admissionReviewVersions", versions, "must include at least one of v1, v1beta1"))
        policy = hook.get("failurePolicy")
        if policy is not None and policy not in ("Ignore", "Fail"):
            errors.append(not_supported(f"{path}.failurePolicy", policy, ["Fail", "Ignore"]))
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and not 1 <= timeout <= 30:
            errors.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
        for j, rule in enumerate(hook.get("rules") or ()):
            for op in rule.get("operations") or ():
                if op not in _OPERATIONS:
                    errors.append(not_supported(f"{path}.rules[{j}].operations", op, _OPERATIONS))
        for selector in ("namespaceSelector", "objectSelector"):
            try:
                labelsel.selector_from_label_selector(hook.get(selector) or {})
            except ValueError as err:
                errors.append(invalid(f"{path}.{selector}", hook.get(selector), str(err)))
    return errors


def _client_config(config: Any, path: str) -> list[FieldError]:
    config = config if isinstance(config, Mapping) else {}
    url, service = config.get("url"), config.get("service")
    if bool(url) == bool(service):
        return [required(path, "exactly one of url or service is required")]
    if url and not str(url).startswith("https://"):
        return [invalid(f"{path}.url", url, "'https' is the only allowed URL scheme")]
    return []


def _validate_event(group: str, obj: Mapping[str, Any]) -> list[FieldError]:
    field = "involvedObject" if group == "" else "regarding"
    ref = obj.get(field)
    namespace = _get(obj, "metadata", "namespace")
    errors: list[FieldError] = []
    if group == "" and not isinstance(ref, Mapping):
        return [required(field)]
    ref_ns = _get(ref, "namespace")
    if ref_ns and namespace and ref_ns != namespace:
        errors.append(invalid(f"{field}.namespace", ref_ns, "does not match event.namespace"))
    if group == "events.k8s.io":
        for key in ("reportingController", "reportingInstance", "action", "reason"):
            if not obj.get(key):
                errors.append(required(key))
    return errors


# ---------------------------------------------------------------------------- updates

_IMMUTABLE_META = ("name", "namespace", "uid", "creationTimestamp")


def _immutable(old: Any, new: Any, field: str, shown: Any = None) -> list[FieldError]:
    if old == new:
        return []
    return [invalid(field, shown if shown is not None else (new if new is not None else ""), "field is immutable")]


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """Errors for changing immutable fields between ``old`` and ``new`` (same kind).

    Always: metadata.name, namespace, uid, creationTimestamp (an unset value in ``new`` is
    left to the server to fill, so only a different non-empty value is an error for uid and
    creationTimestamp). Per kind: Deployment/ReplicaSet ``spec.selector``; CRD ``spec.group``,
    ``spec.names.plural`` and ``spec.scope``; (Cluster)RoleBinding ``roleRef``; Secret ``type``;
    immutable ConfigMaps/Secrets keep their data.
    """
    errors: list[FieldError] = []
    for key in _IMMUTABLE_META:
        before, after = _get(old, "metadata", key), _get(new, "metadata", key)
        if key in ("uid", "creationTimestamp") and not after:
            continue
        errors += _immutable(before or "", after or "", f"metadata.{key}")
    group, kind = _group_kind(new)
    if (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet")):
        errors += _immutable(_get(old, "spec", "selector"), _get(new, "spec", "selector"), "spec.selector", _go_selector(_get(new, "spec", "selector")))
    elif (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        for path in (("spec", "group"), ("spec", "names", "plural"), ("spec", "scope")):
            errors += _immutable(_get(old, *path), _get(new, *path), ".".join(path))
    elif group == "rbac.authorization.k8s.io" and kind in ("RoleBinding", "ClusterRoleBinding") \
            and old.get("roleRef") != new.get("roleRef"):
        ref: Mapping[str, Any] = new["roleRef"] if isinstance(new.get("roleRef"), Mapping) else {}
        shown = GoRaw(f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", '
                      f'Name:"{ref.get("name", "")}"}}')
        errors.append(invalid("roleRef", shown, "cannot change roleRef"))
    if (group, kind) == ("", "Secret") and (old.get("type") or "Opaque") != (new.get("type") or "Opaque"):
        errors += _immutable(old.get("type"), new.get("type"), "type")
    if (group, kind) in (("", "ConfigMap"), ("", "Secret")) and old.get("immutable") is True:
        if new.get("immutable") is not True:
            errors.append(forbidden("immutable", "field is immutable when `immutable` is set"))
        for field in ("data", "binaryData"):
            if old.get(field) != new.get(field):
                errors.append(forbidden(field, "field is immutable when `immutable` is set"))
    return errors


def validate_ephemeral_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """Pod ephemeral containers may only be added: each needs a name and an image unique among
    the pod's containers, and existing ones may be neither changed nor removed."""
    before = [c for c in _get(old, "spec", "ephemeralContainers") or () if isinstance(c, Mapping)]
    after = _get(new, "spec", "ephemeralContainers") or []
    if not isinstance(after, list):
        return [invalid("spec.ephemeralContainers", after, "must be a list")]
    errors: list[FieldError] = []
    by_name = {c.get("name"): c for c in after if isinstance(c, Mapping)}
    for i, container in enumerate(before):
        if by_name.get(container.get("name")) != container:
            errors.append(forbidden(f"spec.ephemeralContainers[{i}]" if container.get("name") in by_name
                                    else "spec.ephemeralContainers",
                                    f'existing ephemeral containers "{container.get("name")}" may not be changed'))
    taken = {c.get("name") for key in ("initContainers", "containers")
             for c in _get(new, "spec", key) or () if isinstance(c, Mapping)}
    for i, container in enumerate(after[len(before):], start=len(before)):
        path = f"spec.ephemeralContainers[{i}]"
        if not isinstance(container, Mapping):
            errors.append(invalid(path, container, "must be an object"))
            continue
        name = container.get("name")
        if not name:
            errors.append(required(f"{path}.name"))
        elif name in taken:
            errors.append(duplicate(f"{path}.name", name))
        else:
            errors += [invalid(f"{path}.name", name, m) for m in dns1123_label_errors(str(name))]
        taken.add(name)
        if not container.get("image"):
            errors.append(required(f"{path}.image"))
    return errors

