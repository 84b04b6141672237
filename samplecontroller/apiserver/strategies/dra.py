"""resource.k8s.io/v1 kinds' validation beyond their schema, as kube-apiserver 1.37's
pkg/apis/resource/validation/validation.go does it (its hand-written rules; the ones it marks
"covered by declarative validation" are still returned by kube-apiserver, whose
DeclarativeValidationTakeover gate is off):

- ResourceClaim and ResourceClaimTemplate (``spec.devices`` / ``spec.spec.devices``): requests
  (at most 32, unique DNS-label names, exactly one of ``exactly``/``firstAvailable``, at most 8
  unique sub-requests), ``deviceClassName`` (required, a DNS subdomain), selectors (at most 32,
  ``cel`` required, an expression of at most 10 KiB), ``allocationMode``/``count``,
  tolerations, constraints (request references, fully qualified attribute names), config
  (request references, the opaque driver and its JSON-object ``parameters`` of at most 10 KiB);
  on update the spec is immutable (``field is immutable``; kube checks only that);
- a ResourceClaim's status: ``reservedFor`` (at most 256, unique uids, resource/name/uid
  required, only with an allocation, no new entries once the claim is being deleted), a new
  ``allocation``'s results, config and node selector, an existing one immutable, ``devices``
  (allocated ones, names, conditions count, data, network data sizes);
- DeviceClass: selectors, config, ``extendedResourceName``;
- ResourceSlice: driver, pool, exactly one of ``nodeName``/``nodeSelector``/``allNodes``/
  ``perDeviceNodeSelection`` (node selectors checked), devices (at most 128, or 64 with taints,
  counters or list attributes; unique DNS-label names, attributes' qualified names and single
  values, at most 32 attributes and capacities, capacity request policies (only with
  ``allowMultipleAllocations``), taints, counter consumption, per-device node selection,
  binding conditions, node allocatable resources), shared counter sets, the partition type
  attribute, ``skipNodeOperations``; on update ``driver``, ``pool.name`` and ``nodeName`` are
  immutable, unchanged capacity and taints are not checked again;
- DeviceTaintRule: the selector's driver, pool and device names, the taint's key, value and
  effect (not its status).

CEL selectors are compiled (``Options.compile_minor``) in an environment whose ``device`` is dyn.
Not ported (accepted here, maybe refused by kube): the typed ``device`` of kube's DRA CEL
environment and the selectors' cost limit, derived attributes (alpha, dropped at 1.37), label
values of node selector requirements, fractional capacity request ranges
(DRAFractionalCapacityRange, taken as off), list-typed attribute value counts, node
allocatable resources' names, a partition type attribute's name format (declarative-only in
kube); in a status's ``devices``, ``shareID`` formats, conditions' contents and
``networkData.ips`` addresses.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from samplecontroller.apimachinery.quantity import Quantity, parse_quantity
from samplecontroller.apiserver.objects import as_list as _list
from samplecontroller.apiserver.objects import as_mapping as _map
from samplecontroller.apiserver.objects import as_str as _str
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import (
    ERROR_NOT_FOUND,
    ERROR_REQUIRED,
    FieldError,
    GoRaw,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.strategies.recent import gate_enabled
from samplecontroller.apiserver.validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
    validate_annotations,
    validate_labels,
)

__all__ = ["DeviceClassStrategy", "DeviceTaintRuleStrategy", "Options", "ResourceClaimStrategy",
           "ResourceClaimTemplateStrategy", "ResourceSliceStrategy", "validate_device_class",
           "validate_device_taint_rule", "validate_resource_claim", "validate_resource_claim_status",
           "validate_resource_claim_template", "validate_resource_slice"]

Errors = list[FieldError]

# k8s.io/api/resource/v1 (types.go) limits
DEVICE_REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
SELECTORS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
ALLOCATION_RESULTS_MAX = 32
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESERVED_FOR_MAX = 256
POOL_NAME_MAX_LENGTH = 253
SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64
SLICE_MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_ATTRIBUTES_AND_CAPACITIES = 32
ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_TAINTS_MAX = 16
BINDING_CONDITIONS_MAX = 4
MAX_DOMAIN_LENGTH = 63
MAX_ID_LENGTH = 32
CAPACITY_MAX_OPTIONS = 10
DEVICE_STATUS_MAX_CONDITIONS = 8
DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
INTERFACE_NAME_MAX_LENGTH = 256
HARDWARE_ADDRESS_MAX_LENGTH = 128
NETWORK_MAX_IPS = 16
_KEY_TRUNCATE = MAX_DOMAIN_LENGTH + 1 + MAX_ID_LENGTH

_REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
_C_IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(f"^{_C_IDENTIFIER}\\Z")
_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER_RE = re.compile(f"^{_NUM}\\.{_NUM}\\.{_NUM}(-{_PRE}(\\.{_PRE})*)?(\\+{_BUILD}(\\.{_BUILD})*)?\\Z")
_SEMVER = "must be a string compatible with semver.org spec 2.0.0"
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sets.List: sorted
_TOLERATION_OPERATORS = ("Equal", "Exists")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _items(items: list[Any], max_size: int, check: Callable[[Mapping[str, Any], str], Errors], path: str,
           key: Callable[[Any], Any] | None = None) -> Errors:
    """validateSlice (``key`` None) and validateSet: too many items short-circuit; each item's
    errors, then a Duplicate at the index of each repeated key."""
    if max_size >= 0 and len(items) > max_size:
        return [too_many(path, len(items), max_size)]
    errors: Errors = []
    for i, item in enumerate(items):
        errors += check(item if isinstance(item, Mapping) else {}, f"{path}[{i}]")
    if key is not None:
        seen: set[Any] = set()
        for i, item in enumerate(items):
            k = key(item)
            if k in seen:
                errors.append(duplicate(f"{path}[{i}]", k))
            seen.add(k)
    return errors


def _strings(items: list[Any], max_size: int, check: Callable[[str, str], Errors], path: str,
             unique: bool = True) -> Errors:
    """validateSet/validateSlice of strings."""
    if max_size >= 0 and len(items) > max_size:
        return [too_many(path, len(items), max_size)]
    errors: Errors = []
    for i, item in enumerate(items):
        errors += check(_str(item), f"{path}[{i}]")
    if unique:
        seen: set[str] = set()
        for i, item in enumerate(items):
            if _str(item) in seen:
                errors.append(duplicate(f"{path}[{i}]", _str(item)))
            seen.add(_str(item))
    return errors


def _go_slice(value: Any, type_name: str, item: Callable[[Any], str] = lambda v: json.dumps(_str(v))) -> GoRaw:
    """Go's ``%#v`` of a slice (a field error's value): ``[]string(nil)``, ``[]string{"a"}``."""
    if not isinstance(value, list):
        return GoRaw(f"[]{type_name}(nil)")
    return GoRaw(f"[]{type_name}{{" + ", ".join(item(v) for v in value) + "}")


def _go_requirement(req: Any) -> str:
    req = _map(req)
    return (f"core.NodeSelectorRequirement{{Key:{json.dumps(_str(req.get('key')))}, "
            f"Operator:{json.dumps(_str(req.get('operator')))}, Values:{_go_slice(req.get('values'), 'string')}}}")


def _go_term(term: Any) -> str:
    term = _map(term)
    return (f"core.NodeSelectorTerm{{MatchExpressions:"
            f"{_go_slice(term.get('matchExpressions'), 'core.NodeSelectorRequirement', _go_requirement)}, "
            f"MatchFields:{_go_slice(term.get('matchFields'), 'core.NodeSelectorRequirement', _go_requirement)}}}")


def _key(item: Any, name: str = "name") -> str:
    return _str(item.get(name)) if isinstance(item, Mapping) else ""


def _truncate(key: str, max_len: int) -> str:
    """truncateIfTooLong: a long map key shown in a field path, cut in the middle."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[:(remaining + 1) // 2] + "..." + key[len(key) - remaining // 2:]


def _label(value: str, path: str) -> Errors:
    """ValidateDNS1123Label (request, device and counter names)."""
    return [invalid(path, value, m) for m in dns1123_label_errors(value)]


def _subdomain(value: str, path: str) -> Errors:
    return [invalid(path, value, m) for m in dns1123_subdomain_errors(value)]


def _driver(name: str, path: str) -> Errors:
    """ValidateCSIDriverName (drivers and attribute domains)."""
    errors: Errors = []
    if not name:
        errors.append(required(path))
    if len(name) > 63:
        errors.append(too_long(path, 63))
    return errors + [invalid(path, name, m) for m in dns1123_subdomain_errors(name.lower())]


def _pool_name(name: str, path: str) -> Errors:
    if not name:
        return [required(path)]
    errors: Errors = [too_long(path, POOL_NAME_MAX_LENGTH)] if len(name) > POOL_NAME_MAX_LENGTH else []
    for part in name.split("/"):
        errors += _subdomain(part, path)
    return errors


def _label_name(key: str, path: str) -> Errors:
    """metav1validation.ValidateLabelName."""
    return [invalid(path, key, m) for m in qualified_name_errors(key)]


def _label_value(value: str, path: str) -> Errors:
    return [invalid(path, value, m) for m in label_value_errors(value)]


def _c_identifier(value: str, path: str) -> Errors:
    errors: Errors = [too_long(path, MAX_ID_LENGTH)] if len(value) > MAX_ID_LENGTH else []
    if not _C_IDENTIFIER_RE.match(value):
        errors.append(invalid(path, value, "a valid C identifier must start with alphabetic character or '_', "
                              "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
                              f"'MY_NAME',  or 'MyName', regex used for validation is '{_C_IDENTIFIER}')"))
    return errors


def _qualified_name(name: str, path: str) -> Errors:
    """validateQualifiedName: an attribute or capacity name, ``[domain/]identifier``."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) > 2:
        return [invalid(path, name, "must not contain more than one slash")]
    domain, ident = parts
    errors = [invalid(path, "", "the domain must not be empty")] if not domain else _driver(domain, path)
    return errors + ([invalid(path, "", "the name must not be empty")] if not ident else _c_identifier(ident, path))


def _fully_qualified_name(name: str, path: str) -> Errors:
    errors = _qualified_name(name, path)
    if "/" not in name:
        errors.append(invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
    return errors


# ---------------------------------------------------------------------------- claims


class _RequestNames:
    """gatherRequestNames: request name -> its sub-request names (None for ``exactly``)."""

    def __init__(self, devices: Mapping[str, Any]) -> None:
        self.names: dict[str, set[str] | None] = {}
        for request in _list(devices.get("requests")):
            request = _map(request)
            subs = _list(request.get("firstAvailable"))
            self.names[_str(request.get("name"))] = {_key(s) for s in subs} if subs else None

    def has(self, ref: str) -> bool:
        segments = ref.split("/")
        if len(segments) > 2 or segments[0] not in self.names:
            return False
        subs = self.names[segments[0]]
        return len(segments) == 1 or (subs is not None and segments[1] in subs)


def _request_ref(name: str, path: str, names: _RequestNames) -> Errors:
    segments = name.split("/")
    if len(segments) > 2:
        return [invalid(path, name, _REQUEST_REF)]
    errors: Errors = []
    for segment in segments:
        errors += _label(segment, path)
    if not names.has(name):
        errors.append(invalid(path, name, _REQUEST_REF))
    return errors


def _device_class_name(name: str, path: str) -> Errors:
    return [required(path)] if not name else _subdomain(name, path)


@dataclass(frozen=True)
class Options:
    """What validation depends on beyond the object: DRAConsumableCapacity (on from 1.36;
    ``consumable``) and the compatibility version whose CEL environment compiles new selector
    expressions (``compile_minor``: None for stored ones, which kube does not compile again)."""

    consumable: bool = True
    compile_minor: int | None = None


_NO_COMPILE = Options()


def _selector(selector: Mapping[str, Any], path: str, opts: Options) -> Errors:
    cel = selector.get("cel")
    if not isinstance(cel, Mapping):
        return [required(f"{path}.cel")]
    expression = _str(cel.get("expression"))
    if len(expression) > CEL_EXPRESSION_MAX_LENGTH:
        return [too_long(f"{path}.cel.expression", CEL_EXPRESSION_MAX_LENGTH)]
    if opts.compile_minor is None:
        return []
    return _compile_selector(expression, f"{path}.cel.expression", opts.compile_minor)


def _selectors(selectors: Any, path: str, opts: Options) -> Errors:
    return _items(_list(selectors), SELECTORS_MAX, lambda sel, p: _selector(sel, p, opts), path)


def _allocation_mode(mode: Any, count: Any, path: str) -> Errors:
    if mode == "All":
        if _int(count) != 0:
            return [invalid(f"{path}.count", _int(count), "must not be specified when allocationMode is 'All'")]
        return []
    if mode == "ExactCount":
        return [] if _int(count) > 0 else [invalid(f"{path}.count", _int(count), "must be greater than zero")]
    return [not_supported(f"{path}.allocationMode", _str(mode), ("All", "ExactCount"))]


def _toleration(toleration: Mapping[str, Any], path: str) -> Errors:
    errors: Errors = []
    key, value, op, effect = (_str(toleration.get(k)) for k in ("key", "value", "operator", "effect"))
    if key:
        errors += _label_name(key, f"{path}.key")
    if op == "Exists":
        if value:
            errors.append(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errors += _label_value(value, f"{path}.value")
    elif not op:
        errors.append(required(f"{path}.operator"))
    else:
        errors.append(not_supported(f"{path}.operator", op, _TOLERATION_OPERATORS))
    if effect and effect not in _TAINT_EFFECTS:
        errors.append(not_supported(f"{path}.effect", effect, _TAINT_EFFECTS))
    return errors


def _exact_or_sub(request: Mapping[str, Any], path: str, opts: Options) -> Errors:
    """validateExactDeviceRequest / the body of validateDeviceSubRequest."""
    errors = _device_class_name(_str(request.get("deviceClassName")), f"{path}.deviceClassName")
    errors += _selectors(request.get("selectors"), f"{path}.selectors", opts)
    errors += _allocation_mode(request.get("allocationMode"), request.get("count"), path)
    for i, toleration in enumerate(_list(request.get("tolerations"))):
        errors += _toleration(_map(toleration), f"{path}.tolerations[{i}]")
    return errors


def _sub_request(sub: Mapping[str, Any], path: str, opts: Options) -> Errors:
    return _label(_str(sub.get("name")), f"{path}.name") + _exact_or_sub(sub, path, opts)


def _request(request: Mapping[str, Any], path: str, opts: Options) -> Errors:
    errors = _label(_str(request.get("name")), f"{path}.name")
    first = _list(request.get("firstAvailable"))
    exactly = request.get("exactly")
    if not first and exactly is None:
        errors.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif first and exactly is not None:
        errors.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, "
                                          "but multiple fields are set"))
    elif first:
        errors += _items(first, FIRST_AVAILABLE_MAX, lambda sub, p: _sub_request(sub, p, opts),
                         f"{path}.firstAvailable", _key)
    else:
        errors += _exact_or_sub(_map(exactly), f"{path}.exactly", opts)
    return errors


def _constraint(constraint: Mapping[str, Any], path: str, names: _RequestNames, opts: Options) -> Errors:
    errors = _strings(_list(constraint.get("requests")), DEVICE_REQUESTS_MAX,
                      lambda n, p: _request_ref(n, p, names), f"{path}.requests")
    if constraint.get("matchAttribute") is not None:
        errors += _fully_qualified_name(_str(constraint.get("matchAttribute")), f"{path}.matchAttribute")
    elif constraint.get("distinctAttribute") is not None:
        errors += _fully_qualified_name(_str(constraint.get("distinctAttribute")), f"{path}.distinctAttribute")
    elif opts.consumable:
        errors.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                                     "but multiple fields are set"))
    else:
        errors.append(required(f"{path}.matchAttribute"))
    return errors


def _raw_extension(value: Any, path: str, max_length: int) -> Errors:
    """validateRawExtension of a decoded JSON value (its size: the compact encoding)."""
    if value is None:
        return [required(path)]
    if len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) > max_length:
        return [too_long(path, max_length)]
    if not isinstance(value, Mapping):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def _device_configuration(config: Mapping[str, Any], path: str) -> Errors:
    opaque = config.get("opaque")
    if not isinstance(opaque, Mapping):
        return [required(f"{path}.opaque")]
    return _driver(_str(opaque.get("driver")), f"{path}.opaque.driver") + \
        _raw_extension(opaque.get("parameters"), f"{path}.opaque.parameters", OPAQUE_PARAMETERS_MAX_LENGTH)


def _claim_config(config: Mapping[str, Any], path: str, names: _RequestNames) -> Errors:
    errors = _strings(_list(config.get("requests")), DEVICE_REQUESTS_MAX,
                      lambda n, p: _request_ref(n, p, names), f"{path}.requests")
    return errors + _device_configuration(config, path)


def _device_claim(devices: Mapping[str, Any], path: str, opts: Options) -> Errors:
    names = _RequestNames(devices)
    errors = _items(_list(devices.get("requests")), DEVICE_REQUESTS_MAX, lambda r, p: _request(r, p, opts),
                    f"{path}.requests", _key)
    errors += _items(_list(devices.get("constraints")), CONSTRAINTS_MAX,
                     lambda c, p: _constraint(c, p, names, opts), f"{path}.constraints")
    errors += _items(_list(devices.get("config")), CONFIG_MAX,
                     lambda c, p: _claim_config(c, p, names), f"{path}.config")
    return errors


def validate_resource_claim(obj: Mapping[str, Any], opts: Options = _NO_COMPILE) -> Errors:
    """validateResourceClaimSpec of a new ResourceClaim."""
    return _device_claim(_map(_map(obj.get("spec")).get("devices")), "spec.devices", opts)


# metav1.ObjectMeta's fields in declaration order but Labels and Annotations: (Go name, JSON key)
_OBJECT_META_FIELDS = (("Name", "name"), ("GenerateName", "generateName"), ("Namespace", "namespace"),
                       ("SelfLink", "selfLink"), ("UID", "uid"), ("ResourceVersion", "resourceVersion"),
                       ("Generation", "generation"), ("CreationTimestamp", "creationTimestamp"),
                       ("DeletionTimestamp", "deletionTimestamp"),
                       ("DeletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
                       ("OwnerReferences", "ownerReferences"), ("Finalizers", "finalizers"),
                       ("ManagedFields", "managedFields"))


def validate_resource_claim_template(obj: Mapping[str, Any], opts: Options = _NO_COMPILE) -> Errors:
    """validateResourceClaimTemplateSpec of a new ResourceClaimTemplate (its metadata:
    ValidateTemplateObjectMeta, only labels and annotations may be set)."""
    spec = _map(obj.get("spec"))
    meta = _map(spec.get("metadata"))
    errors = validate_annotations(meta.get("annotations"), "spec.metadata.annotations")
    errors += validate_labels(meta.get("labels"), "spec.metadata.labels")
    for go_name, key in _OBJECT_META_FIELDS:  # validateFieldAllowList: set fields but these two
        value = meta.get(key)
        if value is not None and value != "" and not (key == "generation" and value == 0):
            errors.append(forbidden(f"spec.metadata.{go_name[0].lower()}{go_name[1:]}", "cannot be set"))
    return errors + _device_claim(_map(_map(spec.get("spec")).get("devices")), "spec.spec.devices", opts)


def _consumer(ref: Mapping[str, Any], path: str) -> Errors:
    return [required(f"{path}.{k}") for k in ("resource", "name", "uid") if not _str(ref.get(k))]


def _allocation_result(result: Mapping[str, Any], path: str, names: _RequestNames) -> Errors:
    errors = _request_ref(_str(result.get("request")), f"{path}.request", names)
    errors += _driver(_str(result.get("driver")), f"{path}.driver")
    errors += _pool_name(_str(result.get("pool")), f"{path}.pool")
    errors += _label(_str(result.get("device")), f"{path}.device")
    errors += _binding_parameters(result, path)
    for i, toleration in enumerate(_list(result.get("tolerations"))):
        errors += _toleration(_map(toleration), f"{path}.tolerations[{i}]")
    return errors + _skip_node_operations(result.get("skipNodeOperations"), f"{path}.skipNodeOperations")


def _allocation_config(config: Mapping[str, Any], path: str, names: _RequestNames) -> Errors:
    source = _str(config.get("source"))
    errors: Errors = []
    if not source:
        errors.append(required(f"{path}.source"))
    elif source not in ("FromClaim", "FromClass"):
        errors.append(not_supported(f"{path}.source", source, ("FromClaim", "FromClass")))
    errors += _strings(_list(config.get("requests")), DEVICE_REQUESTS_MAX,
                       lambda n, p: _request_ref(n, p, names), f"{path}.requests")
    return errors + _device_configuration(config, path)


def validate_resource_claim_status(obj: Mapping[str, Any], old: Mapping[str, Any]) -> Errors:
    """validateResourceClaimStatusUpdate (its plain rules)."""
    status, before = _map(obj.get("status")), _map(old.get("status"))
    names = _RequestNames(_map(_map(obj.get("spec")).get("devices")))
    reserved = _list(status.get("reservedFor"))
    errors = _items(reserved, RESERVED_FOR_MAX, _consumer, "status.reservedFor", lambda r: _key(r, "uid"))
    allocation, old_allocation = status.get("allocation"), before.get("allocation")
    if reserved:
        if allocation is None:
            errors.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif _map(obj.get("metadata")).get("deletionTimestamp"):
            known = [json.dumps(r, sort_keys=True) for r in _list(before.get("reservedFor"))]
            if any(json.dumps(r, sort_keys=True) not in known for r in reserved):
                errors.append(forbidden("status.reservedFor", "new entries may not be added while "
                                        "`deallocationRequested` or `deletionTimestamp` are set"))
    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            errors.append(invalid("status.allocation", allocation, "field is immutable"))
    elif isinstance(allocation, Mapping):
        devices = _map(allocation.get("devices"))
        errors += _items(_list(devices.get("results")), ALLOCATION_RESULTS_MAX,
                         lambda r, p: _allocation_result(r, p, names), "status.allocation.devices.results")
        errors += _items(_list(devices.get("config")), 2 * CONFIG_MAX,
                         lambda c, p: _allocation_config(c, p, names), "status.allocation.devices.config")
        if allocation.get("nodeSelector") is not None:
            errors += _node_selector(allocation["nodeSelector"], "status.allocation.nodeSelector")
    return errors + _device_statuses(status)


def _shared_device_id(item: Mapping[str, Any]) -> str:
    """structured.SharedDeviceID's String(): ``driver/pool/device[/shareID]``."""
    found = f"{_str(item.get('driver'))}/{_str(item.get('pool'))}/{_str(item.get('device'))}"
    return found + (f"/{_str(item.get('shareID'))}" if item.get("shareID") is not None else "")


def _device_statuses(status: Mapping[str, Any]) -> Errors:
    """status.devices (validateDeviceStatus, its plain rules)."""
    results = _list(_map(_map(status.get("allocation")).get("devices")).get("results"))
    allocated = {_shared_device_id(_map(r)) for r in results}

    def check(device: Mapping[str, Any], path: str) -> Errors:
        errors = _driver(_str(device.get("driver")), f"{path}.driver")
        errors += _pool_name(_str(device.get("pool")), f"{path}.pool")
        errors += _label(_str(device.get("device")), f"{path}.device")
        if _shared_device_id(device) not in allocated:
            errors.append(invalid(path, GoRaw(_shared_device_id(device)), "must be an allocated device in the claim"))
        conditions = _list(device.get("conditions"))
        if len(conditions) > DEVICE_STATUS_MAX_CONDITIONS:
            errors.append(too_many(f"{path}.conditions", len(conditions), DEVICE_STATUS_MAX_CONDITIONS))
        if device.get("data") is not None:
            errors += _raw_extension(device["data"], f"{path}.data", DEVICE_STATUS_DATA_MAX_LENGTH)
        network = device.get("networkData")
        if isinstance(network, Mapping):
            if len(_str(network.get("interfaceName"))) > INTERFACE_NAME_MAX_LENGTH:
                errors.append(too_long(f"{path}.networkData.interfaceName", INTERFACE_NAME_MAX_LENGTH))
            if len(_str(network.get("hardwareAddress"))) > HARDWARE_ADDRESS_MAX_LENGTH:
                errors.append(too_long(f"{path}.networkData.hardwareAddress", HARDWARE_ADDRESS_MAX_LENGTH))
            errors += _strings(_list(network.get("ips")), NETWORK_MAX_IPS, lambda v, p: [], f"{path}.networkData.ips")
        return errors

    return _items(_list(status.get("devices")), -1, check, "status.devices",
                  lambda d: GoRaw(_shared_device_id(_map(d))))


# ---------------------------------------------------------------------------- CEL selectors

_CEL_ENVS: dict[int, tuple[Any, Any]] = {}
_SCALAR_TYPES = {"STRING": "string", "INT": "int", "UINT": "uint", "DOUBLE": "double", "BYTES": "bytes",
                 "NULL": "null_type", "DURATION": "google.protobuf.Duration", "TIMESTAMP": "google.protobuf.Timestamp",
                 "DYN": "dyn", "BOOL": "bool"}


def _cel_envs(compat_minor: int) -> tuple[Any, Any]:
    """kube's DRA environment for new expressions at compatibility version ``1.<compat_minor>``
    (the base libraries of that version), ``device`` declared dyn here; and the same without
    cel.bind (kube's base environment has no ext.Bindings: the rewrites here use it)."""
    found = _CEL_ENVS.get(compat_minor)
    if found is None:
        from samplecontroller.apiserver.cel import formats
        from samplecontroller.apiserver.cel.engine import DYN, Env
        from samplecontroller.apiserver.cel.library import ext_lists, functions

        libraries = functions(compat_minor) + formats.FUNCTIONS
        found = _CEL_ENVS[compat_minor] = (
            Env({"device": DYN}, libraries, formats.rewrite, ext_lists=ext_lists(compat_minor)),
            Env({"device": DYN}, libraries, ext_lists=ext_lists(compat_minor), bindings=False))
    return found


def _go_type(name: str) -> str | None:
    """cel-go's name of a result type (``list(int)``), None when not known for sure (maps: a
    quantity or semver value has a map type here)."""
    if name in _SCALAR_TYPES:
        return _SCALAR_TYPES[name]
    if name.startswith("LIST<") and name.endswith(">"):
        inner = _go_type(name[5:-1])
        return None if inner is None else f"list({inner})"
    return None


def _compile_selector(expression: str, path: str, compat_minor: int) -> Errors:
    """CompileCELExpression's errors: ``compilation failed: <issues>`` (Invalid) and a result
    that is neither a bool nor dyn. Not ported: the typed ``device`` (its fields' types are
    not checked here), the cost limit."""
    from samplecontroller.apiserver.cel.engine import CompileError, uses_bindings

    env, no_bindings = _cel_envs(compat_minor)
    try:
        if uses_bindings(expression):
            no_bindings.compile(expression)
        program = env.compile(expression)
    except CompileError as err:
        return [invalid(path, expression, "compilation failed: " + err.detail)]
    result = program.result_type
    shown = _go_type(result)
    if result not in ("BOOL", "DYN") and shown is not None:
        return [invalid(path, expression, f"must evaluate to bool or the unknown type, not {shown}")]
    return []


# ---------------------------------------------------------------------------- classes


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def validate_device_class(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None,
                          compile_minor: int | None = None) -> Errors:
    """validateDeviceClassSpec (``old``: the stored class of an update: its selectors, when
    unchanged, are not compiled again; ``compile_minor``: see ``Options``)."""
    spec = _map(obj.get("spec"))
    if old is not None and spec.get("selectors") == _map(old.get("spec")).get("selectors"):
        compile_minor = None
    errors = _selectors(spec.get("selectors"), "spec.selectors", Options(compile_minor=compile_minor))
    errors += _items(_list(spec.get("config")), CONFIG_MAX, _device_configuration, "spec.config")
    name = spec.get("extendedResourceName")
    if name is not None and not _is_extended_resource_name(_str(name)):
        errors.append(invalid("spec.extendedResourceName", name, "must be a valid extended resource name"))
    return errors


# ---------------------------------------------------------------------------- slices


def _node_name(name: str, path: str) -> Errors:
    return _subdomain(name, path)


def _node_selector(selector: Any, path: str) -> Errors:
    """corevalidation.ValidateNodeSelector: at least one term; each term's matchExpressions
    (operators and their values, label-name keys) and matchFields (``metadata.name`` only, one
    value for In/NotIn, a node name)."""
    terms = _list(_map(selector).get("nodeSelectorTerms"))
    if not terms:
        return [required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    errors: Errors = []
    for i, term in enumerate(terms):
        term_path = f"{path}.nodeSelectorTerms[{i}]"
        for j, req in enumerate(_list(_map(term).get("matchExpressions"))):
            req, req_path = _map(req), f"{term_path}.matchExpressions[{j}]"
            op, values = req.get("operator"), _list(req.get("values"))
            if op in ("In", "NotIn"):
                if not values:
                    errors.append(required(f"{req_path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
            elif op in ("Exists", "DoesNotExist"):
                if values:
                    errors.append(forbidden(f"{req_path}.values",
                                            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
            elif op in ("Gt", "Lt"):
                if len(values) != 1:
                    errors.append(required(f"{req_path}.values",
                                           "must be specified single value when `operator` is 'Lt' or 'Gt'"))
            else:
                errors.append(invalid(f"{req_path}.operator", _str(op), "not a valid selector operator"))
            errors += _label_name(_str(req.get("key")), f"{req_path}.key")
        for j, req in enumerate(_list(_map(term).get("matchFields"))):
            req, req_path = _map(req), f"{term_path}.matchFields[{j}]"
            op, values = req.get("operator"), _list(req.get("values"))
            if op in ("In", "NotIn"):
                if len(values) != 1:
                    errors.append(required(f"{req_path}.values", "must be only one value when `operator` is "
                                                                 "'In' or 'NotIn' for node field selector"))
            else:
                errors.append(invalid(f"{req_path}.operator", _str(op), "not a valid selector operator"))
            if req.get("key") != "metadata.name":
                errors.append(invalid(f"{req_path}.key", _str(req.get("key")), "not a valid field selector key"))
            else:
                for k, value in enumerate(values):
                    errors += _subdomain(_str(value), f"{req_path}.values[{k}]")
    return errors


def _binding_parameters(item: Mapping[str, Any], path: str) -> Errors:
    conditions = [_str(c) for c in _list(item.get("bindingConditions"))]
    failures = [_str(c) for c in _list(item.get("bindingFailureConditions"))]
    errors = _strings(conditions, BINDING_CONDITIONS_MAX, _label_name, f"{path}.bindingConditions", False)
    errors += _strings(failures, BINDING_CONDITIONS_MAX, _label_name, f"{path}.bindingFailureConditions", False)
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        if c in seen:
            errors.append(duplicate(f"{path}.bindingConditions[{i}]", c))
        seen.add(c)
    seen = set()
    for i, c in enumerate(failures):
        if c in seen:
            errors.append(duplicate(f"{path}.bindingFailureConditions[{i}]", c))
        seen.add(c)
        if c in conditions:
            errors.append(invalid(f"{path}.bindingFailureConditions[{i}]", c,
                                  "bindingFailureConditions must not overlap with bindingConditions"))
    if not conditions and failures:
        errors.append(invalid(f"{path}.bindingConditions", _go_slice(item.get("bindingConditions"), "string"),
                              "bindingConditions are required to use bindingFailureConditions"))
    if not failures and conditions:
        errors.append(invalid(f"{path}.bindingFailureConditions",
                              _go_slice(item.get("bindingFailureConditions"), "string"),
                              "bindingFailureConditions are required to use bindingConditions"))
    return errors


def _attribute(attribute: Mapping[str, Any], path: str) -> Errors:
    errors: Errors = []
    count = 0
    for key in ("bool", "int", "string", "version", "bools", "ints", "strings", "versions"):
        if attribute.get(key) is None:
            continue
        count += 1
        value = attribute[key]
        if key == "version" and not _SEMVER_RE.match(_str(value)):
            errors.append(invalid(f"{path}.version", _str(value), _SEMVER))
        if key in ("string", "version") and len(_str(value)) > ATTRIBUTE_MAX_VALUE_LENGTH:
            errors.append(too_long(f"{path}.{key}", ATTRIBUTE_MAX_VALUE_LENGTH))
        if key.endswith("s") and not _list(value):
            go_type = {"bools": "bool", "ints": "int64"}.get(key, "string")
            errors.append(invalid(f"{path}.{key}", GoRaw(f"[]{go_type}{{}}"), "must not be empty if specified"))
        if key == "strings":
            errors += [too_long(f"{path}.strings[{i}]", ATTRIBUTE_MAX_VALUE_LENGTH)
                       for i, s in enumerate(_list(value)) if len(_str(s)) > ATTRIBUTE_MAX_VALUE_LENGTH]
        if key == "versions":
            for i, s in enumerate(_list(value)):
                if not _SEMVER_RE.match(_str(s)):
                    errors.append(invalid(f"{path}.versions[{i}]", _str(s), _SEMVER))
                if len(_str(s)) > ATTRIBUTE_MAX_VALUE_LENGTH:
                    errors.append(too_long(f"{path}.versions[{i}]", ATTRIBUTE_MAX_VALUE_LENGTH))
    if count == 0:
        errors.append(invalid(path, "", "exactly one value must be specified"))
    elif count > 1:
        errors.append(invalid(path, dict(attribute), "exactly one value must be specified"))
    return errors


def _map_entries(value: Any, path: str, check: Callable[[Mapping[str, Any], str], Errors],
                 check_key: Callable[[str, str], Errors], max_size: int = -1,
                 truncate: int = _KEY_TRUNCATE) -> Errors:
    """validateMap (keys in sorted order: Go's map order is random)."""
    entries = _map(value)
    if max_size >= 0 and len(entries) > max_size:
        return [too_many(path, len(entries), max_size)]
    errors: Errors = []
    for key in sorted(entries):
        errors += check_key(str(key), path)
        errors += check(_map(entries[key]), f"{path}[{_truncate(str(key), truncate)}]")
    return errors


def _taint(taint: Mapping[str, Any], path: str) -> Errors:
    errors = _label_name(_str(taint.get("key")), f"{path}.key")
    if _str(taint.get("value")):
        errors += _label_value(_str(taint.get("value")), f"{path}.value")
    effect = _str(taint.get("effect"))
    if not effect:
        errors.append(required(f"{path}.effect"))
    elif effect not in _TAINT_EFFECTS:
        errors.append(not_supported(f"{path}.effect", effect, _TAINT_EFFECTS))
    return errors


def _counters(item: Mapping[str, Any], path: str, name_key: str, max_counters: int) -> Errors:
    name = _str(item.get(name_key))
    errors = [required(f"{path}.{name_key}")] if not name else _label(name, f"{path}.{name_key}")
    counters = item.get("counters")
    if not _map(counters):
        errors.append(required(f"{path}.counters"))
    else:
        errors += _map_entries(counters, f"{path}.counters", lambda c, p: [], _label, max_counters, 63)
    return errors


def _device(device: Mapping[str, Any], path: str, old_device: Mapping[str, Any] | None,
            per_device: bool) -> Errors:
    errors = _label(_str(device.get("name")), f"{path}.name")
    attributes, capacity = _map(device.get("attributes")), _map(device.get("capacity"))
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        errors.append(invalid(path, total, "the total number of attributes and capacities must not exceed "
                                           f"{MAX_ATTRIBUTES_AND_CAPACITIES}"))
    errors += _map_entries(attributes, f"{path}.attributes", _attribute, _qualified_name)
    if old_device is None or old_device.get("capacity") != device.get("capacity"):
        multiple = device.get("allowMultipleAllocations") is True

        def _capacity(entry: Mapping[str, Any], p: str) -> Errors:
            policy = entry.get("requestPolicy")
            if policy is None:
                return []
            if not multiple:
                return [forbidden(f"{p}.requestPolicy", "allowMultipleAllocations must be true")]
            value = _quantity(entry.get("value"))
            return [] if value is None else _request_policy(value, _map(policy), f"{p}.requestPolicy")

        errors += _map_entries(capacity, f"{path}.capacity", _capacity, _qualified_name)
    if old_device is None or old_device.get("taints") != device.get("taints"):
        errors += _items(_list(device.get("taints")), DEVICE_TAINTS_MAX, _taint, f"{path}.taints")
    errors += _items(_list(device.get("consumesCounters")), MAX_CONSUMPTIONS_PER_DEVICE,
                     lambda c, p: _counters(c, p, "counterSet", MAX_COUNTERS_PER_CONSUMPTION),
                     f"{path}.consumesCounters", lambda c: _key(c, "counterSet"))
    node_name, node_selector, all_nodes = device.get("nodeName"), device.get("nodeSelector"), device.get("allNodes")
    if per_device:
        set_fields: list[str] = []
        if node_name is not None:
            if _str(node_name):
                set_fields.append("`nodeName`")
                errors += _node_name(_str(node_name), f"{path}.nodeName")
            else:
                errors.append(invalid(f"{path}.nodeName", _str(node_name), "must not be empty"))
        if node_selector is not None:
            set_fields.append("`nodeSelector`")
            errors += _node_selector(node_selector, f"{path}.nodeSelector")
        if all_nodes is not None:
            if all_nodes is True:
                set_fields.append("`allNodes`")
            else:
                errors.append(invalid(f"{path}.allNodes", all_nodes, "must be either unset or set to true"))
        message = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                   "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        if not set_fields:
            errors.append(required(path, message))
        elif len(set_fields) > 1:
            errors.append(invalid(path, "{" + ", ".join(set_fields) + "}", message))
    elif node_name is not None or node_selector is not None or all_nodes is not None:
        errors.append(invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                          "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
    return errors + _binding_parameters(device, path) + \
        _node_allocatable(device.get("nodeAllocatableResources"), capacity, f"{path}.nodeAllocatableResources")


def _skip_node_operations(value: Any, path: str) -> Errors:
    """validateSkipNodeOperations (its enum and uniqueness are declarative-only)."""
    ops = _list(value)
    if "NodePrepareResources" in ops and "NodeUnprepareResources" not in ops and "*" not in ops:
        return [invalid(path, _go_slice(value, "resource.SkipNodeOperation"),
                        "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")]
    return []


_INT64_MAX = 2**63 - 1


class _Quantity:
    """A resource.Quantity (``apimachinery.quantity``) with the arithmetic validation uses: its
    exact ``value``, ``sum`` (Quantity.Add), ``integer`` (Quantity.Value), ``str`` its canonical
    form (Quantity.String)."""

    def __init__(self, quantity: Quantity) -> None:
        self.quantity = quantity
        self.value = quantity.value()

    def sum(self, other: _Quantity) -> _Quantity:
        """Quantity.Add: the receiver's format (the other's when the receiver is zero)."""
        a, b = self.quantity, other.quantity
        low = min(a.exponent, b.exponent)
        mantissa = a.mantissa * 10 ** (a.exponent - low) + b.mantissa * 10 ** (b.exponent - low)
        return _Quantity(Quantity(mantissa, low, b.format if a.is_zero() else a.format))

    def integer(self) -> int:
        """Quantity.Value: rounded up."""
        return math.ceil(self.value)

    def __str__(self) -> str:
        return self.quantity.string()


def _quantity(value: Any) -> _Quantity | None:
    try:
        return _Quantity(parse_quantity(str(value))) if isinstance(value, (str, int, float)) \
            and not isinstance(value, bool) else None
    except ValueError:
        return None


def _request_policy(capacity: _Quantity, policy: Mapping[str, Any], path: str) -> Errors:
    """validateRequestPolicy (DRAFractionalCapacityRange off: whole-number steps)."""
    values = [q for q in (_quantity(v) for v in _list(policy.get("validValues"))) if q is not None]
    valid_range = policy.get("validRange")
    default = _quantity(policy.get("default"))
    if values and valid_range is not None:
        return [forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and '
                                '"validRange" at the same time')]
    if values:
        if default is None:
            return [required(f"{path}.default", "required when validValues is defined")]
        return _valid_values(default, capacity, values, f"{path}.validValues")
    if valid_range is not None:
        if default is None:
            return [required(f"{path}.default", "required when validRange is defined")]
        return _valid_range(default, capacity, _map(valid_range), f"{path}.validRange")
    return []


def _valid_values(default: _Quantity, capacity: _Quantity, values: list[_Quantity], path: str) -> Errors:
    errors = [invalid(f"{path}[{i + 1}]", str(values[i + 1]), "values must be sorted in ascending order")
              for i in range(len(values) - 1) if values[i].value > values[i + 1].value]
    found = False
    if len(values) > CAPACITY_MAX_OPTIONS:
        errors.append(too_many(path, len(values), CAPACITY_MAX_OPTIONS))
    else:
        for i, option in enumerate(values):
            if option.value > capacity.value:
                errors.append(invalid(f"{path}[{i}]", str(option), f"option is larger than capacity value: {capacity}"))
            found = found or option.value == default.value
        seen: set[str] = set()
        for i, option in enumerate(values):
            key = str(option.integer())
            if key in seen:
                errors.append(duplicate(f"{path}[{i}]", key))
            seen.add(key)
    if not found:
        errors.append(invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errors


def _valid_range(default: _Quantity, capacity: _Quantity, valid_range: Mapping[str, Any], path: str) -> Errors:
    low, high, step = (_quantity(valid_range.get(k)) for k in ("min", "max", "step"))
    if low is None:
        return [required(f"{path}.min", "required when validRange is defined")]
    errors: Errors = []
    if low.value > capacity.value:
        errors.append(invalid(f"{path}.min", str(low), f"min is larger than capacity value: {capacity}"))
    if default.value < low.value:
        errors.append(invalid(f"{path}.default", str(default), f"default is less than min: {low}"))
    if high is not None:
        if low.value > high.value:
            errors.append(invalid(f"{path}.max", str(low), f"min is larger than max: {high}"))
        if high.value > capacity.value:
            errors.append(invalid(f"{path}.max", str(high), f"max is larger than capacity value: {capacity}"))
        if default.value > high.value:
            errors.append(invalid(f"{path}.default", str(default), f"default is more than max: {high}"))
    if step is None:
        return errors
    if step.value <= 0:
        return [*errors, invalid(f"{path}.step", str(step), "must be greater than zero")]
    added = low.sum(step)
    if added.value > capacity.value:
        errors.append(invalid(f"{path}.step", str(step), f"one step {added} is larger than capacity value: {capacity}"))
    unsafe = False
    for name, q in (("default", default), ("min", low), ("max", high), ("step", step)):
        if q is None:
            continue
        if q.value < 0:
            errors.append(invalid(f"{path}.{name}", str(q), "must be greater than or equal to 0"))
            unsafe = True
        elif q.value > _INT64_MAX:
            errors.append(invalid(f"{path}.{name}", str(q), f"must not be larger than {_INT64_MAX}"))
            unsafe = True
    if not unsafe:
        for value in (default, high):
            if value is not None and (value.integer() - low.integer()) % step.integer():
                errors.append(invalid(f"{path}.step", str(value),
                                      f"value is not a multiple of a given step ({step}) from ({low})"))
    return errors


def _node_allocatable(mappings: Any, capacity: Mapping[str, Any], path: str) -> Errors:
    """validateNodeAllocatableResources but its resource-name check (IsNodeAllocatableResourceName,
    whose source was not found: not ported)."""
    errors: Errors = []
    for name in sorted(_map(mappings)):
        entry, key_path = _map(_map(mappings)[name]), f"{path}[{name}]"
        mapping, overhead = entry.get("mapping"), entry.get("overhead")
        if mapping is None and overhead is None:
            errors.append(required(key_path, "at least one of mapping or overhead must be set"))
        if isinstance(mapping, Mapping):
            errors += _allocatable_mapping(mapping, capacity, f"{key_path}.mapping")
        if isinstance(overhead, Mapping):
            per_pod, per_container = _quantity(overhead.get("perPod")), _quantity(overhead.get("perContainer"))
            if overhead.get("perPod") is None and overhead.get("perContainer") is None:
                errors.append(invalid(f"{key_path}.overhead", "", "at least one of perPod or perContainer must be set"))
                continue
            for field_name, q in (("perPod", per_pod), ("perContainer", per_container)):
                if q is not None and q.value < 0:
                    errors.append(invalid(f"{key_path}.overhead.{field_name}", str(q), "must be non-negative"))
    return errors


def _allocatable_mapping(mapping: Mapping[str, Any], capacity: Mapping[str, Any], path: str) -> Errors:
    errors: Errors = []
    key, multiplier = mapping.get("capacityKey"), mapping.get("capacityMultiplier")
    if key is not None:
        if key == "":
            errors.append(invalid(f"{path}.capacityKey", "", "capacityKey must not be an empty string"))
        elif key not in capacity:
            errors.append(FieldError(ERROR_NOT_FOUND, f"{path}.capacityKey", _str(key)))
        q = _quantity(multiplier)
        if multiplier is None:
            errors.append(required(f"{path}.capacityMultiplier", "capacityMultiplier is required when capacityKey is set"))
        elif q is not None and q.value <= 0:
            errors.append(invalid(f"{path}.capacityMultiplier", str(q), "must be positive"))
    device_multiplier = _quantity(mapping.get("deviceMultiplier"))
    if device_multiplier is not None and device_multiplier.value <= 0:
        errors.append(invalid(f"{path}.deviceMultiplier", str(device_multiplier), "must be positive"))
    if multiplier is not None and key is None:
        errors.append(required(f"{path}.capacityKey", "capacityKey is required when capacityMultiplier is set"))
    return errors


def _partition_type_attribute(spec: Mapping[str, Any]) -> Errors:
    """validatePartitionTypeAttribute (its name's format is declarative-only)."""
    name = _str(spec.get("partitionTypeAttribute"))
    devices = [_map(d) for d in _list(spec.get("devices"))]
    if not any(_list(d.get("consumesCounters")) for d in devices):
        return [invalid("spec.partitionTypeAttribute", name,
                        "may only be set on a slice which declares devices that consume counters")]
    if _fully_qualified_name(name, ""):
        return []
    driver_prefix = _str(spec.get("driver")) + "/"
    bare = name[len(driver_prefix):] if name.startswith(driver_prefix) else name
    errors: Errors = []
    for i, device in enumerate(devices):
        if not _list(device.get("consumesCounters")):
            continue
        attributes = _map(device.get("attributes"))
        path = f"spec.devices[{i}].attributes[{name}]"
        attribute = attributes.get(name, attributes.get(bare)) if bare else attributes.get(name)
        if attribute is None:
            errors.append(required(path, "device consumes counters and `partitionTypeAttribute` names this "
                                         "attribute, so it must be set"))
        elif _map(attribute).get("string") is None:
            errors.append(invalid(path, attribute, "must be a string value because `partitionTypeAttribute` "
                                                   "names this attribute"))
    return errors


def _advanced(devices: Iterable[Any]) -> bool:
    """haveDeviceTaints || haveConsumesCounters || haveListAttributes."""
    for device in devices:
        device = _map(device)
        if _list(device.get("taints")) or _list(device.get("consumesCounters")):
            return True
        for attribute in _map(device.get("attributes")).values():
            if any(_map(attribute).get(k) is not None for k in ("bools", "ints", "strings", "versions")):
                return True
    return False


def validate_resource_slice(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> Errors:
    """validateResourceSliceSpec but its immutable fields (``ResourceSliceStrategy.validate_extra``);
    ``old``: the stored slice of an update (unchanged capacity and taints are not checked again)."""
    spec = _map(obj.get("spec"))
    old_spec = _map(old.get("spec")) if old is not None else None
    pool = _map(spec.get("pool"))
    errors = _driver(_str(spec.get("driver")), "spec.driver")
    errors += _pool_name(_str(pool.get("name")), "spec.pool.name")
    if _int(pool.get("resourceSliceCount")) <= 0:
        errors.append(invalid("spec.pool.resourceSliceCount", _int(pool.get("resourceSliceCount")),
                              "must be greater than zero"))
    if _int(pool.get("generation")) < 0:
        errors.append(invalid("spec.pool.generation", _int(pool.get("generation")),
                              "must be greater than or equal to zero"))
    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if _str(node_name):
            set_fields.append("`nodeName`")
            errors += _node_name(_str(node_name), "spec.nodeName")
        else:
            errors.append(invalid("spec.nodeName", _str(node_name), "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if selector is not None:
        set_fields.append("`nodeSelector`")
        errors += _node_selector(selector, "spec.nodeSelector")
        terms = _map(selector).get("nodeSelectorTerms")
        if len(_list(terms)) != 1:
            errors.append(invalid("spec.nodeSelector.nodeSelectorTerms", _go_slice(terms, "core.NodeSelectorTerm", _go_term),
                                  "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(key)
        if value is True:
            set_fields.append(f"`{key}`")
        elif value is not None:
            errors.append(invalid(f"spec.{key}", value, "must be either unset or set to true"))
    one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not set_fields:
        errors.append(required("spec", one_of))
    elif len(set_fields) > 1:
        errors.append(invalid("spec", "{" + ", ".join(set_fields) + "}", one_of + ", but multiple fields are set"))
    devices = _list(spec.get("devices"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errors.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    old_devices = {_key(d): _map(d) for d in _list((old_spec or {}).get("devices"))}
    per_device = spec.get("perDeviceNodeSelection") is True
    errors += _items(devices, SLICE_MAX_DEVICES_ADVANCED if _advanced(devices) else SLICE_MAX_DEVICES,
                     lambda d, p: _device(d, p, old_devices.get(_key(d)), per_device), "spec.devices", _key)
    errors += _items(_list(spec.get("sharedCounters")), SLICE_MAX_COUNTER_SETS,
                     lambda c, p: _counters(c, p, "name", MAX_COUNTERS_PER_SET), "spec.sharedCounters", _key)
    if spec.get("partitionTypeAttribute") is not None:
        errors += _partition_type_attribute(spec)
    return errors + _skip_node_operations(spec.get("skipNodeOperations"), "spec.skipNodeOperations")


# ---------------------------------------------------------------------------- strategies


def _uncovered(schema_errors: Errors, kind_errors: Errors) -> Errors:
    """The schema's errors (types, required fields) but a Required of a field the kind's rules
    already report."""
    fields = {e.field for e in kind_errors}
    return [e for e in schema_errors if not (e.type == ERROR_REQUIRED and e.field in fields)]


class _ClaimSpecStrategy(Strategy):
    """A kind whose spec kube validates on create only (``validate_gated``, which knows the
    stored object): an update checks that the spec did not change (``validate_extra``)."""

    def _spec_errors(self, obj: Obj, opts: Options = _NO_COMPILE) -> Errors:
        return validate_resource_claim(obj, opts)

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        """The schema's errors (the kind's come from ``validate_gated``, which knows the emulated
        version and whether this is a create)."""
        return _uncovered(super().validate(res, obj, sch), self._spec_errors(obj))

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        errors = super().validate_gated(res, obj, old, minor)
        if old is not None:
            return errors
        opts = Options(consumable=gate_enabled("DRAConsumableCapacity", minor), compile_minor=minor - 1)
        return errors + self._spec_errors(obj, opts)

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None or obj.get("spec") == old.get("spec"):
            return []
        return [invalid("spec", obj.get("spec"), "field is immutable")]


class ResourceClaimStrategy(_ClaimSpecStrategy):
    """ValidateResourceClaim, ValidateResourceClaimUpdate and ValidateResourceClaimStatusUpdate."""

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        return super().validate_status(res, obj, old, sch) + validate_resource_claim_status(obj, old)


class ResourceClaimTemplateStrategy(_ClaimSpecStrategy):
    """ValidateResourceClaimTemplate and ValidateResourceClaimTemplateUpdate."""

    def _spec_errors(self, obj: Obj, opts: Options = _NO_COMPILE) -> Errors:
        return validate_resource_claim_template(obj, opts)


def validate_device_taint_rule(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> Errors:
    """validateDeviceTaintRuleSpec (``old``: the stored rule of an update, whose unchanged
    effect is not checked again)."""
    spec = _map(obj.get("spec"))
    selector = spec.get("deviceSelector")
    errors: Errors = []
    if isinstance(selector, Mapping):
        path = "spec.deviceSelector"
        if selector.get("driver") is not None:
            errors += _driver(_str(selector["driver"]), f"{path}.driver")
        if selector.get("pool") is not None:
            errors += _pool_name(_str(selector["pool"]), f"{path}.pool")
        if selector.get("device") is not None:
            errors += _label(_str(selector["device"]), f"{path}.device")
    taint = _map(spec.get("taint"))
    old_taint = _map(_map(old.get("spec")).get("taint")) if old is not None else None
    errors += _label_name(_str(taint.get("key")), "spec.taint.key")
    if _str(taint.get("value")):
        errors += _label_value(_str(taint.get("value")), "spec.taint.value")
    effect = _str(taint.get("effect"))
    if old_taint is None or _str(old_taint.get("effect")) != effect:
        if not effect:
            errors.append(required("spec.taint.effect"))
        elif effect not in _TAINT_EFFECTS:
            errors.append(not_supported("spec.taint.effect", effect, _TAINT_EFFECTS))
    return errors


class DeviceTaintRuleStrategy(Strategy):
    """ValidateDeviceTaintRule and ValidateDeviceTaintRuleUpdate (``validate_gated``, which
    knows the stored rule: an unchanged effect is not checked again)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return _uncovered(super().validate(res, obj, sch), validate_device_taint_rule(obj))

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        return super().validate_gated(res, obj, old, minor) + validate_device_taint_rule(obj, old)


class DeviceClassStrategy(Strategy):
    """ValidateDeviceClass and ValidateDeviceClassUpdate."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        """The schema's errors (the kind's come from ``validate_gated``, which knows the stored
        class and the emulated version)."""
        return _uncovered(super().validate(res, obj, sch), validate_device_class(obj))

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        return super().validate_gated(res, obj, old, minor) + validate_device_class(obj, old, minor - 1)


class ResourceSliceStrategy(Strategy):
    """ValidateResourceSlice and ValidateResourceSliceUpdate (the spec in ``validate_gated``,
    which knows the stored slice; its immutable fields in ``validate_extra``)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        return _uncovered(super().validate(res, obj, sch), validate_resource_slice(obj))

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        return super().validate_gated(res, obj, old, minor) + validate_resource_slice(obj, old)

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        spec, before = _map(obj.get("spec")), _map(old.get("spec"))
        errors: Errors = []
        if _str(_map(spec.get("pool")).get("name")) != _str(_map(before.get("pool")).get("name")):
            errors.append(invalid("spec.pool.name", _str(_map(spec.get("pool")).get("name")), "field is immutable"))
        if _str(spec.get("driver")) != _str(before.get("driver")):
            errors.append(invalid("spec.driver", _str(spec.get("driver")), "field is immutable"))
        if spec.get("nodeName") != before.get("nodeName"):
            errors.append(invalid("spec.nodeName", spec.get("nodeName"), "field is immutable"))
        return errors
