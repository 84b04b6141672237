"""Validation of object metadata and of updates, with Kubernetes' field error messages.

Every function returns a list of ``schema.FieldError`` (empty when valid) and never raises on
decoded JSON input, whatever its shape. Rules follow k8s.io/apimachinery's validation
(names, labels, annotations, owner references, finalizers, immutable fields on update); the
kind-specific rules are ``strategies.validation``'s.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from samplecontroller.apiserver.ipvalidation import ip_errors
from samplecontroller.apiserver.objects import deep_get as get_path
from samplecontroller.apiserver.schema import (
    FieldError,
    GoRaw,
    duplicate,
    forbidden,
    invalid,
    required,
)

__all__ = [
    "CONFIG_KEY_RE",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "each_object",
    "finalizer_warnings",
    "get_path",
    "go_map",
    "go_selector",
    "label_value_errors",
    "path_segment_errors",
    "qualified_name_errors",
    "validate_annotations",
    "validate_ephemeral_update",
    "validate_labels",
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
_RE = {p: re.compile("^" + p + r"\Z") for p in (_DNS1123_LABEL, _DNS1123_SUBDOMAIN, _DNS1035_LABEL, _QUALIFIED_NAME, _LABEL_VALUE, _CONFIG_KEY)}
_TOTAL_ANNOTATION_SIZE = 256 * 1024
_PLAIN_QUALIFIED = re.compile(_QUALIFIED_NAME)
"""A qualified name without prefix, matched whole (``fullmatch``: no trailing newline passes)."""
CONFIG_KEY_RE = _RE[_CONFIG_KEY]
"""A ConfigMap or Secret key."""

# kinds whose names are DNS-1123 labels / DNS-1035 labels rather than subdomains
_LABEL_NAMED = {("", "Namespace")}
_DNS1035_NAMED = {("", "Service")}


_MEMO_LIMIT = 8192
"""How many valid values each ``_remember_valid`` check keeps (the set starts again when full)."""


def _remember_valid(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """``check``, answering at once for a value it found valid before: the label keys and values,
    annotation keys and names of every write are checked again, mostly the same few strings."""
    valid: set[str] = set()

    @functools.wraps(check)
    def checked(value: str) -> list[str]:
        if isinstance(value, str) and value in valid:
            return []
        errors = check(value)
        if not errors and isinstance(value, str):
            if len(valid) >= _MEMO_LIMIT:
                valid.clear()
            valid.add(value)
        return errors
    return checked


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


@_remember_valid
def dns1123_label_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 label (names of namespaces)."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_DNS1123_LABEL].match(value):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            f"and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{_DNS1123_LABEL}')"
        )
    return errs


@_remember_valid
def dns1123_subdomain_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 subdomain (most object names)."""
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _RE[_DNS1123_SUBDOMAIN].match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            f"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN}')"
        )
    return errs


@_remember_valid
def dns1035_label_errors(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1035 label (names of services)."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_DNS1035_LABEL].match(value):
        errs.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
            f"character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '{_DNS1035_LABEL}')"
        )
    return errs


@_remember_valid
def qualified_name_errors(value: str) -> list[str]:
    """Messages for a label/annotation key that is not a qualified name (``prefix/name``)."""
    if len(value) <= 63 and _PLAIN_QUALIFIED.fullmatch(value):
        return []  # a name without a prefix, valid (what the checks below would find: nothing)
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


@_remember_valid
def _label_value_errors(value: str) -> list[str]:
    if len(value) <= 63 and _PLAIN_QUALIFIED.fullmatch(value):
        return []
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_LABEL_VALUE].match(value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
            f"start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE}')"
        )
    return errs


label_value_errors = _label_value_errors
"""Messages for a value that is not a label value (also the CEL format library's ``labelValue``)."""


def _path_segment_errors(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    if "/" not in name and "%" not in name:
        return []
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


path_segment_errors = _path_segment_errors
"""Messages for a name that is not a path segment (pathvalidation.IsValidPathSegmentName)."""


def _no_rule(name: str) -> list[str]:
    return []


# kinds with a name rule of their own: an IPAddress is named by its canonical IP
# (ValidateIPAddressName); a ClusterTrustBundle's rule depends on its signer name (its strategy
# checks it: ``strategies.trustbundles``)
_OWN_NAME_RULES: dict[tuple[str, str], Callable[[str], list[str]]] = {
    ("networking.k8s.io", "IPAddress"): ip_errors,
    ("certificates.k8s.io", "ClusterTrustBundle"): _no_rule,
}


@functools.lru_cache(maxsize=1024)
def _name_rule(group: str, kind: str) -> Any:
    if group == "rbac.authorization.k8s.io":  # ValidateRBACName: any valid path segment (system:masters)
        return _no_rule
    if (group, kind) in _LABEL_NAMED:
        return dns1123_label_errors
    if (group, kind) in _OWN_NAME_RULES:
        return _OWN_NAME_RULES[(group, kind)]
    if (group, kind) in _DNS1035_NAMED:
        return dns1035_label_errors
    return dns1123_subdomain_errors


def validate_name(name: Any, namespaced: bool = True, kind: str = "", group: str = "", field: str = "metadata.name") -> list[FieldError]:
    """Errors for an object name of ``kind`` (empty list if valid).

    Namespaces use RFC 1123 labels, Services RFC 1035 labels, RBAC kinds any path segment
    (``system:basic-user``), every other kind (custom
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
    if type(meta) is not dict and not isinstance(meta, Mapping):
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
    errors += validate_labels(meta.get("labels"), "metadata.labels")
    errors += validate_annotations(meta.get("annotations"))
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
        messages = dns1123_label_errors(namespace)
        return [invalid("metadata.namespace", namespace, m) for m in messages] if messages else []
    return []


def validate_labels(labels: Any, field: str) -> list[FieldError]:
    if labels is None:
        return []
    if type(labels) is not dict and not isinstance(labels, Mapping):
        return [invalid(field, labels, "must be a map of string keys to string values")]
    errors: list[FieldError] = []
    for key, value in labels.items():
        messages = qualified_name_errors(str(key))
        if messages:
            errors += [invalid(field, key, m) for m in messages]
        if not isinstance(value, str):
            errors.append(invalid(f"{field}[{key}]", value, "must be a string"))
        else:
            messages = _label_value_errors(value)
            if messages:
                errors += [invalid(field, value, m) for m in messages]
    return errors


def validate_annotations(annotations: Any, field: str = "metadata.annotations") -> list[FieldError]:
    """ValidateAnnotations: qualified-name keys, string values, 256 KiB in all."""
    if annotations is None:
        return []
    if type(annotations) is not dict and not isinstance(annotations, Mapping):
        return [invalid(field, annotations, "must be a map of string keys to string values")]
    errors: list[FieldError] = []
    total = 0
    for key, value in annotations.items():
        errors += [invalid(field, key.lower() if isinstance(key, str) else key, m) for m in qualified_name_errors(str(key).lower())]
        if not isinstance(value, str):
            errors.append(invalid(f"{field}[{key}]", value, "must be a string"))
            continue
        total += len(str(key)) + len(value)
    if total > _TOTAL_ANNOTATION_SIZE:
        errors.append(FieldError("FieldValueTooLong", field, detail=f"must have at most {_TOTAL_ANNOTATION_SIZE} bytes"))
    return errors


def _validate_owner_references(refs: Any) -> list[FieldError]:
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [invalid("metadata.ownerReferences", refs, "must be a list")]
    errors: list[FieldError] = []
    controllers = 0
    for path, ref in each_object(refs, "metadata.ownerReferences", errors):
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
    added = get_path(new, "metadata", "finalizers")
    before = set(get_path(old, "metadata", "finalizers") or ()) if old is not None else set()
    if not isinstance(added, list):
        return []
    return [f'metadata.finalizers: "{f}": prefer a domain-qualified finalizer name including a path (/) to avoid '
            "accidental conflicts with other finalizer writers"
            for f in added if isinstance(f, str) and f not in before and "/" not in f and f not in _STANDARD_FINALIZERS]


# ---------------------------------------------------------------------------- helpers of the kinds' rules


def each_object(items: Iterable[Any], field: str, errors: list[FieldError],
                start: int = 0) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(f"{field}[i]", item)`` for each item that is an object, ``i`` counted from ``start``;
    for any other item an Invalid "must be an object" error is appended to ``errors`` instead."""
    for i, item in enumerate(items, start=start):
        path = f"{field}[{i}]"
        if isinstance(item, Mapping):
            yield path, item
        else:
            errors.append(invalid(path, item, "must be an object"))


def go_map(value: Any) -> GoRaw:
    if not isinstance(value, Mapping):
        return GoRaw(json.dumps(value))
    inner = ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}" for k, v in sorted(value.items()))
    return GoRaw("map[string]string{" + inner + "}")


def go_selector(value: Any) -> GoRaw:
    if not isinstance(value, Mapping):
        return GoRaw("(*v1.LabelSelector)(nil)")
    labels = value.get("matchLabels")
    shown = go_map(labels) if isinstance(labels, Mapping) else "map[string]string(nil)"
    exprs = "[]v1.LabelSelectorRequirement(nil)" if not value.get("matchExpressions") else "[]v1.LabelSelectorRequirement{...}"
    return GoRaw(f"v1.LabelSelector{{MatchLabels:{shown}, MatchExpressions:{exprs}}}")


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
        before, after = get_path(old, "metadata", key), get_path(new, "metadata", key)
        if key in ("uid", "creationTimestamp") and not after:
            continue
        errors += _immutable(before or "", after or "", f"metadata.{key}")
    group, kind = _group_kind(new)
    if (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet")):
        selector = get_path(new, "spec", "selector")
        if get_path(old, "spec", "selector") != selector:  # (Go's rendering of it only for the error)
            errors += _immutable(get_path(old, "spec", "selector"), selector, "spec.selector", go_selector(selector))
    elif (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        for path in (("spec", "group"), ("spec", "names", "plural"), ("spec", "scope")):
            errors += _immutable(get_path(old, *path), get_path(new, *path), ".".join(path))
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
    before = [c for c in get_path(old, "spec", "ephemeralContainers") or () if isinstance(c, Mapping)]
    after = get_path(new, "spec", "ephemeralContainers") or []
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
             for c in get_path(new, "spec", key) or () if isinstance(c, Mapping)}
    for path, container in each_object(after[len(before):], "spec.ephemeralContainers", errors, len(before)):
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

