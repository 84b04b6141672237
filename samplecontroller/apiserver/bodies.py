"""Request bodies within the limits kube-apiserver enforces.

- ``MAX_BODY_BYTES`` (3 MiB, after any Content-Encoding is undone): a larger body is a 413
  ``RequestEntityTooLarge`` (kube-apiserver's ``limitedReadBody``).
- ``MAX_OBJECT_BYTES`` (1.5 MiB, etcd's default ``--max-request-bytes``): an object whose JSON
  encoding is larger is not stored (413, where kube-apiserver passes etcd's error on as a 500).
- ``MAX_DEPTH``: JSON and YAML nested deeper are rejected with 400 (Go's decoders stop at 10000;
  the server's recursive walkers need a lower bound, far above any real object's depth).
- YAML is converted to JSON values the way sigs.k8s.io/yaml does: plain scalars resolve as in
  go-yaml v2 (``k8syaml.resolve_plain``: ``1:20`` is a string, ``0o17`` an integer), map keys become strings
  (a null or collection key is an error), timestamps stay strings, ``.inf``/``.nan`` are
  errors, one document only. Aliases are expanded as copies, and a document whose expansion
  is mostly aliases is rejected exactly as go-yaml does ("document contains excessive
  aliasing", the CVE-2019-11253 fix), as is an anchor that contains itself. The whole
  conversion is iterative: no input can exhaust the Python stack.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from samplecontroller.apimachinery import k8syaml

__all__ = ["MAX_BODY_BYTES", "MAX_DEPTH", "MAX_OBJECT_BYTES", "BodyError", "check_depth", "depth_error", "load_yaml"]

MAX_BODY_BYTES = 3 * 1024 * 1024
MAX_OBJECT_BYTES = 1536 * 1024
MAX_DEPTH = 200

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


class BodyError(ValueError):
    """The body cannot be turned into JSON values (the message says why, as Kubernetes would)."""


def depth_error() -> BodyError:
    return BodyError(f"exceeded max depth of {MAX_DEPTH}")


def check_depth(value: Any, raw: bytes | None = None) -> None:
    """Raise ``BodyError`` if ``value`` (JSON values) nests deeper than ``MAX_DEPTH``. ``raw``,
    the JSON it was decoded from, lets small bodies skip the walk (fewer brackets than levels)."""
    if raw is not None and raw.count(b"[") + raw.count(b"{") < MAX_DEPTH:
        return
    level, depth = [value], 0
    while level:
        deeper: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item if type(item) is list else ()
            deeper.extend(child for child in children if type(child) is dict or type(child) is list)
        if deeper:
            depth += 1
            if depth >= MAX_DEPTH:
                raise depth_error()
        level = deeper


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
        root = _compose(data)
    except BodyError:
        raise
    except yaml.YAMLError as err:
        if "exceeded maximum nesting depth" in str(err):  # PyYAML >= 6.0.3's own bound (1000), beyond ours
            raise depth_error() from None
        raise BodyError(f"error converting YAML to JSON: yaml: {err}") from None
    except (ValueError, OverflowError, KeyError, IndexError, TypeError) as err:  # a scalar its tag cannot hold
        raise BodyError(f"error converting YAML to JSON: cannot decode {type(err).__name__}: {err}") from None
    return None if root is None else _plain(_Expander().run(root))


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
