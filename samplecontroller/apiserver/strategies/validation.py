"""Validation of the built-in kinds (their strategies' Validate), with Kubernetes' field error
messages: the kind-specific rules of Deployment, ReplicaSet, Pod, Service, ConfigMap, Secret,
Lease, Event, CustomResourceDefinition, the admission webhook configurations and the rest
(object metadata and update rules are ``apiserver.validation``'s). Returns lists of
``schema.FieldError`` and never raises on decoded JSON input, whatever its shape.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery import labels as labelsel
from samplecontroller.apimachinery.quantity import Quantity, QuantityError, parse_quantity
from samplecontroller.apiserver import builtins, cron
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
from samplecontroller.apiserver.strategies.recent import validate_recent
from samplecontroller.apiserver.validation import (
    CONFIG_KEY_RE,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    each_object,
    get_path,
    go_map,
    go_selector,
    qualified_name_errors,
    validate_labels,
)

__all__ = ["MAX_SECRET_SIZE", "validate_builtin", "validate_builtin_status", "webhook_url_errors"]


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
    for path, c in each_object(containers, field, errors):
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


def _resources(spec: Any, field: str) -> list[FieldError]:
    """The quantity rules of ValidateResourceRequirements for the spec's containers and init
    containers (pkg/apis/core/validation): every request and limit not negative; a request not
    above its limit; a request of a resource that cannot be overcommitted (an extended resource,
    hugepages-*) equal to its limit, which must be set. Resource names, integer resources and
    hugepage sizes are not checked here. The quantities are decoded (canonical) already."""
    errors: list[FieldError] = []
    for key in ("containers", "initContainers"):
        containers = get_path(spec, key)
        for i, container in enumerate(containers if isinstance(containers, list) else ()):
            resources = get_path(container, "resources")
            if isinstance(resources, Mapping):
                errors += _requirements(resources, f"{field}.{key}[{i}].resources")
    return errors


def _quantities(resources: Mapping[str, Any], key: str) -> dict[str, Quantity]:
    found = resources.get(key)
    parsed: dict[str, Quantity] = {}
    for name, value in found.items() if isinstance(found, Mapping) else ():
        try:
            parsed[str(name)] = parse_quantity(value) if isinstance(value, str) else parse_quantity("0")
        except QuantityError:
            continue  # refused when it was decoded
    return parsed


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource (no domain, or a kubernetes.io/ one) that
    is not hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def _requirements(resources: Mapping[str, Any], field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    limits, requests = _quantities(resources, "limits"), _quantities(resources, "requests")
    for name, limit in limits.items():
        if limit.sign() < 0:
            errors.append(invalid(f"{field}.limits[{name}]", limit.string(), "must be greater than or equal to 0"))
    for name, request in requests.items():
        if request.sign() < 0:
            errors.append(invalid(f"{field}.requests[{name}]", request.string(), "must be greater than or equal to 0"))
        bound = limits.get(name)
        if bound is not None:
            if request.compare(bound) != 0 and not _overcommit_allowed(name):
                errors.append(invalid(f"{field}.requests", request.string(),
                                      f"must be equal to {name} limit of {bound.string()}"))
            elif request.compare(bound) > 0:
                errors.append(invalid(f"{field}.requests", request.string(),
                                      f"must be less than or equal to {name} limit of {bound.string()}"))
        elif not _overcommit_allowed(name):
            errors.append(required(f"{field}.limits", "Limit must be set for non overcommitable resources"))
    return errors


def _selector_errors(selector: Mapping[str, Any], field: str) -> list[FieldError]:
    """ValidateLabelSelector: matchLabels as labels, matchExpressions' keys, operators and values."""
    errors = validate_labels(selector.get("matchLabels"), f"{field}.matchLabels")
    exprs = selector.get("matchExpressions") or []
    for path, expr in each_object(exprs if isinstance(exprs, list) else [], f"{field}.matchExpressions", errors):
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
    selector = get_path(spec, "selector")
    errors += _non_negative(get_path(spec, "replicas"), f"{field}.replicas")
    selector_errors: list[FieldError] = []
    if selector is None:
        errors.append(required(f"{field}.selector"))
    elif not isinstance(selector, Mapping):
        selector_errors.append(invalid(f"{field}.selector", selector, "must be an object"))
    else:
        selector_errors = _selector_errors(selector, f"{field}.selector")
        errors += selector_errors
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errors.append(invalid(f"{field}.selector", go_selector(selector), "empty selector is invalid for deployment"))
    if selector_errors:
        return [*errors, invalid(f"{field}.selector", go_selector(selector), "invalid label selector")]
    raw_labels = get_path(spec, "template", "metadata", "labels")
    labels = raw_labels if isinstance(raw_labels, Mapping) else {}
    selects_all = isinstance(selector, Mapping) and not (selector.get("matchLabels") or selector.get("matchExpressions"))
    if not selects_all and (selector is None or not _selector_matches(selector, labels)):
        shown = go_map(raw_labels) if isinstance(raw_labels, Mapping) else GoRaw("map[string]string(nil)")
        errors.append(invalid(f"{field}.template.metadata.labels", shown, "`selector` does not match template `labels`"))
    errors += validate_labels(raw_labels, f"{field}.template.labels")
    errors += _containers(get_path(spec, "template", "spec", "containers"), f"{field}.template.spec.containers")
    errors += _resources(get_path(spec, "template", "spec"), f"{field}.template.spec")
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
    name = get_path(obj, "metadata", "name")
    if plural and group and name != f"{plural}.{group}":
        errors.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errors.append(FieldError("FieldValueNotSupported", "spec.scope", spec.get("scope") or "", 'supported values: "Cluster", "Namespaced"'))
    errors += _validate_crd_versions(spec.get("versions"))
    errors += _validate_crd_conversion(spec)
    return errors


_REVIEW_VERSIONS = ("v1", "v1beta1")  # crdconversion.REVIEW_VERSIONS (this module does not import handlers' code)


def _validate_crd_conversion(spec: Mapping[str, Any]) -> list[FieldError]:
    """validateCustomResourceConversion on the v1 fields, with the paths of kube's internal type
    (``spec.conversion.webhookClientConfig``, ``spec.conversion.conversionReviewVersions``)."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, Mapping):
        return []
    path = "spec.conversion"
    strategy = conversion.get("strategy") or ""
    raw_webhook = conversion.get("webhook")
    webhook: Mapping[str, Any] = raw_webhook if isinstance(raw_webhook, Mapping) else {}
    config, versions = webhook.get("clientConfig"), webhook.get("conversionReviewVersions") or []
    errors: list[FieldError] = []
    if not strategy:
        errors.append(required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errors.append(not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    elif strategy == "Webhook" and spec.get("preserveUnknownFields") is True:
        errors.append(invalid(f"{path}.strategy", strategy, "must be None if spec.preserveUnknownFields is true"))
    if strategy != "Webhook":
        if config is not None:
            errors.append(forbidden(f"{path}.webhookClientConfig", "should not be set when strategy is not set to Webhook"))
        if versions:
            errors.append(forbidden(f"{path}.conversionReviewVersions",
                                    "should not be set when strategy is not set to Webhook"))
        return errors
    if not isinstance(config, Mapping):
        errors.append(required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook"))
    elif bool(config.get("url")) == bool(config.get("service")):
        errors.append(required(f"{path}.webhookClientConfig", "exactly one of url or service is required"))
    elif config.get("url"):
        errors += webhook_url_errors(f"{path}.webhookClientConfig.url", str(config["url"]))
    else:
        errors += _webhook_service_errors(f"{path}.webhookClientConfig.service", config["service"])
    return errors + _review_version_errors(f"{path}.conversionReviewVersions", versions)


def _review_version_errors(path: str, versions: Any) -> list[FieldError]:
    """validateConversionReviewVersions (a recognized version required)."""
    if not isinstance(versions, list) or not versions:
        return [required(path)]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errors.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(str(version))
        errors += [invalid(f"{path}[{i}]", version, m) for m in dns1035_label_errors(str(version))]
    if not seen & set(_REVIEW_VERSIONS):
        errors.append(invalid(path, GoRaw("[]string{" + ", ".join(json.dumps(str(v)) for v in versions) + "}"),
                              f"must include at least one of {', '.join(_REVIEW_VERSIONS)}"))
    return errors


_URL_FORM = "; desired format: https://host[/path]"


def webhook_url_errors(path: str, url: str) -> list[FieldError]:
    """k8s.io/apiserver's ValidateWebhookURL with https forced (admission and conversion webhooks)."""
    parsed = urllib.parse.urlsplit(url)
    errors: list[FieldError] = []
    if parsed.scheme != "https":
        errors.append(invalid(path, parsed.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not parsed.netloc.rpartition("@")[2]:
        errors.append(invalid(path, "", "host must be specified" + _URL_FORM))
    if "@" in parsed.netloc:
        errors.append(invalid(path, parsed.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parsed.fragment:
        errors.append(invalid(path, parsed.fragment, "fragments are not permitted in the URL"))
    if parsed.query:
        errors.append(invalid(path, parsed.query, "query parameters are not permitted in the URL"))
    return errors


def _webhook_service_errors(path: str, service: Any) -> list[FieldError]:
    """ValidateWebhookService: name, namespace, port and path."""
    service = service if isinstance(service, Mapping) else {}
    errors: list[FieldError] = []
    if not service.get("name"):
        errors.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        errors.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if isinstance(url_path, str) and url_path not in ("", "/"):
        if not url_path.startswith("/"):
            errors.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
        else:
            for i, segment in enumerate(url_path.strip("/").split("/")):
                if not segment:
                    errors.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
                for message in dns1123_subdomain_errors(segment) if segment else ():
                    errors.append(invalid(f"{path}.path", url_path, f"segment[{i}]: {message}"))
    return errors


def _validate_crd_versions(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [invalid("spec.versions", versions if versions is not None else "null", "must have exactly one version marked as storage version")]
    errors: list[FieldError] = []
    storage = 0
    seen: set[str] = set()
    for path, version in each_object(versions, "spec.versions", errors):
        vname = version.get("name")
        if not vname or not isinstance(vname, str):
            errors.append(required(f"{path}.name"))
        else:
            errors += [invalid(f"{path}.name", vname, m) for m in dns1035_label_errors(vname)]
            if vname in seen:
                errors.append(FieldError("FieldValueDuplicate", f"{path}.name", vname))
            seen.add(vname)
        storage += 1 if version.get("storage") is True else 0
        schema = get_path(version, "schema", "openAPIV3Schema")
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


# A Service's spec.trafficDistribution (supportedTrafficDistribution, sorted as sets.List sorts it):
# PreferClose since 1.30, PreferSameZone and PreferSameNode since 1.33 (GA in 1.35).
TRAFFIC_DISTRIBUTIONS = ("PreferClose", "PreferSameNode", "PreferSameZone")


def validate_builtin(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """Kind-specific errors of a built-in object (metadata is ``validate_object_meta``'s job),
    those of the fields added in Kubernetes 1.33-1.37 (``recent``) last."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return [invalid("", obj, "must be an object")]
    return _validate_kind(group, kind, obj) + validate_recent(group, kind, obj)


def _validate_kind(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec")
    if (group, kind) in (("apps", "Deployment"), ("apps", "ReplicaSet")):
        if type(spec) is not dict and not isinstance(spec, Mapping):
            return [required("spec.selector"), required("spec.template.spec.containers")]
        return _pod_template_owner(spec, "spec")
    if (group, kind) == ("", "Pod"):
        return _containers(get_path(spec, "containers"), "spec.containers") + _resources(spec, "spec")
    if (group, kind) == ("", "Service"):
        found: list[FieldError] = []
        if get_path(spec, "type") != "ExternalName" and get_path(spec, "clusterIP") != "None" \
                and not get_path(spec, "ports"):
            found.append(required("spec.ports"))
        distribution = get_path(spec, "trafficDistribution")
        if distribution is not None and distribution not in TRAFFIC_DISTRIBUTIONS:
            found.append(not_supported("spec.trafficDistribution", distribution, TRAFFIC_DISTRIBUTIONS))
        return found
    if (group, kind) in (("", "ConfigMap"), ("", "Secret")):
        errors: list[FieldError] = []
        for field in ("data", "binaryData", "stringData"):
            values = obj.get(field)
            for key in values if isinstance(values, Mapping) else ():
                if not CONFIG_KEY_RE.match(str(key)) or len(str(key)) > 253:
                    errors.append(invalid(f"{field}[{key}]", key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
        if _data_size(obj, kind) > MAX_SECRET_SIZE:
            errors.append(too_long("[]" if kind == "ConfigMap" else "data", MAX_SECRET_SIZE))
        return errors + (_secret_type_errors(obj) if kind == "Secret" else [])
    if (group, kind) == ("coordination.k8s.io", "Lease"):
        duration = get_path(spec, "leaseDurationSeconds")
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


# The status counts of the kinds whose status strategy validates the status alone, in the order
# their Validate*Status checks them (pkg/apis/apps/validation ValidateDeploymentStatus and
# ValidateReplicaSetStatus, pkg/apis/core/validation ValidateReplicationControllerStatus), and the
# counts that may not exceed another one: (count, bound, message).
_DEPLOYMENT_COUNTS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                      "unavailableReplicas", "terminatingReplicas")
_REPLICA_SET_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration",
                       "terminatingReplicas")
_RC_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
_BEYOND_REPLICAS = "cannot be greater than status.replicas"
_DEPLOYMENT_BOUNDS = (("updatedReplicas", "replicas", _BEYOND_REPLICAS), ("readyReplicas", "replicas", _BEYOND_REPLICAS),
                      ("availableReplicas", "replicas", _BEYOND_REPLICAS),
                      ("availableReplicas", "readyReplicas", "cannot be greater than readyReplicas"))
_REPLICA_SET_BOUNDS = (("fullyLabeledReplicas", "replicas", _BEYOND_REPLICAS),
                       ("readyReplicas", "replicas", _BEYOND_REPLICAS),
                       ("availableReplicas", "replicas", _BEYOND_REPLICAS),
                       ("availableReplicas", "readyReplicas", "cannot be greater than readyReplicas"))
_STATUS_RULES: dict[tuple[str, str], tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]] = {
    ("apps", "Deployment"): (_DEPLOYMENT_COUNTS, _DEPLOYMENT_BOUNDS),
    ("apps", "ReplicaSet"): (_REPLICA_SET_COUNTS, _REPLICA_SET_BOUNDS),
    ("", "ReplicationController"): (_RC_COUNTS, _REPLICA_SET_BOUNDS),
}


def _count(status: Mapping[str, Any], key: str) -> int:
    """A status count as Go holds it: an absent (or undecodable) one is 0."""
    value = status.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def validate_builtin_status(group: str, kind: str, obj: Mapping[str, Any],
                            old: Mapping[str, Any]) -> list[FieldError] | None:
    """The errors of a status write of a built-in object (``obj``, replacing ``old``) as the
    kind's status strategy finds them beyond the object-meta rules, or None for a kind this
    module knows no status rules of (its caller validates the whole object, which is stricter).

    Deployment (ValidateDeploymentStatusUpdate), ReplicaSet (ValidateReplicaSetStatusUpdate) and
    ReplicationController (ValidateReplicationControllerStatusUpdate): the counts are not
    negative, none exceeds ``status.replicas`` (nor ``availableReplicas`` ``readyReplicas``), a
    Deployment's ``collisionCount`` is not negative and never decremented. The spec is not
    validated: the status strategy keeps the stored one."""
    rules = _STATUS_RULES.get((group, kind))
    if rules is None:
        return None
    raw_status = obj.get("status")
    status: Mapping[str, Any] = raw_status if isinstance(raw_status, Mapping) else {}
    counts, bounds = rules
    errors: list[FieldError] = []
    for key in counts:
        errors += _non_negative(status.get(key), f"status.{key}")
    if kind == "Deployment":
        errors += _non_negative(status.get("collisionCount"), "status.collisionCount")
    for key, bound, message in bounds:
        if _count(status, key) > _count(status, bound):
            errors.append(invalid(f"status.{key}", _count(status, key), message))
    if kind == "Deployment":
        before, after = get_path(old, "status", "collisionCount"), status.get("collisionCount")
        if isinstance(before, int) and (not isinstance(after, int) or after < before):
            errors.append(invalid("status.collisionCount", after if isinstance(after, int) else 0,
                                  "cannot be decremented"))
    return errors


_REDACTED = "<secret contents redacted>"


def _go_json_error(raw: bytes) -> str | None:
    """What Go's ``json.Unmarshal`` into a ``map[string]interface{}`` says about ``raw`` (None
    when it is a JSON object)."""
    try:
        value = json.loads(raw)
    except UnicodeDecodeError:
        return "invalid character looking for beginning of value"
    except json.JSONDecodeError as err:
        if not raw.strip() or err.pos >= len(raw.rstrip()):
            return "unexpected end of JSON input"
        char = raw.decode("utf-8", "replace")[err.pos]
        return f"invalid character '{char}' looking for beginning of value"
    if isinstance(value, dict):
        return None
    go_type = {bool: "bool", str: "string", list: "array", int: "number", float: "number"}.get(type(value))
    return f"json: cannot unmarshal {go_type or 'null'} into Go value of type map[string]interface {{}}" \
        if value is not None else None


def _secret_type_errors(obj: Mapping[str, Any]) -> list[FieldError]:
    """ValidateSecret's per-type rules: the keys each built-in Secret type requires (well-formed
    JSON for the docker config types), the service account name of a token Secret."""
    raw_data = obj.get("data")
    data: Mapping[str, Any] = raw_data if isinstance(raw_data, Mapping) else {}
    secret_type = obj.get("type")

    def decoded(key: str) -> bytes:
        try:
            return base64.b64decode(str(data.get(key) or ""), validate=False)
        except (ValueError, TypeError):
            return b""

    if secret_type == "kubernetes.io/service-account-token":
        annotations = get_path(obj, "metadata", "annotations")
        if not (annotations.get(_SA_NAME_KEY) if isinstance(annotations, Mapping) else None):
            return [required(f"metadata.annotations[{_SA_NAME_KEY}]")]
    elif secret_type in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if secret_type == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [required(f"data[{key}]")]
        problem = _go_json_error(decoded(key))
        if problem is not None:
            return [invalid(f"data[{key}]", _REDACTED, problem)]
    elif secret_type == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif secret_type == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            return [required("data[ssh-privatekey]")]
    elif secret_type == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []


_SA_NAME_KEY = "kubernetes.io/service-account.name"


def _cron_job_errors(obj: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCronJobSpec's schedule and time zone rules (robfig/cron's parser: ``cron``)."""
    schedule, time_zone = get_path(obj, "spec", "schedule"), get_path(obj, "spec", "timeZone")
    errors: list[FieldError] = []
    if isinstance(schedule, str) and schedule:
        problem = cron.schedule_error(schedule)
        if problem is not None:
            errors.append(invalid("spec.schedule", schedule, problem))
        if "TZ" in schedule:
            errors.append(invalid("spec.schedule", schedule,
                                  "cannot use both timeZone field and TZ or CRON_TZ in schedule" if time_zone is not None
                                  else "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    if isinstance(time_zone, str):
        if not time_zone:
            errors.append(invalid("spec.timeZone", time_zone, "timeZone must be nil or non-empty string"))
        elif time_zone.lower() == "local":
            errors.append(invalid("spec.timeZone", time_zone,
                                  "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
        else:
            problem = cron.timezone_error(time_zone)
            if problem is not None:
                errors.append(invalid("spec.timeZone", time_zone, problem))
    return errors


_JOB_RESTART = ("OnFailure", "Never")


def _validate_by_schema(group: str, kind: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """The other kinds: the upstream schema's required fields, plus the pod template rules of
    the workload kinds (containers; a Job's restartPolicy)."""
    version = str(obj.get("apiVersion") or "").rpartition("/")[2]
    errors = [required(path) for path, _ in builtins.required_errors(group, version, kind, dict(obj))]
    template: Any = None
    if (group, kind) in (("batch", "Job"), ("apps", "DaemonSet"), ("apps", "StatefulSet"), ("", "ReplicationController")):
        template, path = get_path(obj, "spec", "template", "spec"), "spec.template.spec"
    elif (group, kind) == ("batch", "CronJob"):
        template, path = get_path(obj, "spec", "jobTemplate", "spec", "template", "spec"), "spec.jobTemplate.spec.template.spec"
        errors += _cron_job_errors(obj)
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
    for path, hook in each_object(webhooks if isinstance(webhooks, list) else (), "webhooks", errors):
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
    if url:
        return webhook_url_errors(f"{path}.url", str(url))
    return _webhook_service_errors(f"{path}.service", service)


def _validate_event(group: str, obj: Mapping[str, Any]) -> list[FieldError]:
    field = "involvedObject" if group == "" else "regarding"
    ref = obj.get(field)
    namespace = get_path(obj, "metadata", "namespace")
    errors: list[FieldError] = []
    if group == "" and type(ref) is not dict and not isinstance(ref, Mapping):
        return [required(field)]
    ref_ns = get_path(ref, "namespace")
    if ref_ns and namespace and ref_ns != namespace:
        errors.append(invalid(f"{field}.namespace", ref_ns, "does not match event.namespace"))
    if group == "events.k8s.io":
        for key in ("reportingController", "reportingInstance", "action", "reason"):
            if not obj.get(key):
                errors.append(required(key))
    return errors
