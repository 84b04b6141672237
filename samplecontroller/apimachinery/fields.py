"""Field selectors: ``a=b,c!=d`` (``==`` allowed), as the API server accepts them.

``parse`` raises ValueError on bad syntax. ``Selector.matches(get)`` takes a function from a field
path (``metadata.name``) to its string value (None when absent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FieldRequirement", "Selector", "parse"]


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    operator: str  # "=" or "!="
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{self.value}"


@dataclass(frozen=True)
class Selector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, get: Callable[[str], str | None]) -> bool:
        for r in self.requirements:
            actual = get(r.field)
            equal = (actual or "") == r.value
            if equal != (r.operator == "="):
                return False
        return True

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split(text: str) -> list[str]:
    parts, cur, escaped = [], "", False
    for ch in text:
        if escaped:
            cur += ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def parse(text: str) -> Selector:
    reqs: list[FieldRequirement] = []
    if not text.strip():
        return Selector()
    for term in _split(text):
        term = term.strip()
        for op in ("!=", "==", "="):
            if op in term:
                field, _, value = term.partition(op)
                if not field.strip():
                    raise ValueError(f"invalid field selector {text!r}: empty field name in {term!r}")
                reqs.append(FieldRequirement(field.strip(), "!=" if op == "!=" else "=", value.strip()))
                break
        else:
            raise ValueError(f"invalid field selector {text!r}: {term!r} is not field=value or field!=value")
    return Selector(tuple(reqs))
