"""Helpers on decoded JSON objects shared by the storage layer, strategies and controllers."""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from samplecontroller.apiserver import bodies

__all__ = ["as_list", "as_mapping", "as_str", "copy_json", "deep_get", "json_path_parts", "meta_of", "name_of",
           "new_uid", "now_rfc3339", "parse_rfc3339", "random_suffix", "rfc3339", "same_time", "set_condition"]

_encode = bodies.encode
_decode = bodies.decode
_clock: list[Any] = [0, ""]
_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand.String: no vowels, no 0/1/3


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with second precision (cached per second)."""
    now = int(time.time())
    if _clock[0] != now:
        _clock[0] = now
        _clock[1] = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_clock[1])


def new_uid() -> str:
    """A random (version 4) UUID as text, as ``str(uuid.uuid4())`` gives it without building a
    ``UUID`` object (a create's uid)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def rfc3339(epoch: float) -> str:
    """``epoch`` (seconds) as RFC 3339 UTC with second precision (rounded up)."""
    return datetime.fromtimestamp(math.ceil(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    """The epoch seconds of an RFC 3339 timestamp (``...Z`` or with an offset); ValueError if it is none."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def meta_of(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj["metadata"]``, replaced by an empty object if it is not one."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def deep_get(obj: Any, *path: str, default: Any = None) -> Any:
    """The value at ``path`` (``default`` where it is null, or an object along it is missing or
    is not a mapping); never raises, whatever the shape of ``obj``."""
    for part in path:
        if type(obj) is not dict and not isinstance(obj, Mapping):  # the ABC check only for other mappings
            return default
        obj = obj.get(part)
    return default if obj is None else obj


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one (a field of any shape read as an object)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """``value`` if it is a string, else ""."""
    return value if isinstance(value, str) else ""


def name_of(obj: Any) -> str:
    """``metadata.name`` ("" when missing)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return str(meta.get("name") or "") if isinstance(meta, dict) else ""


def same_time(a: Any, b: Any) -> bool:
    """Whether two RFC 3339 timestamps name the same second (``Z`` vs ``+00:00``)."""
    try:
        return datetime.fromisoformat(str(a)) == datetime.fromisoformat(str(b))
    except ValueError:
        return False


def json_path_parts(path: str) -> list[str]:
    """``.spec.replicas`` -> ``["spec", "replicas"]``."""
    return [p for p in path.strip().lstrip(".").split(".") if p]


def random_suffix(n: int = 5) -> str:
    """``n`` random characters as apimachinery's ``utilrand.String`` makes them (generateName,
    generated volume names)."""
    return "".join(random.choices(_SUFFIX_CHARS, k=n))


def copy_json(obj: Any) -> Any:
    """A deep copy of a JSON value."""
    return _decode(_encode(obj))


def set_condition(obj: dict[str, Any], ctype: str, status: str, reason: str, message: str) -> None:
    """Set condition ``ctype`` in ``obj.status.conditions`` (lastTransitionTime moves only when
    the status changes)."""
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
