"""Decoding of Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``).

kubectl 1.32+ sends typed creates (``kubectl create namespace|configmap|secret|deployment``)
as protobuf. A body is the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message whose
``typeMeta`` names the apiVersion/kind and whose ``raw`` is the object's message. Messages are
decoded with ``protobuf_fields.json``, a table of field numbers/names/types derived from the
upstream ``generated.proto`` files (wire-format facts only) for meta/v1 and every built-in
group/version in k8s.io/api that the server serves (``hack/update_protobuf_fields.py`` adds one).

Contract: ``decode(data)`` returns the object as the JSON-shaped dict Kubernetes would accept,
or raises ``ValueError`` for anything malformed or unknown. Because Go's non-pointer fields are
always encoded, empty strings, zero timestamps, ``false`` (except in pointer booleans) and
zero integers of non-pointer ``omitempty`` fields are dropped (JSON's omitempty); other integer
zeros are kept (an explicit 0 in a pointer field). The server never *answers* in protobuf (clients accept JSON too).
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["MAGIC", "OPENAPI_V2_PROTOBUF", "decode", "encode_openapi_v2"]

MAGIC = b"k8s\x00"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"": "core", "meta.k8s.io": "meta"}
# k8s.io/api packages are named after the group's first label (rbac.authorization.k8s.io -> rbac)
_API_GROUPS = {"", "apps", "autoscaling", "batch", "policy", "admissionregistration.k8s.io", "authentication.k8s.io",
               "authorization.k8s.io", "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
               "events.k8s.io", "flowcontrol.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
               "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io",
               "storagemigration.k8s.io"}


def _package(api_version: str) -> str | None:
    """The protobuf package of a built-in apiVersion (``batch/v1`` -> ``k8s.io.api.batch.v1``)."""
    group, _, version = api_version.rpartition("/")
    if group == "meta.k8s.io":
        return f"{_META.rsplit('.', 1)[0]}.{version}"
    if group not in _API_GROUPS or not version:
        return None
    return f"k8s.io.api.{_PACKAGES.get(group) or group.split('.')[0]}.{version}"


_VARINT = {"int32", "int64", "uint32", "uint64", "bool", "sint32", "sint64"}
_MAX_DEPTH = 64
_CORE, _APPS, _EVENTS = "k8s.io.api.core.v1.", "k8s.io.api.apps.v1.", "k8s.io.api.events.v1."
# Go encodes a non-pointer field always and a pointer field only when set: a zero integer on the
# wire is dropped when the Go field is a non-pointer with omitempty (JSON would omit it), and
# kept otherwise (an explicit 0 in a pointer such as DeploymentSpec.replicas, or a required int).
_OMIT_ZERO = frozenset({
    f"{_META}.ObjectMeta.generation", f"{_CORE}ServiceSpec.healthCheckNodePort", f"{_CORE}ServicePort.nodePort",
    f"{_CORE}ContainerPort.hostPort", f"{_CORE}Event.count", f"{_CORE}EventSeries.count",
    f"{_CORE}ContainerStateTerminated.signal", f"{_CORE}GCEPersistentDiskVolumeSource.partition",
    f"{_CORE}AWSElasticBlockStoreVolumeSource.partition", f"{_CORE}ReplicationControllerSpec.minReadySeconds",
    f"{_EVENTS}Event.deprecatedCount",
    *(f"{_CORE}Probe.{f}" for f in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                                    "failureThreshold")),
    *(f"{_APPS}{k}Spec.minReadySeconds" for k in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet")),
    *(f"{_APPS}DeploymentStatus.{f}" for f in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                               "availableReplicas", "unavailableReplicas")),
    *(f"{p}Status.{f}" for p in (f"{_APPS}ReplicaSet", f"{_CORE}ReplicationController")
      for f in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")),
    *(f"{_APPS}StatefulSetStatus.{f}" for f in ("observedGeneration", "readyReplicas", "currentReplicas",
                                                "updatedReplicas")),
    *(f"{_APPS}DaemonSetStatus.{f}" for f in ("observedGeneration", "updatedNumberScheduled", "numberAvailable",
                                              "numberUnavailable")),
})
# pointer booleans: an explicit false on the wire is kept (non-pointer false is dropped, omitempty)
_KEEP_FALSE = frozenset({
    "automountServiceAccountToken", "enableServiceLinks", "hostUsers", "setHostnameAsFQDN", "shareProcessNamespace",
    "privileged", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation",
    "allocateLoadBalancerNodePorts", "immutable", "optional", "controller", "blockOwnerDeletion",
})


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, list[str]]]:
    data: dict[str, dict[str, list[str]]] = json.loads((Path(__file__).parent / "protobuf_fields.json").read_text())
    return data


def read_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The protobuf varint at ``data[pos:]`` and the position after it; ValueError when it is
    truncated or longer than 64 bits."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def wire_fields(data: bytes | memoryview) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, raw value) of each field of one message, in order: an int for
    a varint, a slice of ``data`` (bytes or memoryview, as given) for the others. ValueError on
    a truncated field or an unsupported wire type (groups)."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        num, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = read_varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield num, wire, value


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) triples of one message."""
    return list(wire_fields(data))


def _signed(value: int, bits: int = 64) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(typ: str, wire: int, value: Any) -> Any:
    if typ == "string":
        return bytes(value).decode("utf-8")
    if typ == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if typ == "bool":
        return bool(value)
    if typ in ("int32", "int64"):
        return _signed(int(value))
    if typ in ("uint32", "uint64"):
        return int(value)
    if typ == "double":
        return struct.unpack("<d", value)[0]
    if typ == "float":
        return struct.unpack("<f", value)[0]
    raise ValueError(f"unsupported scalar type {typ}")


def _packed(typ: str, value: bytes) -> list[Any]:
    out: list[Any] = []
    pos = 0
    while pos < len(value):
        if typ in _VARINT:
            item, pos = read_varint(value, pos)
            out.append(_scalar(typ, 0, item))
        elif typ == "double":
            out.append(struct.unpack("<d", value[pos:pos + 8])[0])
            pos += 8
        else:
            out.append(struct.unpack("<f", value[pos:pos + 4])[0])
            pos += 4
    return out


def _special(name: str, data: bytes, depth: int) -> Any:
    """Types whose JSON form is not an object. Returns ``_NONE`` when not special."""
    short = name.rsplit(".", 1)[-1]
    if name.startswith(_META) and short in ("Time", "MicroTime"):
        fields = {num: value for num, _, value in _fields(data)}
        seconds = _signed(int(fields.get(1, 0)))
        if not seconds:
            return None
        moment = datetime.fromtimestamp(seconds, UTC)
        if short == "MicroTime":
            nanos = int(fields.get(2, 0))
            return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if short == "IntOrString":
        fields = {num: value for num, _, value in _fields(data)}
        if int(fields.get(1, 0)) == 1:
            return bytes(fields.get(3, b"")).decode()
        return _signed(int(fields.get(2, 0)))
    if short == "Quantity":
        fields = {num: value for num, _, value in _fields(data)}
        return bytes(fields.get(1, b"")).decode()
    if short == "Duration" and name.startswith(_META):
        fields = {num: value for num, _, value in _fields(data)}
        return f"{_signed(int(fields.get(1, 0))) / 1e9:g}s"
    if short in ("RawExtension", "FieldsV1"):
        fields = {num: value for num, _, value in _fields(data)}
        raw = bytes(fields.get(1, b""))
        return json.loads(raw) if raw else None
    return _NONE


_NONE: Any = object()
# Go structs embedded with ``json:",inline"``: their fields belong to the enclosing JSON object.
_INLINE = {"volumeSource", "handler", "ingressRuleValue", "persistentVolumeSource", "ephemeralContainerCommon",
           "ruleWithOperations", "rule", "localObjectReference"}


def _message(name: str, data: bytes, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("message nesting too deep")
    name = name.lstrip(".")
    special = _special(name, data, depth)
    if special is not _NONE:
        return special
    table = _table().get(name)
    if table is None:
        raise ValueError(f"unknown protobuf message {name}")
    out: dict[str, Any] = {}
    for num, wire, value in _fields(data):
        spec = table.get(str(num))
        if spec is None:
            continue
        fname, typ, label = spec
        if label == "map":
            entry = {n: v for n, _, v in _fields(value)}
            key = bytes(entry.get(1, b"")).decode()
            raw_value = entry.get(2, b"")
            item = (_scalar(typ, 2, raw_value) if typ in ("string", "bytes")
                    else _message(typ, raw_value, depth + 1))
            out.setdefault(fname, {})[key] = item
            continue
        if typ in ("string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"):
            if label == "rep" and wire == 2 and typ not in ("string", "bytes"):
                out.setdefault(fname, []).extend(_packed(typ, value))
                continue
            item = _scalar(typ, wire, value)
        else:
            item = _message(typ, value, depth + 1)
        if label == "rep":
            out.setdefault(fname, []).append(item)
        elif fname in _INLINE and isinstance(item, dict):
            out.update(item)
        elif item is None or item == "" or (item is False and fname not in _KEEP_FALSE) or (
                item == 0 and item is not False and f"{name}.{fname}" in _OMIT_ZERO):
            continue
        else:
            out[fname] = item
    return out


def decode(data: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\x00``-prefixed protobuf body into a JSON-shaped object (ValueError if invalid)."""
    if not data.startswith(MAGIC):
        raise ValueError("protobuf body without the k8s magic prefix")
    try:
        fields = {num: value for num, _, value in _fields(data[len(MAGIC):])}
        type_meta = {num: value for num, _, value in _fields(bytes(fields.get(1, b"")))}
        api_version = bytes(type_meta.get(1, b"")).decode()
        kind = bytes(type_meta.get(2, b"")).decode()
        package = _package(api_version)
        if package is None or not kind:
            raise ValueError(f"protobuf is not supported for {api_version or '?'} {kind or '?'}")
        obj = _message(f"{package}.{kind}", bytes(fields.get(2, b"")))
    except (UnicodeDecodeError, struct.error, json.JSONDecodeError, TypeError, AttributeError) as err:
        raise ValueError(f"malformed protobuf body: {err}") from None
    if not isinstance(obj, dict):
        raise ValueError("protobuf body is not an object")
    return {"apiVersion": api_version, "kind": kind, **obj}


# ---------------------------------------------------------------------------- OpenAPI v2 (gnostic)
# Encoding of a swagger 2.0 document as gnostic's ``openapi.v2.Document`` message, the
# ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` answer of ``/openapi/v2`` that
# client-go's ``OpenAPISchema()`` (kubectl up to 1.28 for apply/explain/validation) decodes.
# Field numbers follow gnostic's OpenAPIv2.proto (wire-format facts only).

OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""The Content-Type of the answer (clients ask for ``...spec.v2@v1.0+protobuf``, but Go's mime
parser rejects the ``@`` in a response type)."""


def _key(num: int, wire: int) -> bytes:
    return _put_varint((num << 3) | wire)


def _put_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(num: int, payload: bytes) -> bytes:
    return _key(num, 2) + _put_varint(len(payload)) + payload


def _str_field(num: int, value: Any) -> bytes:
    return _len_field(num, str(value).encode()) if value not in (None, "") else b""


def _bool_field(num: int, value: Any) -> bytes:
    return _key(num, 0) + b"\x01" if value is True else b""


def _int_field(num: int, value: Any) -> bytes:
    return _key(num, 0) + _put_varint(int(value)) if isinstance(value, int) and not isinstance(value, bool) else b""


def _double_field(num: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return b""
    return _key(num, 1) + struct.pack("<d", float(value))


def _any(value: Any) -> bytes:
    """``openapi.v2.Any`` carrying the value as YAML (JSON is YAML), as gnostic's readers expect."""
    return _str_field(2, json.dumps(value, sort_keys=True))


def _named_any(num: int, name: str, value: Any) -> bytes:
    return _len_field(num, _str_field(1, name) + _len_field(2, _any(value)))


def _extensions(num: int, node: Mapping[str, Any]) -> bytes:
    return b"".join(_named_any(num, k, v) for k, v in node.items() if k.startswith("x-"))


_SCHEMA_STRINGS = {"$ref": 1, "format": 2, "title": 3, "description": 4, "pattern": 13}
_SCHEMA_DOUBLES = {"multipleOf": 6, "maximum": 7, "minimum": 9}
_SCHEMA_BOOLS = {"exclusiveMaximum": 8, "exclusiveMinimum": 10, "uniqueItems": 16, "readOnly": 27}
_SCHEMA_INTS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15, "maxProperties": 17,
                "minProperties": 18}


def _schema(node: Mapping[str, Any]) -> bytes:
    out = bytearray()
    for key, num in _SCHEMA_STRINGS.items():
        out += _str_field(num, node.get(key))
    for key, num in _SCHEMA_DOUBLES.items():
        out += _double_field(num, node.get(key))
    for key, num in _SCHEMA_BOOLS.items():
        out += _bool_field(num, node.get(key))
    for key, num in _SCHEMA_INTS.items():
        out += _int_field(num, node.get(key))
    for name in node.get("required") or ():
        out += _str_field(19, name)
    for value in node.get("enum") or ():
        out += _len_field(20, _any(value))
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out += _len_field(21, _len_field(1, _schema(extra)))
    elif isinstance(extra, bool):
        out += _len_field(21, _key(2, 0) + (b"\x01" if extra else b"\x00"))
    typ = node.get("type")
    if isinstance(typ, str):
        out += _len_field(22, _str_field(1, typ))
    items = node.get("items")
    if isinstance(items, Mapping):
        out += _len_field(23, _len_field(1, _schema(items)))
    for sub in node.get("allOf") or ():
        if isinstance(sub, Mapping):
            out += _len_field(24, _schema(sub))
    props = node.get("properties")
    if isinstance(props, Mapping):
        out += _len_field(25, b"".join(_len_field(1, _str_field(1, k) + _len_field(2, _schema(v)))
                                       for k, v in props.items() if isinstance(v, Mapping)))
    out += _extensions(31, node)
    return bytes(out)


def _parameter(param: Mapping[str, Any]) -> bytes:
    """``ParametersItem``: a body parameter or a query/path parameter."""
    where = param.get("in")
    common = _str_field(3 if where == "body" else 2, where)
    if where == "body":
        body = (_str_field(1, param.get("description")) + _str_field(2, param.get("name")) + common
                + _bool_field(4, param.get("required")) + _len_field(5, _schema(param.get("schema") or {})))
        return _len_field(1, _len_field(1, body))
    sub = (_bool_field(1, param.get("required")) + common + _str_field(3, param.get("description"))
           + _str_field(4, param.get("name")))
    if where == "path":
        sub += _str_field(5, param.get("type")) + _bool_field(19, param.get("uniqueItems"))
        which = 4
    else:
        sub += _str_field(6, param.get("type")) + _bool_field(20, param.get("uniqueItems"))
        which = 3
    return _len_field(1, _len_field(2, _len_field(which, sub)))


def _operation(op: Mapping[str, Any]) -> bytes:
    out = bytearray(_str_field(5, op.get("operationId")))
    for media in op.get("produces") or ():
        out += _str_field(6, media)
    for media in op.get("consumes") or ():
        out += _str_field(7, media)
    for param in op.get("parameters") or ():
        out += _len_field(8, _parameter(param))
    responses = b""
    for code, response in (op.get("responses") or {}).items():
        body = _str_field(1, response.get("description"))
        if isinstance(response.get("schema"), Mapping):
            body += _len_field(2, _len_field(1, _schema(response["schema"])))
        responses += _len_field(1, _str_field(1, code) + _len_field(2, _len_field(1, body)))
    out += _len_field(9, responses)
    out += _extensions(13, op)
    return bytes(out)


_PATH_OPERATIONS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: Mapping[str, Any]) -> bytes:
    out = bytearray()
    for verb, num in _PATH_OPERATIONS.items():
        if isinstance(item.get(verb), Mapping):
            out += _len_field(num, _operation(item[verb]))
    for param in item.get("parameters") or ():
        out += _len_field(9, _parameter(param))
    return bytes(out)


def encode_openapi_v2(doc: Mapping[str, Any]) -> bytes:
    """``doc`` (a swagger 2.0 document as ``openapi.v2_document`` builds it) as a gnostic
    ``openapi.v2.Document`` protobuf message."""
    info = doc.get("info") or {}
    out = bytearray(_str_field(1, doc.get("swagger", "2.0")))
    out += _len_field(2, _str_field(1, info.get("title")) + _str_field(2, info.get("version")))
    paths = b"".join(_len_field(2, _str_field(1, p) + _len_field(2, _path_item(item)))
                     for p, item in (doc.get("paths") or {}).items())
    out += _len_field(8, paths)
    definitions = b"".join(_len_field(1, _str_field(1, name) + _len_field(2, _schema(schema)))
                           for name, schema in (doc.get("definitions") or {}).items())
    out += _len_field(9, definitions)
    return bytes(out)
