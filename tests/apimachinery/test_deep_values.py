"""The toolkit's own decoding of values nested thousands deep (issue 43 item 12): the embedded
server holds 10,000 levels; the client's models and ``objects`` helpers, built on msgspec and
``copy.deepcopy``, stop at the interpreter's recursion limit with a RecursionError (a Python
exception the caller can catch), never a crash; an object a few hundred levels deep decodes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import objects


class Blob(msgspec.Struct, kw_only=True):
    spec: Any = None


def blob(levels: int) -> bytes:
    return b'{"spec":' + b'{"a":' * levels + b"1" + b"}" * levels + b"}"


def test_a_few_hundred_levels_decode() -> None:
    decoded = objects.decode(Blob, blob(300))
    assert objects.from_dict(Blob, objects.to_dict(decoded)) == decoded


def test_ten_thousand_levels_are_a_recursion_error_not_a_crash() -> None:
    raw = blob(10_000)
    value: Any = 1
    for _ in range(10_000):
        value = {"a": value}
    as_dict = {"spec": value}
    for call in (lambda: objects.decode(Blob, raw), lambda: objects.to_dict(as_dict),
                 lambda: objects.from_dict(Blob, as_dict), lambda: objects.from_dict(dict, as_dict)):
        with pytest.raises(RecursionError):
            call()
