"""Helpers over API objects that are msgspec Structs or plain dicts.

``to_dict`` gives the wire form (camelCase keys, unset fields absent); ``from_dict`` and
``decode`` build a model from the wire form; ``replace`` returns a changed copy of a frozen struct
(the documented way to modify a cached object); ``deep_copy`` copies anything.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


def encode(obj: Any) -> bytes:
    """JSON bytes of a struct or dict."""
    return _encoder.encode(obj)


def decode(model: type[T], data: bytes | str) -> T:
    """Decode JSON into ``model`` (``dict`` gives a plain dict)."""
    return msgspec.json.decode(data, type=model)


def to_dict(obj: Any) -> dict[str, Any]:
    """The wire form of ``obj`` as a new dict (a dict is deep-copied)."""
    if isinstance(obj, dict):
        return copy.deepcopy(obj)
    result = msgspec.json.decode(_encoder.encode(obj))
    if not isinstance(result, dict):
        raise TypeError(f"{type(obj).__name__} does not encode to a JSON object")
    return result


def from_dict(model: type[T], data: dict[str, Any]) -> T:
    """Build ``model`` from a wire-form dict (validating types)."""
    if model is dict:
        return copy.deepcopy(data)  # type: ignore[return-value]
    return msgspec.json.decode(_encoder.encode(data), type=model)


def replace(obj: T, **changes: Any) -> T:
    """A copy of frozen struct ``obj`` with ``changes`` applied (a dict: a shallow-merged copy)."""
    if isinstance(obj, dict):
        return {**obj, **changes}  # type: ignore[return-value]
    return msgspec.structs.replace(obj, **changes)  # type: ignore[type-var]


def deep_copy(obj: T) -> T:
    """A deep copy. Frozen structs are immutable but may hold dicts; those are copied too."""
    if isinstance(obj, dict):
        return copy.deepcopy(obj)  # type: ignore[return-value]
    return msgspec.json.decode(_encoder.encode(obj), type=type(obj))
