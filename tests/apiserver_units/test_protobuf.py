"""Protobuf request bodies: zero values follow Go's encoding (non-pointer omitempty fields are
always on the wire, pointer fields only when set), so the decoded JSON is what kube-apiserver stores."""

from __future__ import annotations

from samplecontroller.apiserver import protobuf


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _msg(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _num(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(value)


def _body(api_version: str, kind: str, obj: bytes) -> bytes:
    type_meta = _msg(1, api_version.encode()) + _msg(2, kind.encode())
    return protobuf.MAGIC + _msg(1, type_meta) + _msg(2, obj)


def test_service_zero_health_check_node_port_is_absent() -> None:
    spec = _msg(4, b"NodePort") + _num(12, 0)  # type, healthCheckNodePort (a non-pointer int32, omitempty)
    obj = protobuf.decode(_body("v1", "Service", _msg(2, spec)))
    assert obj["spec"] == {"type": "NodePort"}


def test_deployment_explicit_zero_replicas_is_kept() -> None:
    spec = _num(1, 0) + _num(5, 0)  # replicas (a pointer: 0 was set), minReadySeconds (non-pointer, omitempty)
    obj = protobuf.decode(_body("apps/v1", "Deployment", _msg(2, spec)))
    assert obj["spec"] == {"replicas": 0}


def test_pointer_false_is_kept_and_plain_false_dropped() -> None:
    spec = _num(11, 0) + _num(21, 0)  # hostNetwork (bool), automountServiceAccountToken (*bool)
    obj = protobuf.decode(_body("v1", "Pod", _msg(2, spec)))
    assert obj["spec"] == {"automountServiceAccountToken": False}
