"""Request bodies within the limits kube-apiserver enforces.

- ``MAX_BODY_BYTES`` (3 MiB, after any Content-Encoding is undone): a larger body is a 413
  ``RequestEntityTooLarge`` (kube-apiserver's ``limitedReadBody``).
- ``MAX_OBJECT_BYTES`` (1.5 MiB, etcd's default ``--max-request-bytes``): an object whose JSON
  encoding is larger is not stored (413, where kube-apiserver passes etcd's error on as a 500).
- ``MAX_DEPTH`` (10,000, Go's encoding/json ``maxNestingDepth`` and go-yaml's ``max_flow_level``):
  JSON and YAML nested deeper are rejected with 400. Values this deep are beyond msgspec's and
  the interpreter's C recursion (1,500 levels on 3.12), so ``decode``/``encode`` fall back to
  the iterative ``decode_deep``/``encode_deep``, and a request that holds a value nested
  ``DEEP`` or more levels runs its recursive walks (validation, pruning, patches, managed
  fields) under a raised recursion limit (``deep_request``/``note_deep``), on the server
  thread's large stack (``SERVER_STACK_SIZE``).
- YAML is converted to JSON values the way sigs.k8s.io/yaml does: plain scalars resolve as in
  go-yaml v2 (``k8syaml.resolve_plain``: ``1:20`` is a string, ``0o17`` an integer), map keys become strings
  (a null or collection key is an error), timestamps stay strings, ``.inf``/``.nan`` are
  errors, one document only. Aliases are expanded as copies, and a document whose expansion
  is mostly aliases is rejected exactly as go-yaml does ("document contains excessive
  aliasing", the CVE-2019-11253 fix), as is an anchor that contains itself. The whole
  conversion is iterative: no input can exhaust the Python stack.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import json
import math
import re
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import yaml

from samplecontroller.apimachinery import k8syaml

__all__ = ["DEEP", "MAX_BODY_BYTES", "MAX_DEPTH", "MAX_OBJECT_BYTES", "SERVER_STACK_SIZE", "BodyError", "check_depth",
           "big_stack", "decode", "decode_deep", "deep_request", "equal", "depth_error", "depth_of", "encode", "encode_deep", "load_yaml",
           "note_deep"]

MAX_BODY_BYTES = 3 * 1024 * 1024
MAX_OBJECT_BYTES = 1536 * 1024
MAX_DEPTH = 10_000
DEEP = 100  # from this depth on, a request's walks get the raised recursion limit
DEEP_RECURSION_LIMIT = 8 * MAX_DEPTH + 20_000  # a few frames per level for each walk, and the server's own
_STORED_DEPTH = 3 * MAX_DEPTH  # what the server wrote: managedFields repeat an object's nesting
SERVER_STACK_SIZE = 512 * 1024 * 1024  # address space only; covers DEEP_RECURSION_LIMIT C-level frames on 3.11

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


class BodyError(ValueError):
    """The body cannot be turned into JSON values (the message says why, as Kubernetes would)."""


def depth_error() -> BodyError:
    return BodyError(f"exceeded max depth of {MAX_DEPTH}")


def depth_of(value: Any, stop: int = MAX_DEPTH + 1) -> int:
    """How many containers deep ``value`` nests (0 for a scalar, 1 for ``{}``), counting at most
    to ``stop``; iterative."""
    level, depth = [value], 0
    while level and depth < stop:
        if not any(type(item) is dict or type(item) is list or type(item) is tuple for item in level):
            break
        depth += 1
        deeper: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item if type(item) in (list, tuple) else ()
            deeper.extend(child for child in children if type(child) in (dict, list, tuple))
        level = deeper
    return depth


def check_depth(value: Any, raw: bytes | None = None) -> None:
    """Raise ``BodyError`` if ``value`` (JSON values) nests deeper than ``MAX_DEPTH``, and
    ``note_deep`` a value ``DEEP`` or more levels deep. ``raw``, the JSON it was decoded from,
    lets small bodies skip the walk (fewer brackets than levels)."""
    if raw is not None and raw.count(b"[") + raw.count(b"{") < DEEP:
        return
    depth = depth_of(value)
    if depth > MAX_DEPTH:
        raise depth_error()
    if depth >= DEEP:
        note_deep()


# ------------------------------------------------------------------ deep values in a request

_deep_cell: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("deep_request", default=None)
_deep_lock = threading.Lock()
_deep_holders = 0
_saved_limit = 0


@contextlib.contextmanager
def deep_request() -> Iterator[None]:
    """The scope of one request: ``note_deep`` within it raises the process's recursion limit to
    ``DEEP_RECURSION_LIMIT`` until the last such request ends (the limit is process-wide; it is
    raised only while a deep value is being handled)."""
    cell = [False]
    token = _deep_cell.set(cell)
    try:
        yield
    finally:
        _deep_cell.reset(token)
        if cell[0]:
            _release_deep()


def note_deep() -> None:
    """The current request handles a value ``DEEP`` or more levels deep (no-op outside
    ``deep_request``, or when already noted)."""
    global _deep_holders, _saved_limit
    cell = _deep_cell.get()
    if cell is None or cell[0]:
        return
    cell[0] = True
    with _deep_lock:
        if _deep_holders == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, DEEP_RECURSION_LIMIT))
        _deep_holders += 1


_stack_lock = threading.Lock()


@contextlib.contextmanager
def big_stack() -> Iterator[None]:
    """Threads started within get a ``SERVER_STACK_SIZE`` stack (reserved address space: 3.11
    runs the deep C-level recursion of values nested thousands deep on the thread's stack);
    the previous size is restored after (``threading.stack_size`` is process-wide)."""
    with _stack_lock:
        previous = threading.stack_size()
        try:
            threading.stack_size(SERVER_STACK_SIZE)
        except (ValueError, RuntimeError):  # a platform without it: the default stack
            pass
        try:
            yield
        finally:
            threading.stack_size(previous)


def _release_deep() -> None:
    global _deep_holders
    with _deep_lock:
        _deep_holders -= 1
        if _deep_holders == 0:
            sys.setrecursionlimit(_saved_limit)


# ------------------------------------------------------------------ JSON at any depth


def equal(a: Any, b: Any) -> bool:
    """``a == b`` for JSON values, also nested beyond the interpreter's C recursion (3.12 stops
    ``==`` at 1,500 levels whatever the recursion limit): compared iteratively then."""
    try:
        return bool(a == b)
    except RecursionError:
        pass
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if type(x) is dict and type(y) is dict:
            if x.keys() != y.keys():
                return False
            pairs.extend((v, y[k]) for k, v in x.items())
        elif type(x) in (list, tuple) and type(y) in (list, tuple):
            if type(x) is not type(y) or len(x) != len(y):
                return False
            pairs.extend(zip(x, y, strict=True))
        elif type(x) in (dict, list, tuple) or type(y) in (dict, list, tuple) or x != y:
            return False
    return True


_msgspec_encode = msgspec.json.Encoder().encode
_msgspec_decode = msgspec.json.Decoder().decode


def encode(value: Any) -> bytes:
    """msgspec's JSON encoding of ``value``; ``encode_deep`` for a value nested beyond it."""
    try:
        return _msgspec_encode(value)
    except RecursionError:
        note_deep()
        return encode_deep(value)


def decode(raw: bytes) -> Any:
    """msgspec's decoding of JSON ``raw``; ``decode_deep`` for JSON nested beyond it
    (``note_deep`` for a value ``DEEP`` or more levels deep)."""
    try:
        value = _msgspec_decode(raw)
    except RecursionError:
        note_deep()
        return decode_deep(raw, _STORED_DEPTH)
    if len(raw) > 2 * DEEP and raw.count(b"{") + raw.count(b"[") >= DEEP and depth_of(value, DEEP) >= DEEP:
        note_deep()
    return value


def encode_deep(value: Any, sort_keys: bool = False, scalar: Callable[[Any], bytes] = _msgspec_encode) -> bytes:
    """The bytes ``encode`` gives, without recursion (scalars and keys encoded by ``scalar``);
    ``sort_keys`` writes each object's keys in order, as ``json.dumps(sort_keys=True)``."""
    out: list[bytes] = []
    stack: list[tuple[Iterator[Any], bool]] = []
    first = [True]

    def open_(item: Any) -> None:
        if type(item) is dict:
            out.append(b"{")
            stack.append((iter(sorted(item.items()) if sort_keys else item.items()), True))
            first.append(True)
        elif type(item) is list or type(item) is tuple:
            out.append(b"[")
            stack.append((iter(item), False))
            first.append(True)
        else:
            out.append(scalar(item))

    open_(value)
    end = object()
    while stack:
        items, is_map = stack[-1]
        item: Any = next(items, end)
        if item is end:
            out.append(b"}" if is_map else b"]")
            stack.pop()
            first.pop()
            continue
        if first[-1]:
            first[-1] = False
        else:
            out.append(b",")
        if is_map:
            out.append(scalar(item[0]))
            out.append(b":")
            open_(item[1])
        else:
            open_(item)
    return b"".join(out)


_WS = re.compile(rb"[ \t\n\r]*")
_SCALAR = re.compile(rb'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null',
                     re.DOTALL)


def _skip(raw: bytes, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    match = _WS.match(raw, pos)
    return match.end() if match is not None else pos


def _syntax(raw: bytes, pos: int, context: str) -> BodyError:
    char = raw[pos:pos + 1]
    return BodyError(f"invalid character {chr(char[0])!r} {context}" if char else "unexpected end of JSON input")


def decode_deep(raw: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """JSON ``raw`` decoded without recursion, to ``max_depth`` levels (deeper: Go's
    "exceeded max depth" syntax error, as a ``BodyError``); scalars decoded by msgspec."""
    ws, scalar = _skip, _SCALAR.match
    stack: list[Any] = []  # open containers
    keys: list[Any] = []  # per open container: the pending key (objects) or None
    pos = ws(raw, 0)
    while True:
        # a value at pos
        char = raw[pos:pos + 1]
        if char == b"{" or char == b"[":
            if len(stack) >= max_depth:
                raise BodyError(f"invalid character {chr(char[0])!r} exceeded max depth")
            container: Any = {} if char == b"{" else []
            stack.append(container)
            keys.append(None)
            pos = ws(raw, pos + 1)
            close = b"}" if char == b"{" else b"]"
            if raw[pos:pos + 1] == close:
                stack.pop()
                keys.pop()
                pos += 1
                value = container
            elif char == b"{":
                pos = _object_key(raw, pos, keys)
                continue
            else:
                continue
        else:
            match = scalar(raw, pos)
            if match is None:
                raise _syntax(raw, pos, "looking for beginning of value")
            value = _scalar_value(match.group())
            pos = match.end()
        # value complete: attach it, then close whatever ends here
        while True:
            pos = ws(raw, pos)
            if not stack:
                if pos != len(raw):
                    raise _syntax(raw, pos, "after top-level value")
                return value
            top = stack[-1]
            if type(top) is dict:
                top[keys[-1]] = value
            else:
                top.append(value)
            char = raw[pos:pos + 1]
            if char == b",":
                pos = ws(raw, pos + 1)
                if type(top) is dict:
                    pos = _object_key(raw, pos, keys)
                break
            if char == (b"}" if type(top) is dict else b"]"):
                value = stack.pop()
                keys.pop()
                pos += 1
                continue
            raise _syntax(raw, pos, "after object key:value pair" if type(top) is dict else "after array element")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _scalar_value(token: bytes) -> Any:
    """A JSON scalar; in a string, invalid UTF-8 and lone surrogate escapes become U+FFFD, as Go's
    encoding/json decodes them (and ``negotiation`` does for shallow bodies)."""
    try:
        return _msgspec_decode(token)
    except (msgspec.DecodeError, UnicodeDecodeError) as err:
        if token[:1] != b'"':
            raise BodyError(str(err)) from None
        try:
            text = json.loads(token.decode("utf-8", "replace"))
        except ValueError:
            raise BodyError(str(err)) from None
        return _SURROGATE.sub("\ufffd", text)


def _object_key(raw: bytes, pos: int, keys: list[Any]) -> int:
    """Read ``"key" :`` at ``pos`` into ``keys[-1]``; the position of the value after it."""
    match = _SCALAR.match(raw, pos)
    if match is None or raw[pos:pos + 1] != b'"':
        raise _syntax(raw, pos, "looking for beginning of object key string")
    keys[-1] = _scalar_value(match.group())
    pos = _skip(raw, match.end())
    if raw[pos:pos + 1] != b":":
        raise _syntax(raw, pos, "after object key")
    return _skip(raw, pos + 1)


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's bound on the share of decode operations that come from alias expansion."""
    if decodes <= _RATIO_LOW:
        return 0.99
    if decodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


class _Node:
    """A composed YAML node: ``kind`` is "scalar", "seq", "map" or "alias" (``items`` then holds
    the target node); sequences hold nodes, mappings alternate key and value nodes."""

    __slots__ = ("items", "kind", "merge", "value")

    def __init__(self, kind: str, value: Any = None, merge: bool = False) -> None:
        self.kind = kind
        self.value = value
        self.merge = merge
        self.items: list[Any] = []


def load_yaml(data: bytes) -> Any:
    """The JSON values of the single YAML document in ``data`` (None for an empty body);
    ``BodyError`` for anything sigs.k8s.io/yaml would refuse or the limits above."""
    try:
        try:
            root = _compose(data)
        except yaml.YAMLError as err:
            if "exceeded maximum nesting depth" not in str(err) or not _libyaml_nesting(MAX_DEPTH + 1):
                raise
            try:  # libyaml's own bound (1000) is below Go's: parse again past it, our composer bounds it
                note_deep()
                root = _compose(data)
            finally:
                _libyaml_nesting(_LIBYAML_NESTING)
    except BodyError:
        raise
    except yaml.YAMLError as err:
        if "exceeded maximum nesting depth" in str(err):  # PyYAML >= 6.0.3's own bound, beyond ours
            raise depth_error() from None
        raise BodyError(f"error converting YAML to JSON: yaml: {err}") from None
    except (ValueError, OverflowError, KeyError, IndexError, TypeError) as err:  # a scalar its tag cannot hold
        raise BodyError(f"error converting YAML to JSON: cannot decode {type(err).__name__}: {err}") from None
    return None if root is None else _plain(_Expander().run(root))


_LIBYAML_NESTING = 1000
_nesting_lock = threading.Lock()


def _libyaml_nesting(level: int) -> bool:
    """Set libyaml's process-wide nesting bound (``yaml_set_max_nest_level``, libyaml >= 0.2.5,
    linked into PyYAML's extension); False when this PyYAML has no such bound to move."""
    try:
        from yaml import _yaml  # type: ignore[attr-defined]

        setter = ctypes.CDLL(_yaml.__file__).yaml_set_max_nest_level
    except (ImportError, OSError, AttributeError):
        return False
    setter.argtypes = [ctypes.c_int]
    with _nesting_lock:
        setter(level)
    return True


def _fail(message: str) -> BodyError:
    return BodyError(f"error converting YAML to JSON: yaml: {message}")


def _compose(data: bytes) -> _Node | None:
    """Build the node graph from the parser's events without recursion."""
    loader = _Loader(data)
    try:
        composer = _Composer(loader)
        while loader.check_event():
            composer.feed(loader.get_event())
        return composer.root
    finally:
        loader.dispose()


class _Composer:
    """Events in, a node graph out (``root``); anchors map to their nodes, aliases point at them."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.root: _Node | None = None
        self.anchors: dict[str, _Node] = {}
        self.open_anchors: set[str] = set()
        self.stack: list[tuple[_Node, str | None]] = []
        self.documents = 0

    def feed(self, event: Any) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _fail("expected a single document in the stream")
        elif isinstance(event, yaml.ScalarEvent):
            self.add(_scalar(self.loader, event), event.anchor)
        elif isinstance(event, yaml.AliasEvent):
            self.add(self.alias(str(event.anchor)), None)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            kind = "seq" if isinstance(event, yaml.SequenceStartEvent) else "map"
            if event.tag not in (None, "!", _TAG + kind):
                raise _fail(f"unsupported tag {event.tag}")
            if len(self.stack) >= MAX_DEPTH:
                raise _fail(str(depth_error()))
            container = _Node(kind)
            self.add(container, event.anchor)
            self.stack.append((container, event.anchor))
            if event.anchor:
                self.open_anchors.add(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            _, anchor = self.stack.pop()
            if anchor:
                self.open_anchors.discard(anchor)

    def alias(self, anchor: str) -> _Node:
        target = self.anchors.get(anchor)
        if target is None:
            raise _fail(f"unknown anchor '{anchor}' referenced")
        if anchor in self.open_anchors:
            raise _fail(f"anchor '{anchor}' value contains itself")
        node = _Node("alias")
        node.items.append(target)
        return node

    def add(self, node: _Node, anchor: str | None) -> None:
        if anchor:
            self.anchors[anchor] = node
        if self.stack:
            self.stack[-1][0].items.append(node)
        elif self.root is None:
            self.root = node


def _scalar(loader: Any, event: Any) -> _Node:
    tag, value = event.tag, event.value
    if tag is None and event.implicit[0] and value != "<<":  # plain: go-yaml v2's resolution
        _, resolved = k8syaml.resolve_plain(value)
        if isinstance(resolved, float) and (math.isinf(resolved) or math.isnan(resolved)):
            raise BodyError(f"error converting YAML to JSON: json: unsupported value: {value}")
        return _Node("scalar", resolved)
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
    if tag == _TAG + "merge":
        return _Node("scalar", value, merge=True)
    node = yaml.ScalarNode(tag, value, style=event.style)
    if tag == _TAG + "null":
        return _Node("scalar", None)
    if tag == _TAG + "bool":
        return _Node("scalar", loader.construct_yaml_bool(node))
    if tag == _TAG + "int":
        return _Node("scalar", loader.construct_yaml_int(node))
    if tag == _TAG + "float":
        number = loader.construct_yaml_float(node)
        if math.isinf(number) or math.isnan(number):
            raise BodyError(f"error converting YAML to JSON: json: unsupported value: {value}")
        return _Node("scalar", number)
    if tag == _TAG + "binary":
        return _Node("scalar", loader.construct_yaml_binary(node).decode("utf-8", "replace"))
    return _Node("scalar", value)  # str, timestamps (kept as strings, as go-yaml does), other tags


class _Expander:
    """Expand the node graph into JSON values, counting decodes as go-yaml does."""

    def __init__(self) -> None:
        self.decodes = 0
        self.aliased = 0

    def count(self, in_alias: bool) -> None:
        self.decodes += 1
        if in_alias:
            self.aliased += 1
        if (self.aliased > 100 and self.decodes > 1000
                and self.aliased / self.decodes > _allowed_alias_ratio(self.decodes)):
            raise _fail("document contains excessive aliasing")

    def run(self, root: _Node) -> Any:
        # post-order evaluation: ("visit", node, in_alias, depth) tasks push one value each;
        # ("build", node) pops its children's values and pushes the container
        values: list[Any] = []
        tasks: list[tuple[str, _Node, bool, int]] = [("visit", root, False, 0)]
        while tasks:
            action, node, in_alias, depth = tasks.pop()
            if action == "build":
                count = len(node.items)
                children = values[len(values) - count:] if count else []
                del values[len(values) - count:]
                values.append([_plain(c) for c in children] if node.kind == "seq" else _mapping(children))
                continue
            self.count(in_alias)
            if node.kind == "alias":
                tasks.append(("visit", node.items[0], True, depth))
            elif node.kind == "scalar":
                values.append(_Merge(node.value) if node.merge else node.value)
            else:
                if depth >= MAX_DEPTH:
                    raise _fail(str(depth_error()))
                tasks.append(("build", node, in_alias, depth))
                tasks.extend(("visit", child, in_alias, depth + 1) for child in reversed(node.items))
        return values[0]


class _Merge:
    """A scalar resolved as the ``<<`` merge key (its text, should it not be a mapping key)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _plain(value: Any) -> Any:
    """A ``<<`` that is not a mapping key is the string it looks like."""
    return value.text if isinstance(value, _Merge) else value


def _mapping(flat: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    for i in range(0, len(flat) - 1, 2):
        key, value = flat[i], flat[i + 1]
        if isinstance(key, _Merge):
            sources = value if isinstance(value, list) else [value]
            for source in sources:
                if not isinstance(source, dict):
                    raise _fail("map merge requires map or sequence of maps as the value")
                for k, v in source.items():
                    merged.setdefault(k, v)
            continue
        out[_key(key, value)] = _plain(value)
    for k, v in merged.items():
        out.setdefault(k, v)
    return out


def _key(key: Any, value: Any) -> str:
    """A map key as sigs.k8s.io/yaml turns it into a JSON object key."""
    converted = k8syaml.json_key(key)
    if converted is not None:
        return converted
    kind = "<nil>" if key is None else ("map[interface {}]interface {}" if isinstance(key, dict) else "[]interface {}")
    raise BodyError(f"error converting YAML to JSON: unsupported map key of type: {kind}, key: {key!r}, "
                    f"value: {value!r}"[:300])
