"""Label selectors: the Kubernetes grammar, equality- and set-based.

``parse("a=b,c!=d,e in (x,y),f notin (z),g,!h")`` gives a ``Selector``; a syntax error raises
ValueError naming the position. ``Selector.matches(labels)`` follows the API semantics: ``!=`` and
``notin`` match when the key is absent; ``in``/``=`` need the key present; ``a>5`` / ``a<5``
need the key present with an integer value. The empty selector matches everything;
``nothing()`` matches nothing. ``str(selector)`` is canonical (requirements sorted by key, set
values sorted), so parsing it again gives an equal selector.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Requirement", "Selector", "everything", "nothing", "parse", "selector_from_label_selector",
           "selector_from_set"]

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|<|>|[^\s!=(),<>]+)")
_INT = re.compile(r"^[-+]?[0-9]+$")


@dataclass(frozen=True)
class Requirement:
    """One term: ``key op values`` with op in =, ==, !=, in, notin, exists, !, gt, lt."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when ``labels`` satisfy this requirement (its key, operator and values)."""
        op = self.operator
        has = self.key in labels
        if op in ("=", "==", "in"):
            return has and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return not has or labels[self.key] not in self.values
        if op == "exists":
            return has
        if op == "!":
            return not has
        if op in ("gt", "lt"):
            if not has:
                return False
            try:
                actual, limit = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return actual > limit if op == "gt" else actual < limit
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == "exists":
            return self.key
        if op == "!":
            return "!" + self.key
        if op in ("in", "notin"):
            return f"{self.key} {op} ({','.join(sorted(self.values))})"
        if op in ("gt", "lt"):
            return f"{self.key} {'>' if op == 'gt' else '<'} {self.values[0]}"
        return f"{self.key}{op}{self.values[0]}"


class Selector:
    """A conjunction of requirements (``_nothing`` marks the selector that matches nothing)."""

    def __init__(self, requirements: Sequence[Requirement] = (), *, _nothing: bool = False) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = _nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """True when ``labels`` (None: no labels) satisfy every requirement."""
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        """True for the selector that selects everything."""
        return not self.requirements and not self._nothing

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and (self.requirements, self._nothing) == (other.requirements,
                                                                                       other._nothing)

    def __hash__(self) -> int:
        return hash((self.requirements, self._nothing))


def everything() -> Selector:
    """The selector that selects every object."""
    return Selector()


def nothing() -> Selector:
    """The selector that selects no object."""
    return Selector(_nothing=True)


def _valid_key(key: str) -> bool:
    """A qualified name: [DNS-subdomain prefix "/"] name (name <= 63 chars)."""
    prefix, slash, name = key.rpartition("/")
    if not name or len(name) > 63 or not _NAME.fullmatch(name):
        return False
    if not slash:
        return True
    return 0 < len(prefix) <= 253 and all(_DNS_LABEL.fullmatch(part) for part in prefix.split("."))


def _check_key(key: str, text: str) -> None:
    if not _valid_key(key):
        raise ValueError(f"invalid label key {key!r} in selector {text!r}")


def _check_value(value: str, text: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise ValueError(f"invalid label value {value!r} in selector {text!r}")


def parse(text: str) -> Selector:
    """Parse a selector string; raises ValueError with a clear message on bad syntax.

    Results are cached (selectors are immutable and the same strings recur).
    """
    return _parse(text)


@functools.lru_cache(maxsize=1024)
def _parse(text: str) -> Selector:
    tokens = [m.group(1) for m in _TOKEN.finditer(text)]
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", text):
        raise ValueError(f"unable to parse label selector {text!r}")
    reqs: list[Requirement] = []
    i = 0

    def take() -> str:
        nonlocal i
        if i >= len(tokens):
            raise ValueError(f"unexpected end of label selector {text!r}")
        i += 1
        return tokens[i - 1]

    def peek() -> str | None:
        return tokens[i] if i < len(tokens) else None

    while i < len(tokens):
        tok = take()
        if tok == "!":
            key = take()
            _check_key(key, text)
            reqs.append(Requirement(key, "!"))
        else:
            key = tok
            _check_key(key, text)
            nxt = peek()
            if nxt is None or nxt == ",":
                reqs.append(Requirement(key, "exists"))
            elif nxt in ("=", "==", "!="):
                op = take()
                value = "" if peek() in (None, ",") else take()
                _check_value(value, text)
                reqs.append(Requirement(key, "=" if op == "==" else op, (value,)))
            elif nxt in ("in", "notin"):
                op = take()
                if take() != "(":
                    raise ValueError(f"expected '(' after {op} in label selector {text!r}")
                values: list[str] = []
                while True:
                    v = take()
                    if v == ")":
                        break
                    if v == ",":
                        continue
                    _check_value(v, text)
                    values.append(v)
                # like Go, an empty set means the empty value: "a in ()" matches a=""
                reqs.append(Requirement(key, op, tuple(sorted(set(values))) or ("",)))
            elif nxt in (">", "<"):
                op = "gt" if take() == ">" else "lt"
                value = take()
                if not _INT.match(value):
                    raise ValueError(f"{key} {nxt} needs an integer value, not {value!r}, in label selector {text!r}")
                reqs.append(Requirement(key, op, (value,)))
            else:
                raise ValueError(f"unexpected {nxt!r} after {key!r} in label selector {text!r}")
        sep = peek()
        if sep is not None:
            if take() != ",":
                raise ValueError(f"expected ',' in label selector {text!r}")
            if peek() is None:
                raise ValueError(f"trailing ',' in label selector {text!r}")
    return Selector(reqs)


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """key=value for every entry (empty mapping: everything)."""
    return Selector([Requirement(k, "=", (v,)) for k, v in (labels or {}).items()])


def selector_from_label_selector(ls: Any) -> Selector:
    """From a metav1.LabelSelector (dict or struct). None means nothing; empty means everything."""
    if ls is None:
        return nothing()
    if isinstance(ls, dict):
        match_labels = ls.get("matchLabels") or {}
        exprs = ls.get("matchExpressions") or []
    else:
        ml = getattr(ls, "match_labels", None)
        match_labels = ml if isinstance(ml, dict) else {}
        me = getattr(ls, "match_expressions", None)
        exprs = [{"key": e.key, "operator": e.operator, "values": list(e.values) if isinstance(e.values, (list, tuple)) else []}
                 for e in (me if isinstance(me, (list, tuple)) else [])]
    reqs = [Requirement(k, "=", (v,)) for k, v in match_labels.items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for e in exprs:
        op = ops.get(e.get("operator", ""))
        if op is None:
            raise ValueError(f"{e.get('operator')!r} is not a valid label selector operator")
        values = tuple(e.get("values") or ())
        if op in ("in", "notin") and not values:
            raise ValueError(f"label selector key {e.get('key')!r}: {e.get('operator')} needs at least one value")
        if op in ("exists", "!") and values:
            raise ValueError(f"label selector key {e.get('key')!r}: {e.get('operator')} takes no values")
        reqs.append(Requirement(e["key"], op, tuple(sorted(set(values))) if op in ("in", "notin") else ()))
    return Selector(reqs)
