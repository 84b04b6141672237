"""Decoding of Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``).

kubectl 1.32+ sends typed creates (``kubectl create namespace|configmap|secret|deployment``)
as protobuf. A body is the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message whose
``typeMeta`` names the apiVersion/kind and whose ``raw`` is the object's message. Messages are
decoded with ``protobuf_fields.json``, a table of field numbers/names/types derived from the
upstream ``generated.proto`` files (wire-format facts only) for meta/v1 and every built-in
group/version in k8s.io/api that the server serves (``hack/update_protobuf_fields.py`` adds one).

Contract: ``decode(data)`` returns the object as the JSON-shaped dict Kubernetes would accept,
or raises ``ValueError`` for anything malformed or unknown. Because Go's non-pointer fields are
always encoded, empty strings, ``false`` and zero timestamps are dropped (JSON's omitempty);
integer zeros are kept. The server never *answers* in protobuf (clients accept JSON too).
"""

from __future__ import annotations

import base64
import functools
import json
import struct
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["MAGIC", "decode"]

MAGIC = b"k8s\x00"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"": "core", "meta.k8s.io": "meta"}
# k8s.io/api packages are named after the group's first label (rbac.authorization.k8s.io -> rbac)
_API_GROUPS = {"", "apps", "autoscaling", "batch", "policy", "admissionregistration.k8s.io", "authentication.k8s.io",
               "authorization.k8s.io", "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
               "events.k8s.io", "flowcontrol.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
               "rbac.authorization.k8s.io", "scheduling.k8s.io", "storage.k8s.io"}


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
# non-pointer Go integers that JSON would omit when zero (omitempty)
_OMIT_ZERO = {"generation", "minReadySeconds", "hostPort", "nodePort"}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, list[str]]]:
    data: dict[str, dict[str, list[str]]] = json.loads((Path(__file__).parent / "protobuf_fields.json").read_text())
    return data


def _varint(data: bytes, pos: int) -> tuple[int, int]:
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


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) triples of one message."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        num, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        out.append((num, wire, value))
    return out


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
            item, pos = _varint(value, pos)
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
        elif item is None or item == "" or item is False or (item == 0 and fname in _OMIT_ZERO):
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
