"""Field selectors: ``a=b,c!=d`` (``==`` allowed), as the API server accepts them.

Like Go's ``fields.ParseSelector``: terms are separated by ``,``; each term splits at the first
operator (``!=``, ``==`` or ``=``, scanning left to right); ``\\``, ``,`` and ``=`` inside a field
or value are escaped with a backslash. Surrounding whitespace of a field or value is ignored.
``parse`` raises ValueError naming the bad term. ``Selector.matches(get)`` takes a function from a
field path (``metadata.name``) to its string value (None when absent, which compares as "").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["FieldRequirement", "Selector", "everything", "parse", "selector_from_set"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True)
class FieldRequirement:
    """One term of a field selector: ``field`` ``=`` or ``!=`` ``value``."""

    field: str
    operator: str  # "=" or "!="
    value: str

    def matches(self, actual: str | None) -> bool:
        """True when ``actual`` (None counts as "") satisfies the term."""
        return ((actual or "") == self.value) == (self.operator == "=")

    def __str__(self) -> str:
        return f"{_escape(self.field)}{self.operator}{_escape(self.value)}"


@dataclass(frozen=True)
class Selector:
    """A conjunction of field requirements; the empty selector matches everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, get: Callable[[str], str | None]) -> bool:
        """True when every term matches the values ``get(field_path)`` returns."""
        return all(r.matches(get(r.field)) for r in self.requirements)

    def matches_fields(self, values: Mapping[str, str]) -> bool:
        """``matches`` over a mapping of field path -> value (Go's fields.Set)."""
        return self.matches(values.get)

    def empty(self) -> bool:
        """True for the selector that selects everything (no terms)."""
        return not self.requirements

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if some requirement pins it (Go's RequiresExactMatch)."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def everything() -> Selector:
    """The empty field selector: selects every object."""
    return Selector()


def selector_from_set(values: Mapping[str, str]) -> Selector:
    """field=value for every entry, sorted by field."""
    return Selector(tuple(FieldRequirement(k, "=", v) for k, v in sorted(values.items())))


def _split_terms(text: str) -> list[str]:
    """Split at unescaped commas, keeping escapes (they are resolved per field/value)."""
    parts, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if ch == ",":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(text: str, whole: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text) or text[i + 1] not in "\\,=":
                raise ValueError(f"invalid field selector {whole!r}: bad escape in {text!r}")
            out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _split_term(term: str) -> tuple[str, str, str] | None:
    i = 0
    while i < len(term):
        if term[i] == "\\":
            i += 2
            continue
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
        i += 1
    return None


def parse(text: str) -> Selector:
    """Parse a field selector; "" (or only whitespace) is the empty selector."""
    if not text.strip():
        return Selector()
    reqs: list[FieldRequirement] = []
    for term in _split_terms(text):
        if not term.strip():
            continue  # like Go, empty terms ("a=b,") are skipped
        parts = _split_term(term)
        if parts is None:
            raise ValueError(f"invalid field selector {text!r}: {term.strip()!r} is not field=value or field!=value")
        field, op, value = parts
        field = _unescape(field.strip(), text)
        if not field:
            raise ValueError(f"invalid field selector {text!r}: empty field name in {term.strip()!r}")
        reqs.append(FieldRequirement(field, "!=" if op == "!=" else "=", _unescape(value.strip(), text)))
    return Selector(tuple(reqs))
