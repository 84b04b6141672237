"""Helpers over API objects that are msgspec Structs or plain dicts.

``to_dict`` gives the wire form (camelCase keys, unset fields absent); ``from_dict`` and
``decode`` build a model from the wire form; ``replace`` returns a changed copy of a frozen struct
(the documented way to modify a cached object); ``deep_copy`` copies anything.

``null`` where the model allows none (a field the schema does not mark ``nullable``) is read as
absent, as Go's encoding/json reads it (null leaves a field at its zero value, a pointer nil) and
as kube-apiserver prunes it from custom resources: a manifest that the server accepts decodes.
The typed fast path is tried first; only a value with such a null takes the slower pruning path.
"""

from __future__ import annotations

import copy
import decimal
import functools
import math
import re
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
# A JSON float token (outside strings) may be near: the slow path runs only then.
_FLOAT_HINT = re.compile(rb"[:,\[]\s*-?[0-9]+(?:\.[0-9]|[eE])")
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')


def encode(obj: Any) -> bytes:
    """JSON bytes of a struct or dict, numbers written as Go's encoding/json writes them (``go_floats``)."""
    return go_floats(_encoder.encode(obj))


def go_float(value: float) -> str:
    """A float as Go's encoding/json writes a float64: ``100`` (not ``100.0``), ``1e+21``, ``1e-7``, ``-0``."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        sign = exponent[:1] if exponent[:1] in "+-" else "+"
        digits = exponent.lstrip("+-")
        if sign == "-":
            digits = digits.lstrip("0") or "0"
        elif len(digits) < 2:
            digits = "0" + digits
        return f"{mantissa}e{sign}{digits}"
    return format(decimal.Decimal(repr(value)).normalize(), "f")


def go_floats(data: bytes) -> bytes:
    """JSON ``data`` with every float token rewritten as Go writes it (integers and strings unchanged):
    decode then encode gives Go's bytes back, so a manifest round-trips as kubectl sends it."""
    if not _FLOAT_HINT.search(data):
        return data

    def rewrite(match: re.Match[bytes]) -> bytes:
        token = match.group()
        if token[:1] == b'"' or not any(c in token for c in b".eE"):
            return token
        value = float(token)
        if math.isinf(value):
            return token
        return go_float(value).encode()

    return _TOKENS.sub(rewrite, data)


def decode(model: type[T], data: bytes | str) -> T:
    """Decode JSON into ``model`` (``dict`` gives a plain dict); a null the model does not allow
    is read as absent (see the module docstring)."""
    try:
        return msgspec.json.decode(data, type=model)
    except msgspec.ValidationError as err:
        if "got `null`" not in str(err):
            raise
    return msgspec.convert(prune_nulls(msgspec.json.decode(data), model), type=model)


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
    return decode(model, _encoder.encode(data))


def prune_nulls(value: Any, model: Any) -> Any:
    """``value`` (JSON values) without the nulls that ``model`` has no place for, at any depth:
    the keys of struct fields whose type does not admit None are dropped (the field is then
    unset, or its Go zero value when required). Other values are returned as they are."""
    return _prune(value, _type_info(model))


@functools.lru_cache(maxsize=256)
def _type_info(model: Any) -> msgspec.inspect.Type:
    return msgspec.inspect.type_info(model)


def _admits_none(t: msgspec.inspect.Type) -> bool:
    if isinstance(t, msgspec.inspect.NoneType | msgspec.inspect.AnyType):
        return True
    return isinstance(t, msgspec.inspect.UnionType) and any(_admits_none(u) for u in t.types)


def _prune(value: Any, t: msgspec.inspect.Type) -> Any:
    if isinstance(t, msgspec.inspect.UnionType):
        for alternative in t.types:
            if isinstance(value, dict) and isinstance(alternative, msgspec.inspect.StructType | msgspec.inspect.DictType):
                return _prune(value, alternative)
            if isinstance(value, list) and isinstance(alternative, msgspec.inspect.ListType
                                                      | msgspec.inspect.VarTupleType):
                return _prune(value, alternative)
        return value
    if isinstance(t, msgspec.inspect.StructType) and isinstance(value, dict):
        out = dict(value)
        for field in t.fields:
            if field.encode_name not in out:
                continue
            if out[field.encode_name] is None and not _admits_none(field.type):
                del out[field.encode_name]
            else:
                out[field.encode_name] = _prune(out[field.encode_name], field.type)
        return out
    if isinstance(t, msgspec.inspect.ListType | msgspec.inspect.VarTupleType) and isinstance(value, list):
        return [_prune(item, t.item_type) for item in value]
    if isinstance(t, msgspec.inspect.DictType) and isinstance(value, dict):
        return {k: _prune(v, t.value_type) for k, v in value.items()}
    return value


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


class GoEncoder:
    """``encode`` as an object with msgspec's ``Encoder.encode`` shape, for modules that hold an encoder."""

    @staticmethod
    def encode(obj: Any) -> bytes:
        """``objects.encode(obj)``: JSON as Go writes it (integral floats without ``.0``)."""
        return encode(obj)


ENCODER = GoEncoder()
