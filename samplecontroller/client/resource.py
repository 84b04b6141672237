"""A typed client for one resource: ``ResourceClient[T, L]`` (client-go's typed clients).

Objects are msgspec Structs (``info.model``) or plain dicts (``info.model is dict``); responses
are decoded straight from bytes with msgspec. API errors raise
``samplecontroller.apimachinery.errors`` types; an unreachable server raises
``samplecontroller.rest.TransportError``.

``update`` and ``update_status`` are one PUT of the object as given, guarded by its
resourceVersion (a stale object gets 409 Conflict, which a controller answers by requeueing,
as client-go does). A Struct model knows only the fields it was generated from, so, as with Go's
typed clients, fields the server has but the model does not know are not sent and a PUT drops
them. ``preserve_unknown_fields=True`` opts into a read-modify write that keeps them: GET the
live object as raw JSON, overlay every field the model knows (an unset field is removed, a set
one replaces the live value, nested objects recursively; keys the model does not know are
kept), and PUT the result with the *object's* resourceVersion, at the price of one more round
trip. Patches and server-side apply send only what the caller gives and need neither.
"""

from __future__ import annotations

import builtins
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec
from msgspec import Struct

from samplecontroller.apimachinery import errors, meta, objects
from samplecontroller.client.types import (
    APPLY_PATCH,
    MERGE_PATCH,
    ListOptions,
    ListResult,
    ResourceInfo,
    WatchEvent,
)
from samplecontroller.rest import ResponseStream, RESTClient

T = TypeVar("T")
L = TypeVar("L")

_encoder = objects.ENCODER  # numbers written as Go writes them


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


_event_decoder = msgspec.json.Decoder(_RawEvent)
_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})
_dict_decoder = msgspec.json.Decoder(dict[str, Any])


_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}
_AT = re.compile(r"^(?P<what>.*) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_ITEM = re.compile(r"^\.items\[(?P<index>\d+)\](?P<rest>.*)$")


class ObjectDecodeError(msgspec.ValidationError):
    """An object the model cannot decode (a ``msgspec.ValidationError``); ``str()`` is one line naming
    the kind, the object (namespace/name), its apiVersion, the field and the likely cause."""


def describe_decode_error(data: bytes, err: msgspec.ValidationError, model: type[Any]) -> ObjectDecodeError:
    """``err`` (decoding ``data``, an object or a list, into ``model``) as an ``ObjectDecodeError``
    that names the object the field belongs to: msgspec's own message says only
    ``$.items[0].spec.schedule``, which names no object. Only called on failure."""
    found = _AT.match(str(err))
    what, path = (found.group("what"), found.group("path")) if found else (str(err), "")
    kind = getattr(model, "__name__", str(model))
    try:
        doc: Any = _dict_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        doc = None
    where = "an object"
    item = _ITEM.match(path)
    if item is not None:
        index, path, kind = int(item.group("index")), item.group("rest"), kind.removesuffix("List")
        items = doc.get("items") if isinstance(doc, dict) else None
        doc = items[index] if isinstance(items, builtins.list) and index < len(items) else None
        where = f"item {index} of a list"
    if isinstance(doc, dict):
        md = doc.get("metadata")
        md = md if isinstance(md, dict) else {}
        name = f"{md['namespace']}/{md.get('name')}" if md.get("namespace") else str(md.get("name"))
        where = f"{doc.get('kind') or kind} {name} ({doc.get('apiVersion')})"
    return ObjectDecodeError(
        f"cannot decode {where} into {kind}: {path.lstrip('.') or 'the object'}: {what}; likely cause: it was "
        "written in another version of its CRD whose schema differs and the CRD converts none (strategy None: add "
        "a conversion webhook), or the generated models are stale (make codegen)")


def decoder_for(model: type[Any]) -> msgspec.json.Decoder[Any]:
    """A shared msgspec decoder per model type (clients are created per call; decoders are not)."""
    decoder = _decoders.get(model)
    if decoder is None:
        decoder = _decoders.setdefault(model, msgspec.json.Decoder(model))
    return decoder


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _encode_body(obj: Any) -> bytes:
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj)
    return _encoder.encode(obj)


def decode_event(line: bytes, decoder: msgspec.json.Decoder[Any]) -> tuple[WatchEvent[Any], bool]:
    """One watch line as a ``WatchEvent``, and whether the watch ends after it: a line that
    cannot be decoded is an ERROR event carrying a 500 InternalError Status, the last one
    (client-go's StreamWatcher does the same). Shared by the sync and async watches."""
    try:
        raw = _event_decoder.decode(line)
        if raw.type == "ERROR":
            return WatchEvent("ERROR", None, _dict_decoder.decode(raw.object)), False
        if raw.type not in _EVENT_TYPES:
            raise msgspec.ValidationError(f"unknown watch event type {raw.type!r}")
        try:
            return WatchEvent(raw.type, decoder.decode(raw.object)), False  # type: ignore[arg-type]
        except msgspec.ValidationError as err:
            raise describe_decode_error(raw.object, err, decoder.type) from None
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        message = f"unable to decode an event from the watch stream: {err}"
        return WatchEvent("ERROR", None, errors.new_status(500, errors.REASON_INTERNAL_ERROR, message)), True


class ResourceWatch(Generic[T]):
    """An open watch. Iterate for ``WatchEvent``s; ``stop()`` from any thread ends it."""

    def __init__(self, stream: ResponseStream, decoder: msgspec.json.Decoder[Any]) -> None:
        self._stream = stream
        self._decoder = decoder
        self._stopped = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        """Events until the server ends the stream or ``stop()``.

        A line that cannot be decoded ends the watch with an ERROR event carrying a 500
        InternalError Status (client-go's StreamWatcher does the same); a broken connection
        raises ``TransportError`` unless the watch was stopped.
        """
        try:
            for line in self._stream:
                if self._stopped.is_set():
                    return
                event, last = decode_event(line, self._decoder)
                yield event
                if last:
                    return
        finally:
            self._stream.close()

    def stop(self) -> None:
        """End the watch (closes the response); safe from any thread and more than once."""
        self._stopped.set()
        self._stream.close()


class Req(NamedTuple):
    """One request of a verb, before any I/O: what ``RESTClient.request`` (or the async
    ``AsyncRESTClient.request``) is given."""

    method: str
    path: str
    query: dict[str, str] | None = None
    body: bytes | None = None
    content_type: str | None = None


class ResourceRequests(Generic[T, L]):
    """The verbs of one resource without the I/O (shared by ``ResourceClient`` and the async
    ``client.aio.AsyncResourceClient``): each ``*_request`` method builds the ``Req`` of a verb;
    responses are decoded with ``decode``/``decode_list``."""

    def __init__(self, info: ResourceInfo[T], namespace: str | None = None) -> None:
        self.info = info
        self.namespace = namespace if info.namespaced else None
        self._decoder = decoder_for(info.model)
        self._list_decoder = decoder_for(info.list_model)

    # -- helpers ----------------------------------------------------------------------------

    def _ns_for(self, obj: Any) -> str | None:
        if not self.info.namespaced:
            return None
        return self.namespace or meta.get_namespace(obj) or None

    def _path(self, name: str | None = None, subresource: str | None = None, namespace: str | None = None) -> str:
        return self.info.path(namespace if namespace is not None else self.namespace, name, subresource)

    def _decode(self, data: bytes) -> T:
        try:
            return self._decoder.decode(data)  # type: ignore[no-any-return]
        except msgspec.ValidationError as err:
            raise describe_decode_error(data, err, self.info.model) from None

    def _decode_list(self, data: bytes) -> L:
        try:
            return self._list_decoder.decode(data)  # type: ignore[no-any-return]
        except msgspec.ValidationError as err:
            raise describe_decode_error(data, err, self.info.list_model) from None

    @staticmethod
    def _write_query(dry_run: bool, field_manager: str | None, field_validation: str | None = None) -> dict[str, str]:
        q: dict[str, str] = {}
        if dry_run:
            q["dryRun"] = "All"
        if field_manager:
            q["fieldManager"] = field_manager
        if field_validation:
            q["fieldValidation"] = field_validation
        return q

    # -- requests ---------------------------------------------------------------------------

    def create_request(self, obj: Any, dry_run: bool, field_manager: str | None,
                       field_validation: str | None) -> Req:
        """The POST of ``obj`` to its collection (in the client's namespace, else the object's)."""
        return Req("POST", self.info.path(self._ns_for(obj)),
                   self._write_query(dry_run, field_manager, field_validation), _encode_body(obj))

    def get_request(self, name: str, resource_version: str | None) -> Req:
        """The GET of the object ``name`` (at ``resource_version`` when given)."""
        return Req("GET", self._path(name),
                   {"resourceVersion": resource_version} if resource_version is not None else None)

    def list_request(self, opts: ListOptions) -> Req:
        """The GET of one page of the collection, ``opts`` as the query."""
        return Req("GET", self._path(), opts.to_query())

    def watch_request(self, opts: ListOptions) -> tuple[Req, float | None]:
        """The watch request and its read timeout (the server's timeout plus 30 s, else none)."""
        q = opts.to_query()
        q["watch"] = "true"
        read_timeout = float(opts.timeout_seconds) + 30.0 if opts.timeout_seconds else None
        return Req("GET", self._path(), q), read_timeout

    def put_path(self, obj: Any, subresource: str | None) -> str:
        """The path of ``obj`` (or of its ``subresource``) for a PUT or an apply: its name in the
        client's namespace, else the object's."""
        return self.info.path(self._ns_for(obj), meta.get_name(obj), subresource)

    def put_request(self, obj: Any, subresource: str | None, field_manager: str | None, dry_run: bool,
                    live: bytes | None = None) -> Req:
        """The PUT of ``obj``; with ``live`` (the object's raw JSON, read first for
        ``preserve_unknown_fields``) ``obj`` laid over it (see the module docstring)."""
        body: Any = obj
        if live is not None:
            body = overlay(obj, _dict_decoder.decode(live))
            body.setdefault("metadata", {})["resourceVersion"] = meta.get_resource_version(obj)
            if not meta.get_resource_version(obj):
                body["metadata"].pop("resourceVersion")
        return Req("PUT", self.put_path(obj, subresource), self._write_query(dry_run, field_manager),
                   _encode_body(body))

    @staticmethod
    def reads_live_first(obj: Any, preserve_unknown_fields: bool) -> bool:
        """Whether a PUT of ``obj`` must GET the live object first: only a Struct with
        ``preserve_unknown_fields`` (a dict already carries every field)."""
        return preserve_unknown_fields and isinstance(obj, msgspec.Struct)

    def patch_request(self, name: str, patch: bytes | dict[str, Any] | builtins.list[Any], patch_type: str,
                      subresource: str | None, field_manager: str | None, force: bool | None, dry_run: bool) -> Req:
        """The PATCH of ``name`` (or its ``subresource``): ``patch`` as the body, ``patch_type`` as its
        content type; ``force`` is sent only when not None."""
        q = self._write_query(dry_run, field_manager)
        if force is not None:
            q["force"] = _bool(force)
        return Req("PATCH", self._path(name, subresource), q, _encode_body(patch), patch_type)

    def apply_request(self, obj: Any, field_manager: str, force: bool, subresource: str | None,
                      dry_run: bool) -> Req:
        """The server-side apply PATCH of ``obj`` (or its ``subresource``); ValueError without a
        ``field_manager``."""
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        q = self._write_query(dry_run, field_manager)
        q["force"] = _bool(force)
        return Req("PATCH", self.put_path(obj, subresource), q, _encode_body(obj), APPLY_PATCH)

    def delete_request(self, name: str, propagation_policy: str | None, preconditions: Mapping[str, str] | None,
                       grace_period_seconds: int | None, dry_run: bool) -> Req:
        """The DELETE of ``name`` with a DeleteOptions body (propagation, preconditions, grace period,
        dry run)."""
        return Req("DELETE", self._path(name), None,
                   _delete_options(propagation_policy, preconditions, grace_period_seconds, dry_run))

    def delete_collection_request(self, label_selector: str | None, field_selector: str | None,
                                  propagation_policy: str | None) -> Req:
        """The DELETE of the collection, narrowed by the selectors, with a DeleteOptions body."""
        q = ListOptions(label_selector=label_selector, field_selector=field_selector).to_query()
        return Req("DELETE", self._path(), q, _delete_options(propagation_policy, None, None, False))


def list_options(label_selector: str | None = None, field_selector: str | None = None, limit: int | None = None,
                 continue_: str | None = None, resource_version: str | None = None,
                 resource_version_match: str | None = None, timeout_seconds: int | None = None,
                 allow_watch_bookmarks: bool = False, send_initial_events: bool | None = None) -> ListOptions:
    """A ``ListOptions`` from the verbs' keyword arguments (left unset, a parameter stays out of the
    query)."""
    return ListOptions(label_selector=label_selector, field_selector=field_selector, limit=limit,
                       continue_=continue_, resource_version=resource_version,
                       resource_version_match=resource_version_match, timeout_seconds=timeout_seconds,
                       allow_watch_bookmarks=allow_watch_bookmarks, send_initial_events=send_initial_events)


class ResourceClient(ResourceRequests[T, L]):
    """Verbs on one resource, in one namespace (or all namespaces / cluster scope)."""

    def __init__(self, rest: RESTClient, info: ResourceInfo[T], namespace: str | None = None) -> None:
        super().__init__(info, namespace)
        self.rest = rest

    def _do(self, req: Req) -> bytes:
        return self.rest.request(req.method, req.path, query=req.query, body=req.body,
                                 content_type=req.content_type)

    # -- verbs ------------------------------------------------------------------------------

    def create(self, obj: T | dict[str, Any], *, dry_run: bool = False, field_manager: str | None = None,
               field_validation: str | None = None) -> T:
        """POST ``obj``; returns the created object as the server stored it."""
        return self._decode(self._do(self.create_request(obj, dry_run, field_manager, field_validation)))

    def get(self, name: str, *, resource_version: str | None = None) -> T:
        return self._decode(self._do(self.get_request(name, resource_version)))

    def list(self, *, label_selector: str | None = None, field_selector: str | None = None, limit: int | None = None,
             continue_: str | None = None, resource_version: str | None = None,
             resource_version_match: str | None = None, timeout_seconds: int | None = None) -> L:
        """One page of the list (pass ``continue_`` from the result's metadata for the next)."""
        opts = list_options(label_selector, field_selector, limit, continue_, resource_version,
                            resource_version_match, timeout_seconds)
        return self._decode_list(self._do(self.list_request(opts)))

    def watch(self, *, resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, allow_watch_bookmarks: bool = False,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None) -> ResourceWatch[T]:
        opts = list_options(label_selector, field_selector, None, None, resource_version, resource_version_match,
                            timeout_seconds, allow_watch_bookmarks, send_initial_events)
        return self._watch(opts)

    def _watch(self, opts: ListOptions) -> ResourceWatch[T]:
        req, read_timeout = self.watch_request(opts)
        return ResourceWatch(self.rest.stream(req.method, req.path, query=req.query, timeout=read_timeout),
                             self._decoder)

    def update(self, obj: T | dict[str, Any], *, field_manager: str | None = None, dry_run: bool = False,
               preserve_unknown_fields: bool = False) -> T:
        """PUT ``obj`` (its resourceVersion guards against lost updates: stale -> 409).

        One request; ``preserve_unknown_fields`` reads the live object first to keep the fields
        a Struct model does not know (see the module docstring)."""
        return self._put(obj, None, field_manager, dry_run, preserve_unknown_fields)

    def update_status(self, obj: T | dict[str, Any], *, field_manager: str | None = None,
                      dry_run: bool = False, preserve_unknown_fields: bool = False) -> T:
        """PUT ``obj`` to the status subresource: only ``.status`` changes. One request, as ``update``."""
        return self._put(obj, "status", field_manager, dry_run, preserve_unknown_fields)

    def _put(self, obj: Any, subresource: str | None, field_manager: str | None, dry_run: bool,
             preserve_unknown_fields: bool) -> T:
        live = None
        if self.reads_live_first(obj, preserve_unknown_fields):
            live = self.rest.request("GET", self.put_path(obj, subresource))
        return self._decode(self._do(self.put_request(obj, subresource, field_manager, dry_run, live)))

    def patch(self, name: str, patch: bytes | dict[str, Any] | builtins.list[Any], patch_type: str = MERGE_PATCH, *,
              subresource: str | None = None, field_manager: str | None = None, force: bool | None = None,
              dry_run: bool = False) -> T:
        """PATCH with ``patch_type`` (json, merge, strategic-merge for built-ins, or apply)."""
        return self._decode(self._do(self.patch_request(name, patch, patch_type, subresource, field_manager, force,
                                                        dry_run)))

    def apply(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
              subresource: str | None = None, dry_run: bool = False) -> T:
        """Server-side apply ``obj`` (the fields you state are yours); creates it when missing."""
        return self._decode(self._do(self.apply_request(obj, field_manager, force, subresource, dry_run)))

    def apply_status(self, obj: T | dict[str, Any] | Struct, *, field_manager: str, force: bool = False,
                     dry_run: bool = False) -> T:
        return self.apply(obj, field_manager=field_manager, force=force, subresource="status", dry_run=dry_run)

    def delete(self, name: str, *, propagation_policy: str | None = None,
               preconditions: Mapping[str, str] | None = None, grace_period_seconds: int | None = None,
               dry_run: bool = False) -> None:
        self._do(self.delete_request(name, propagation_policy, preconditions, grace_period_seconds, dry_run))

    def delete_collection(self, *, label_selector: str | None = None, field_selector: str | None = None,
                          propagation_policy: str | None = None) -> None:
        self._do(self.delete_collection_request(label_selector, field_selector, propagation_policy))

    def lister_watcher(self) -> ResourceListerWatcher[T]:
        """What a Reflector consumes: list pages and watches in this client's namespace."""
        return ResourceListerWatcher(self)


def _delete_options(propagation_policy: str | None, preconditions: Mapping[str, str] | None,
                    grace_period_seconds: int | None, dry_run: bool) -> bytes:
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy:
        body["propagationPolicy"] = propagation_policy
    if preconditions:
        body["preconditions"] = dict(preconditions)
    if grace_period_seconds is not None:
        body["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        body["dryRun"] = ["All"]
    return _encoder.encode(body)


class ResourceListerWatcher(Generic[T]):
    """``client.types.ListerWatcher`` over a ResourceClient."""

    def __init__(self, client: ResourceClient[T, Any]) -> None:
        self.client = client

    def list(self, options: ListOptions) -> ListResult[T]:
        return list_result(self.client._decode_list(self.client._do(self.client.list_request(options))))

    def watch(self, options: ListOptions) -> ResourceWatch[T]:
        return self.client._watch(options)


def list_result(result: Any) -> ListResult[Any]:
    """A ``ListResult`` from a decoded List (Struct or dict)."""
    if isinstance(result, dict):
        md = result.get("metadata") or {}
        return ListResult(result.get("items") or [], str(md.get("resourceVersion", "")), str(md.get("continue", "")),
                          md.get("remainingItemCount"))
    md = getattr(result, "metadata", None)
    rv = getattr(md, "resource_version", None)
    cont = getattr(md, "continue_", None)
    remaining = getattr(md, "remaining_item_count", None)
    return ListResult(result.items or (), rv if isinstance(rv, str) else "", cont if isinstance(cont, str) else "",
                      remaining if isinstance(remaining, int) else None)


def overlay(value: Any, live: Any) -> Any:
    """The wire form of ``value`` laid over ``live`` JSON, keeping keys the model does not know."""
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = dict(live) if isinstance(live, dict) else {}
        cls = type(value)
        # msgspec's stubs declare __struct_encode_fields__ only since 0.20
        wire_names: tuple[str, ...] = cls.__struct_encode_fields__  # type: ignore[attr-defined,unused-ignore]
        for attr, wire in zip(cls.__struct_fields__, wire_names, strict=True):
            v = getattr(value, attr)
            if v is msgspec.UNSET:
                out.pop(wire, None)
            else:
                out[wire] = overlay(v, out.get(wire))
        return out
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (tuple, list)):
        if isinstance(live, list) and len(live) == len(value):
            return [overlay(v, lv) for v, lv in zip(value, live, strict=True)]
        return [overlay(v, None) for v in value]
    if isinstance(value, dict):
        live_d = live if isinstance(live, dict) else {}
        return {k: overlay(v, live_d.get(k)) for k, v in value.items()}
    if isinstance(value, msgspec.Raw):
        return msgspec.json.decode(value)
    return msgspec.to_builtins(value)
