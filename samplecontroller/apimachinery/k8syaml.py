"""YAML read as Kubernetes reads it: sigs.k8s.io/yaml's YAMLToJSON over go-yaml v2.

kubectl, kube-apiserver (application/yaml bodies) and controller-gen all turn YAML into JSON
with sigs.k8s.io/yaml, which parses with go-yaml v2. PyYAML's SafeLoader follows YAML 1.1 to
the letter and differs in ways that break real manifests (for example the plain scalar ``=``,
an enum value in prometheus-operator's CRDs, is YAML 1.1's ``!!value`` type, which SafeLoader
cannot construct). ``KubernetesLoader`` resolves plain scalars as go-yaml v2 does:

- booleans: ``true``/``false``, ``yes``/``no``, ``on``/``off``, ``y``/``n`` (three spellings
  each: lower, Capitalized, UPPER); null: empty, ``~``, ``null``/``Null``/``NULL``;
- integers as Go's ``strconv.ParseInt(s, 0, 64)`` after removing ``_``: ``0777`` is octal
  (511), ``0o17``, ``0x1f``, ``0b101``; up to 2**64-1; floats ``1.5``, ``.5``, ``1e3``,
  ``.inf``/``-.inf``/``.nan``; an integer too large for 64 bits is a float;
- everything else is a string: ``=``, ``1:20`` (no sexagesimal), ``2001-12-14`` (timestamps
  stay strings), ``<<`` only as a merge key;
- an unknown tag (``!foo``, ``!!set``, ``!!omap``...) keeps the node's plain value;
- mapping keys become strings as in the JSON: ``true``/``false``, decimal integers, floats in
  Go's short float32 form; a null key is an error, as in Kubernetes.

Nesting deeper than ``max_depth`` (default ``MAX_DEPTH``) collections is a ``ComposerError``
(a ``yaml.YAMLError``) instead of a RecursionError.

``dump`` writes JSON data as sigs.k8s.io/yaml's JSONToYAML does (kube-apiserver's
``application/yaml`` responses, ``kubectl -o yaml``): go-yaml v2's emitter (libyaml's, as
PyYAML's), keys in go-yaml's order, a string plain unless go-yaml would read it back as another
type (then double-quoted: ``"true"``, ``"1"``, ``""``, ``"2024-01-01T00:00:00Z"``), a string with
a newline as a literal block, floats as Go formats them, lines folded at 80 columns.
"""

from __future__ import annotations

import binascii
import datetime
import decimal
import functools
import math
import re
import struct
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["MAX_DEPTH", "KubernetesLoader", "dump", "json_key", "load", "load_all", "resolve_plain"]

MAX_DEPTH = 200

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MERGE = (_TAG + t for t in ("str", "int", "float", "bool", "null", "merge"))
_TYPED = frozenset({INT, FLOAT, BOOL, NULL})
_SEQ, _MAP = _TAG + "seq", _TAG + "map"

_WORDS: dict[str, tuple[str, Any]] = {}
for _words, _value in ((("y", "yes", "true", "on"), True), (("n", "no", "false", "off"), False)):
    for _w in _words:
        for _spelling in (_w, _w.capitalize(), _w.upper()):
            _WORDS[_spelling] = (BOOL, _value)
for _w in ("", "~", "null", "Null", "NULL"):
    _WORDS[_w] = (NULL, None)
for _w in (".nan", ".NaN", ".NAN"):
    _WORDS[_w] = (FLOAT, math.nan)
for _sign, _inf in (("", math.inf), ("+", math.inf), ("-", -math.inf)):
    for _w in (".inf", ".Inf", ".INF"):
        _WORDS[_sign + _w] = (FLOAT, _inf)

# Go's strconv.ParseInt(s, 0, 64) syntax (after the underscores are removed).
_GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
_INT64 = (-(2**63), 2**63 - 1)


def _go_int(sign: str, digits: str) -> int:
    lowered = digits.lower()
    if lowered.startswith(("0x", "0b", "0o")):
        value = int(digits[2:], {"x": 16, "b": 2, "o": 8}[lowered[1]])
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits[1:], 8)
    else:
        value = int(digits)
    return -value if sign == "-" else value


def resolve_plain(text: str) -> tuple[str, Any]:
    """(tag, value) of a plain (unquoted) scalar, as go-yaml v2's ``resolve`` decides it."""
    if text in _WORDS:
        return _WORDS[text]
    first = text[:1]
    if first == ".":
        if _DOT_FLOAT.fullmatch(text):
            return FLOAT, float(text)
        return STR, text
    if not (first.isdigit() and first.isascii()) and first not in "+-":
        return STR, text
    plain = text.replace("_", "")
    match = _GO_INT.fullmatch(plain)
    if match is not None:
        value = _go_int(match.group(1), match.group(2))
        if _INT64[0] <= value <= _INT64[1] or (match.group(1) == "" and value < 2**64):
            return INT, value
    if _YAML_FLOAT.fullmatch(plain):
        number = float(plain)
        if not math.isinf(number):
            return FLOAT, number
    if match is not None:  # out of range and not a float: Go's big.Int
        return INT, _go_int(match.group(1), match.group(2))
    return STR, text


def _go_float32_key(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 32), as sigs.k8s.io/yaml turns a float key into a string."""
    if math.isnan(value):
        return ".nan"
    as32 = struct.unpack("f", struct.pack("f", value))[0] if not math.isinf(value) else value
    if math.isinf(as32):  # beyond float32's range: +Inf once converted, as in Go
        return ".inf" if as32 > 0 else "-.inf"
    shortest = f"{as32:.8e}"
    for precision in range(9):
        candidate = f"{as32:.{precision}e}"
        if struct.unpack("f", struct.pack("f", float(candidate)))[0] == as32:
            shortest = candidate
            break
    mantissa, exponent = shortest.split("e")
    exp = int(exponent)
    if exp < -4 or exp >= 6:
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{exp:+03d}"
    return format(decimal.Decimal(shortest).normalize(), "f")


def json_key(key: Any) -> str | None:
    """A scalar map key as sigs.k8s.io/yaml turns it into a JSON object key (strings as they are,
    booleans and integers spelled out, floats as Go's 32-bit shortest form); None for a key it
    refuses (null, a map or a list)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_key(key)
    return None


def _json_key(key: Any, node: Node) -> str:
    converted = json_key(key)
    if converted is not None:
        return converted
    raise ConstructorError(None, None, f"unsupported map key of type {type(key).__name__}: {key!r}",
                           node.start_mark)


class KubernetesLoader(yaml.SafeLoader):
    """A SafeLoader that reads YAML as Kubernetes does (see the module docstring)."""

    max_depth = MAX_DEPTH

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        """The tag of a plain scalar as go-yaml v2 resolves it (``on``/``off`` booleans, ``0777`` octal, ...)."""
        if kind is ScalarNode and implicit[0]:
            return MERGE if value == "<<" else resolve_plain(value)[0]
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call,no-any-return]

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """PyYAML's, refusing documents nested deeper than ``max_depth`` (a ComposerError, not a RecursionError)."""
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {self.max_depth} levels",
                                                  self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def construct_document(self, node: Node) -> Any:
        """One document as Kubernetes reads it: standard tags resolved as sigs.k8s.io/yaml does."""
        check_aliasing(node)
        return self._fast(node, {})

    def _fast(self, node: Node, memo: dict[int, Any]) -> Any:
        """The value of ``node``: the standard tags (str, int, float, bool, null, map, seq) built
        directly (a tenth of the constructor machinery's time on a large CRD), anything else
        (merge keys, binary, unknown tags) by the constructors above. An anchored node shared by
        aliases gives one shared value, as PyYAML's constructor does."""
        tag = node.tag
        if isinstance(node, ScalarNode):
            if tag == STR:
                return node.value
            if tag in _TYPED:
                return self.construct_typed_scalar(node)
            return self.construct_object(node, deep=True)  # type: ignore[no-untyped-call]
        found = memo.get(id(node))
        if found is not None:
            return found
        if isinstance(node, SequenceNode) and tag == _SEQ:
            items: list[Any] = []
            memo[id(node)] = items
            items.extend(self._fast(child, memo) for child in node.value)
            return items
        if isinstance(node, MappingNode) and tag == _MAP and not any(k.tag == MERGE for k, _ in node.value):
            out: dict[str, Any] = {}
            memo[id(node)] = out
            for key_node, value_node in node.value:
                out[_json_key(self._fast(key_node, memo), key_node)] = self._fast(value_node, memo)
            return out
        value = self.construct_object(node, deep=True)  # type: ignore[no-untyped-call]
        memo[id(node)] = value
        return value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping whose keys are turned into JSON strings, as sigs.k8s.io/yaml does."""
        self.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _json_key(self.construct_object(key_node, deep=deep), key_node)  # type: ignore[no-untyped-call]
            out[key] = self.construct_object(value_node, deep=deep)  # type: ignore[no-untyped-call]
        return out

    def construct_typed_scalar(self, node: ScalarNode) -> Any:
        """An implicit or explicit !!int, !!float, !!bool or !!null scalar (go-yaml v2 rules)."""
        text = self.construct_scalar(node)  # type: ignore[no-untyped-call]
        tag, value = resolve_plain(text)
        if tag == node.tag:
            return value
        if node.tag == FLOAT and tag == INT:
            return float(value)
        raise ConstructorError(None, None, f"cannot decode !!{tag.removeprefix(_TAG)} `{text}` as a "
                               f"!!{node.tag.removeprefix(_TAG)}", node.start_mark)

    def construct_plain_string(self, node: Node) -> Any:
        """A timestamp or an unknown tag keeps the node's value (go-yaml v2 into interface{})."""
        if isinstance(node, ScalarNode):
            return self.construct_scalar(node)  # type: ignore[no-untyped-call]
        if isinstance(node, SequenceNode):
            return self.construct_yaml_seq(node)  # type: ignore[no-untyped-call]
        return self.construct_yaml_map(node)  # type: ignore[no-untyped-call]

    def construct_binary(self, node: ScalarNode) -> str:
        """A ``!!binary`` scalar: its base64 content decoded to text."""
        text = self.construct_scalar(node)  # type: ignore[no-untyped-call]
        try:
            return binascii.a2b_base64(text.encode("ascii")).decode("utf-8", "replace")
        except (binascii.Error, UnicodeEncodeError) as err:
            raise ConstructorError(None, None, f"failed to decode base64 data: {err}", node.start_mark) from err

    def construct_unknown(self, node: Node) -> Any:
        """An unknown tag: the value as a plain string."""
        return self.construct_plain_string(node)


KubernetesLoader.yaml_constructors = dict(yaml.SafeLoader.yaml_constructors)
for _tag in (INT, FLOAT, BOOL, NULL):
    KubernetesLoader.add_constructor(_tag, KubernetesLoader.construct_typed_scalar)
for _tag in ("timestamp", "set", "omap", "pairs", "value"):
    KubernetesLoader.add_constructor(_TAG + _tag, KubernetesLoader.construct_plain_string)
KubernetesLoader.add_constructor(_TAG + "binary", KubernetesLoader.construct_binary)
KubernetesLoader.add_constructor(None, KubernetesLoader.construct_unknown)


# go-yaml v2's bound on alias expansion (decode.go, allowedAliasRatio): a document whose aliases
# expand it far beyond its size (a "billion laughs") is refused, as kubectl and kube-apiserver refuse it.
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def check_aliasing(root: Node) -> None:
    """Raise a ComposerError when decoding ``root`` with its aliases expanded would trip go-yaml v2's
    "document contains excessive aliasing" (counted without expanding: the composed nodes form a
    graph in which an alias is a second edge to an anchored node)."""
    seen: set[int] = set()
    alias_edges: set[tuple[int, int]] = set()
    walk: list[tuple[int, Node]] = [(0, root)]
    while walk:  # preorder in document order: the first edge to a node defines it, every later one is an alias
        parent, node = walk.pop()
        if id(node) in seen:
            alias_edges.add((parent, id(node)))
            continue
        seen.add(id(node))
        walk.extend((id(node), child) for child in reversed(_children(node)))
    if not alias_edges:
        return
    decodes: dict[int, int] = {}
    aliased: dict[int, int] = {}
    for node in _postorder(root):  # children before parents
        total, inside = 1, 0
        for child in _children(node):
            total += decodes.get(id(child), 1)
            if (id(node), id(child)) in alias_edges:
                inside += decodes.get(id(child), 1)
            else:
                inside += aliased.get(id(child), 0)
        decodes[id(node)], aliased[id(node)] = total, inside
    total, inside = decodes[id(root)], aliased[id(root)]
    if inside > 100 and total > ALIAS_RATIO_LOW and inside / total > _allowed_alias_ratio(total):
        raise yaml.composer.ComposerError(None, None, "document contains excessive aliasing", root.start_mark)


def _postorder(root: Node) -> list[Node]:
    """Every distinct node of the graph once, each after all of its children."""
    out: list[Node] = []
    done: set[int] = set()
    open_: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            open_.discard(id(node))
            done.add(id(node))
            out.append(node)
            continue
        if id(node) in open_:
            raise yaml.composer.ComposerError(None, None, "anchor value contains itself", node.start_mark)
        open_.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in done)
    return out


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


if yaml.__with_libyaml__:
    CParser = yaml.cyaml.CParser  # type: ignore[attr-defined]

    class CKubernetesLoader(CParser, KubernetesLoader):  # type: ignore[misc,valid-type]
        """``KubernetesLoader`` over libyaml's parser and composer (about ten times faster); nesting is
        bounded through the resolver's descend/ascend hooks, which libyaml's composer calls per node."""

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)  # type: ignore[no-untyped-call]
            yaml.resolver.Resolver.__init__(self)  # type: ignore[no-untyped-call]
            self._depth = 0

        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            self._depth += 1
            if self._depth > self.max_depth:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {self.max_depth} levels", None)
            super().descend_resolver(current_node, current_index)  # type: ignore[no-untyped-call]

        def ascend_resolver(self) -> None:
            self._depth -= 1
            super().ascend_resolver()  # type: ignore[no-untyped-call]

    FastLoader: type[KubernetesLoader] = CKubernetesLoader
else:  # pragma: no cover - PyYAML built without libyaml
    FastLoader = KubernetesLoader


def load(text: str | bytes) -> Any:
    """The first document of ``text`` (None when empty). Raises ``yaml.YAMLError``."""
    return yaml.load(text, Loader=FastLoader)


def load_all(text: str | bytes) -> Iterator[Any]:
    """Every document of ``text``, lazily. Raises ``yaml.YAMLError``."""
    return yaml.load_all(text, Loader=FastLoader)


# --------------------------------------------------------------------------------------------
# Writing: JSON data as sigs.k8s.io/yaml's JSONToYAML writes it (go-yaml v2's Marshal)
# --------------------------------------------------------------------------------------------

_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
                        r"(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})"
                        r"| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?")
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")


def _is_timestamp(text: str) -> bool:
    """go-yaml v2's parseTimestamp: a date (and time) it would read back as a timestamp."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    try:
        datetime.date(*(int(g) for g in match.groups()))
    except ValueError:
        return False
    return True


def _plain_tag(text: str) -> str:
    """The tag go-yaml v2 resolves the plain scalar ``text`` to when it writes a string (its
    ``resolve``, timestamps and sexagesimal floats included: strings it would quote)."""
    tag = resolve_plain(text)[0]
    if tag == STR and (_is_timestamp(text) or _BASE60_FLOAT.fullmatch(text)):
        return _TAG + "timestamp"
    return tag


def _go_key_order(a: str, b: str) -> int:
    """go-yaml v2's keyList.Less for string keys: letters after other characters, runs of digits
    compared as numbers ("a2" before "a10")."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return -1 if a[i] < b[i] else 1
        if al or bl:
            return 1 if al else -1
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return -1 if an < bn else 1
        if ai != bi:
            return -1 if ai < bi else 1
        return -1 if a[i] < b[i] else 1
    return (len(a) > len(b)) - (len(a) < len(b))


def _go_float(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 64), as go-yaml v2 writes a float (``.inf``, ``.nan``):
    the shortest digits that read back as ``value``, in exponent form below 1e-4 and from 1e6."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    _, digit_tuple, dexp = decimal.Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(dexp, int)
    digits = "".join(map(str, digit_tuple))
    exp = len(digits) - 1 + dexp  # of the first digit
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole = digits[:exp + 1].ljust(exp + 1, "0")
    return sign + whole + ("." + digits[exp + 1:] if len(digits) > exp + 1 else "")


_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _GoYAMLDumper(_Dumper):  # type: ignore[misc]
    """PyYAML's dumper (libyaml's emitter, as go-yaml v2's) choosing what go-yaml v2 chooses."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            return _plain_tag(value)
        return super().resolve(kind, value, implicit)


def _represent_str(dumper: Any, value: str) -> Any:
    if "\n" in value:
        style: str | None = "|"
    elif _plain_tag(value) == STR:
        style = None  # plain, unless the emitter finds it cannot be (then single-quoted)
    else:
        style = '"'
    return dumper.represent_scalar(STR, value, style=style)


def _represent_dict(dumper: Any, value: dict[str, Any]) -> Any:
    keys = sorted(value, key=functools.cmp_to_key(_go_key_order))
    return dumper.represent_mapping(_MAP, [(k, value[k]) for k in keys])


def _represent_float(dumper: Any, value: float) -> Any:
    text = _go_float(value)  # plain, as go-yaml writes it, also where it reads back as an int ("100")
    return dumper.represent_scalar(_plain_tag(text), text)


_GoYAMLDumper.add_representer(str, _represent_str)
_GoYAMLDumper.add_representer(dict, _represent_dict)
_GoYAMLDumper.add_representer(float, _represent_float)


def dump(value: Any) -> str:
    """JSON data (dicts with string keys, lists, strings, numbers, booleans, None) as YAML, as
    sigs.k8s.io/yaml's JSONToYAML writes it (see the module docstring)."""
    return str(yaml.dump(value, Dumper=_GoYAMLDumper, default_flow_style=False, allow_unicode=True,
                         sort_keys=False, width=80, indent=2))
