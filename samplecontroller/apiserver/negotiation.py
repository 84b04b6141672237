"""Content negotiation: decoding request bodies (JSON, YAML, protobuf, the patch media types),
the representation an Accept header asks for, and Kubernetes' boolean query parameters."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, NamedTuple

import msgspec

from samplecontroller.apimachinery import k8syaml
from samplecontroller.apiserver import bodies, protobuf
from samplecontroller.apiserver.errors import APIError, bad_request
from samplecontroller.apiserver.httpmessages import AnyResponse, Response

__all__ = ["PATCH_APPLY", "PATCH_JSON", "PATCH_MERGE", "PATCH_STRATEGIC", "Accept", "as_yaml", "decode_body",
           "parse_accept", "parse_bool"]

_decode = msgspec.json.Decoder().decode

PATCH_JSON = "application/json-patch+json"
PATCH_MERGE = "application/merge-patch+json"
PATCH_STRATEGIC = "application/strategic-merge-patch+json"
PATCH_APPLY = "application/apply-patch+yaml"
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def decode_body(body: bytes, content_type: str) -> Any:
    """JSON (also when no content type is given) or YAML; ``APIError`` 400/415 otherwise.
    Values nested deeper than ``bodies.MAX_DEPTH`` and YAML beyond go-yaml's alias limits are
    400s (see ``bodies``)."""
    ctype = content_type.split(";")[0].strip().lower()
    if ctype in ("", "application/json", "*/*", "text/plain"):
        return _decode_json(body)
    if ctype == "application/vnd.kubernetes.protobuf":
        try:
            value = protobuf.decode(body)
            bodies.check_depth(value)
            return value
        except (ValueError, RecursionError) as err:
            raise bad_request(f"error decoding protobuf request body: {err}") from None
    if ctype in ("application/yaml", "application/x-yaml", "text/yaml", PATCH_APPLY):
        if body.lstrip()[:1] in (b"{", b"["):
            try:  # JSON is YAML: the fast path for what kubectl sends
                return _decode_json(body)
            except APIError as err:
                if "exceeded max depth" in str(err):  # as deep as YAML: the parser would say so, slowly
                    raise bad_request(f"error converting YAML to JSON: yaml: {bodies.depth_error()}") from None
        try:
            return bodies.load_yaml(body)
        except bodies.BodyError as err:
            raise bad_request(str(err)) from None
    raise APIError(415, "UnsupportedMediaType",
                   f"the body of the request was in an unknown format - accepted media types include: "
                   f"application/json, application/yaml (got {ctype!r})")


def _decode_json(body: bytes) -> Any:
    try:
        value = _decode(body)
    except RecursionError:  # nested beyond msgspec (the interpreter's C recursion): decoded iteratively
        try:
            value = bodies.decode_deep(body)
        except bodies.BodyError as err:
            raise bad_request(f"error decoding request body: {err}") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as err:
        value = _decode_coercing(body)
        if value is _UNDECODABLE:
            raise bad_request(f"error decoding request body: {err}") from None
    try:
        bodies.check_depth(value, body)
    except bodies.BodyError as err:
        raise bad_request(f"error decoding request body: {err}") from None
    return value


_UNDECODABLE = object()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON literal {name}")


def _coerced(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_coerced(v) for v in value]
    if isinstance(value, dict):
        return {_coerced(k): _coerced(v) for k, v in value.items()}
    return value


def _decode_coercing(body: bytes) -> Any:
    """JSON that msgspec refuses only for its text, decoded as Go's encoding/json does: invalid
    UTF-8 and lone surrogate escapes (``"\\ud800"``) become U+FFFD. ``_UNDECODABLE`` when it is
    not JSON at all (the caller reports msgspec's error)."""
    try:
        return _coerced(json.loads(body.decode("utf-8", "replace"), parse_constant=_reject_constant))
    except (ValueError, RecursionError):
        return _UNDECODABLE


def parse_bool(value: str, name: str) -> bool:
    """A boolean query parameter as Go's strconv.ParseBool reads it; 400 otherwise."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise bad_request(f'invalid boolean value "{value}" for query parameter {name}')


class Accept(NamedTuple):
    kind: str  # "json", "table", "partial", "agg-v2", "agg-v2beta1", "none"
    version: str = "v1"
    yaml: bool = False  # written as YAML (application/yaml), not JSON


@functools.lru_cache(maxsize=256)
def parse_accept(header: str, stream: bool = False) -> Accept:
    """The first representation we can serve from an Accept header (remembered per header value:
    clients send the same few). ``stream``: for a watch, which has no YAML form (kube's YAML
    serializer has no stream serializer): ``application/yaml`` is passed over."""
    if not header:
        return Accept("json")
    saw_unsupported = False
    for part in header.split(","):
        items = [p.strip() for p in part.split(";")]
        media = items[0].lower()
        params = {}
        for item in items[1:]:
            key, _, value = item.partition("=")
            params[key.strip()] = value.strip()
        if media not in ("application/json", "*/*", "application/*", "application/yaml") or (
                stream and media == "application/yaml"):
            saw_unsupported = True
            continue
        yaml = media == "application/yaml"
        as_ = params.get("as")
        if as_ is None:
            return Accept("json", yaml=yaml)
        g, v = params.get("g"), params.get("v")
        if as_ == "Table" and g == "meta.k8s.io" and v in ("v1", "v1beta1"):
            return Accept("table", v, yaml)
        if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and g == "meta.k8s.io" and v in ("v1", "v1beta1"):
            return Accept("partial", v, yaml)
        if as_ == "APIGroupDiscoveryList" and g == "apidiscovery.k8s.io" and v in ("v2", "v2beta1") and not yaml:
            return Accept("agg-" + v, v)
        saw_unsupported = True
    return Accept("none") if saw_unsupported else Accept("json")


def as_yaml(response: AnyResponse) -> AnyResponse:
    """A whole JSON response written as YAML (``application/yaml``), as kube-apiserver answers a
    client that asks for it (sigs.k8s.io/yaml: ``k8syaml.dump``); any other response as it is."""
    if not isinstance(response, Response) or response.headers.get("Content-Type") != "application/json":
        return response
    response.body = k8syaml.dump(_decode(response.body)).encode()
    response.headers["Content-Type"] = "application/yaml"
    return response
