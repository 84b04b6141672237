"""Request info: what an API request addresses and asks (kube-apiserver's RequestInfoResolver),
and the query parameters every handler reads the same way.

``resolve`` turns the path below ``/api/v1`` or ``/apis/<group>/<version>`` into a
``RequestInfo`` (resource, namespace, name, subresource; 404 for anything not served);
``verb_of`` names the Kubernetes verb (get, list, watch, create, update, patch, delete,
deletecollection). ``RequestRecord`` is what the server logs of a request.
"""

from __future__ import annotations

from typing import NamedTuple

from samplecontroller.apiserver import bodies, schema
from samplecontroller.apiserver.errors import APIError, bad_request, not_allowed, not_found_path
from samplecontroller.apiserver.httpmessages import (
    BadContentEncoding,
    MalformedBody,
    PayloadTooLarge,
    Request,
)
from samplecontroller.apiserver.negotiation import PATCH_APPLY, parse_bool
from samplecontroller.apiserver.restmapper import Resource, RESTMapper
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.warning import go_quote

__all__ = ["CONNECT", "RequestInfo", "RequestRecord", "check_write_options", "dry_run", "field_manager", "field_validation", "int_param",
           "parse_rv", "read_body", "resolve", "verb_of"]

CONNECT = ("log", "exec", "attach", "portforward")
"""Pod subresources served by the kubelet in a real cluster (connect verbs)."""


class RequestRecord(NamedTuple):
    """One logged API request: the client's User-Agent, the Kubernetes verb and the resource.

    ``resource`` is ``<group>/<plural>[/<subresource>]`` (``/pods`` for core, ``apps/deployments``),
    or the URL path for non-resource requests (verb = lower-case HTTP method).
    """

    user_agent: str
    verb: str
    resource: str


class RequestInfo(NamedTuple):
    res: Resource
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str
    subresource: str

    def record(self, user_agent: str, verb: str) -> RequestRecord:
        """The log record of this request."""
        rec = self.res.storage_key if self.res.group else "/" + self.res.plural
        return RequestRecord(user_agent, verb, rec + (f"/{self.subresource}" if self.subresource else ""))


def resolve(mapper: RESTMapper, group: str, version: str, rest: list[str]) -> RequestInfo:
    """The request info of path segments ``rest`` below the group/version; 404 if not served."""
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) > 2 and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise not_found_path()
    res = mapper.get(group, version, rest[0])
    if res is None:
        raise not_found_path()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and sub not in res.subresources:
        raise not_found_path()
    if res.namespaced and namespace is None and name:
        raise not_found_path()
    if not res.namespaced and namespace is not None:
        raise not_found_path()
    return RequestInfo(res, namespace, name, sub)


def verb_of(method: str, info: RequestInfo, request: Request) -> str:
    """The Kubernetes verb of ``method`` on ``info``; 405 when there is none."""
    collection = not info.name
    if info.subresource in CONNECT and not collection and method in ("GET", "POST"):
        return "get" if method == "GET" else "create"
    if method == "GET":
        watch = request.query.get("watch", "")
        if collection:
            return "watch" if watch and parse_bool(watch, "watch") else "list"
        return "watch" if watch and parse_bool(watch, "watch") else "get"
    if method == "POST" and (collection or info.subresource in ("token", "eviction", "binding")):
        return "create"
    if method == "PUT" and not collection:
        return "update"
    if method == "PATCH" and not collection:
        return "patch"
    if method == "DELETE":
        return "deletecollection" if collection else "delete"
    raise not_allowed()


async def read_body(request: Request) -> bytes:
    """The request body (Content-Encoding undone); 413 beyond ``bodies.MAX_BODY_BYTES``, 400 when
    it is not in its Content-Encoding (a body that says gzip but is not)."""
    try:
        return await request.read()
    except PayloadTooLarge:
        raise APIError(413, "RequestEntityTooLarge",
                       f"Request entity too large: limit is {bodies.MAX_BODY_BYTES}") from None
    except MalformedBody as err:
        raise bad_request(f"the request body is malformed: {err}") from None
    except BadContentEncoding as err:
        encoding = request.headers.get("Content-Encoding", "")
        raise bad_request(f'the request body is not in its Content-Encoding "{encoding}": '
                          + " ".join(str(err).split())) from None


def field_manager(request: Request) -> str:
    """``fieldManager`` (checked by ``check_write_options``), else the User-Agent's first word."""
    manager = request.query.get("fieldManager", "")
    if manager:
        return manager
    ua = request.headers.get("User-Agent", "")
    return ua.split("/")[0][:128] or "unknown"


def _field_manager_errors(manager: str) -> list[FieldError]:
    """apimachinery's ValidateFieldManager: at most 128 bytes, printable characters only."""
    errors: list[FieldError] = []
    if len(manager.encode("utf-8", "surrogateescape")) > 128:
        errors.append(schema.too_long("fieldManager", 128))
    for i, char in enumerate(manager):
        if not char.isprintable() and char != " ":
            errors.append(schema.invalid("fieldManager", schema.GoRaw(go_quote(manager)),
                                         f"invalid character U+{ord(char):04X} (at position {i})"))
    return errors


_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def _options_invalid(request: Request, errors: list[FieldError]) -> APIError:
    """422 naming the request's options kind (``PatchOptions.meta.k8s.io "" is invalid: ...``),
    as the handlers answer a failed ValidateXOptions."""
    kind = _OPTIONS_KIND.get(request.method, "UpdateOptions")
    return APIError(422, "Invalid", schema.format_invalid_message(f"{kind}.meta.k8s.io", "", errors),
                    {"group": "meta.k8s.io", "kind": kind, "causes": schema.status_details_causes(errors)})


def _dry_run_errors(request: Request) -> list[FieldError]:
    values = request.query.getall("dryRun", [])
    if all(value == "All" for value in values):
        return []
    shown = schema.GoRaw(f'[]string{{{", ".join(go_quote(v) for v in values)}}}')
    return [schema.not_supported("dryRun", shown, ["All"])]


def _field_validation_errors(request: Request) -> list[FieldError]:
    value = request.query.get("fieldValidation", "")
    if value in ("", "Strict", "Warn", "Ignore"):
        return []
    return [schema.not_supported("fieldValidation", schema.GoRaw(go_quote(value)), ["", "Ignore", "Strict", "Warn"])]


def field_validation(request: Request) -> str:
    """``fieldValidation``: Strict, Warn (the default) or Ignore; any other value is a 422 as
    kube-apiserver's ValidateFieldValidation answers (before the body is read)."""
    if not request.query:
        return "Warn"
    errors = _field_validation_errors(request)
    if errors:
        raise _options_invalid(request, errors)
    return request.query.get("fieldValidation", "") or "Warn"


def check_write_options(request: Request, patch_type: str | None = None) -> None:
    """Validate a write's query options as kube-apiserver's ValidateCreate/Update/PatchOptions do,
    before the object is looked up: fieldManager (at most 128 printable bytes; required for an
    apply patch), ``force`` (only on an apply patch), dryRun, fieldValidation. All problems are
    one 422 (``PatchOptions.meta.k8s.io "" is invalid: [...]``)."""
    if not request.query and patch_type != PATCH_APPLY:
        return  # no option given: nothing to refuse (an apply patch needs its fieldManager)
    errors: list[FieldError] = []
    if patch_type is not None:
        if patch_type != PATCH_APPLY:
            if "force" in request.query:
                errors.append(schema.forbidden("force", "may not be specified for non-apply patch"))
        elif not request.query.get("fieldManager", ""):
            errors.append(schema.required("fieldManager", "is required for apply patch"))
    errors += _field_manager_errors(request.query.get("fieldManager", ""))
    errors += _dry_run_errors(request)
    errors += _field_validation_errors(request)
    if errors:
        raise _options_invalid(request, errors)


def dry_run(request: Request) -> bool:
    """Whether ``dryRun=All`` is given; any other value is a 422 as kube-apiserver's
    ValidateDryRun answers (``CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value:
    []string{"x"}: supported values: "All"``)."""
    if not request.query:
        return False
    errors = _dry_run_errors(request)
    if errors:
        raise _options_invalid(request, errors)
    return bool(request.query.getall("dryRun", []))


def int_param(value: str, name: str) -> int | None:
    """A non-negative integer query parameter (None when empty)."""
    if not value:
        return None
    return _non_negative(value, f"invalid value {value!r} for {name}: must be an integer", f"{name} must not be negative")


def parse_rv(value: str) -> int:
    """A resourceVersion query parameter as a revision: an unsigned 64-bit integer (Go's
    ``strconv.ParseUint(value, 10, 64)``), else 400 as the storage's versioner answers."""
    if not value.isascii() or not value.isdigit():
        problem = "invalid syntax"
    elif int(value) >= 1 << 64:
        problem = "value out of range"
    else:
        return int(value)
    quoted = go_quote(value)
    raise bad_request(f"invalid resource version: resourceVersion: Invalid value: {quoted}: "
                      f"strconv.ParseUint: parsing {quoted}: {problem}")


def _non_negative(value: str, not_integer: str, negative: str) -> int:
    try:
        out = int(value)
    except ValueError:
        raise bad_request(not_integer) from None
    if out < 0:
        raise bad_request(negative)
    return out
