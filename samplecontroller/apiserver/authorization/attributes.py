"""Authorization attributes of a request (k8s.io/apiserver's ``authorizer.Attributes`` and the
``RequestInfoFactory`` that derives them from the URL alone, before any routing), and the
Forbidden Status kube-apiserver answers a denied request with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from samplecontroller.apiserver.authentication import UserInfo
from samplecontroller.apiserver.errors import APIError
from samplecontroller.apiserver.warning import go_quote

__all__ = ["Attributes", "forbidden", "forbidden_message", "from_request", "go_quote"]

_SPECIAL_VERBS = frozenset({"proxy", "watch"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class Attributes:
    """What a request asks (``authorizer.AttributesRecord``). ``resource_request`` False: a
    non-resource request, checked by ``path`` against ``nonResourceURLs``."""

    user: UserInfo
    verb: str
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    field_selector: str = ""
    field_selector_error: str = ""
    label_selector: str = ""
    label_selector_error: str = ""
    """The field and label selector requirements of the request (kube's
    ``FieldSelectorRequirements``/``LabelSelectorRequirements``, as selector text), or why they
    did not parse (no requirements then); RBAC ignores them."""


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "t", "yes", "y")


def from_request(user: UserInfo, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of ``method path?query`` as kube's RequestInfoFactory resolves them:
    ``/api/v1/...`` and ``/apis/<group>/<version>/...`` with at least a resource are resource
    requests (namespace from ``namespaces/<ns>/``, a namespace's own name for ``namespaces/<ns>``,
    ``watch``/``list``/``deletecollection`` for collections, a ``metadata.name`` field selector as
    the name); every other path is a non-resource request with the lower-case method as verb."""
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource = Attributes(user, method.lower(), False, path=path)  # HEAD is "head", as upstream
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] in _SPECIAL_VERBS:
        if len(rest) < 2:
            return Attributes(user, rest[0], True, api_group=group, api_version=version, path=path)
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if _truthy(query.get("watch", "")) else "list"
        selector = query.get("fieldSelector", "")
        for term in selector.split(","):
            key, op, value = term.partition("==") if "==" in term else term.partition("=")
            if op and key.strip() == "metadata.name" and value and "/" not in value and value not in (".", ".."):
                name = value.strip()
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(user, verb, True, namespace, group, version, resource, subresource, name, path)


_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

def _plain(text: str) -> str:
    """``text`` with the bytes that were not UTF-8 replaced (printable in a JSON Status)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def forbidden_message(attrs: Attributes) -> str:
    """kube-apiserver's ``forbiddenMessage``: who cannot do what, where."""
    who = go_quote(attrs.user.name)
    if not attrs.resource_request:
        return f"User {who} cannot {_plain(attrs.verb)} path {go_quote(attrs.path)}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace else "at the cluster scope"
    return (f"User {who} cannot {_plain(attrs.verb)} resource {go_quote(resource)} in API group "
            f"{go_quote(attrs.api_group)} {where}")


def forbidden(attrs: Attributes, reason: str = "") -> APIError:
    """The 403 Forbidden Status of a denied request (``responsewriters.Forbidden`` through
    ``errors.NewForbidden``): ``<resource>[.<group>] ["<name>"] is forbidden: <message>[: <reason>]``."""
    message = forbidden_message(attrs).translate(_HTML) + (f": {reason}" if reason else "")
    qualified = _plain(f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource)
    details: dict[str, str] = {}
    if attrs.name:
        details["name"] = _plain(attrs.name)
    if attrs.api_group:
        details["group"] = _plain(attrs.api_group)
    if attrs.resource:
        details["kind"] = _plain(attrs.resource)
    if not qualified:
        text = f"forbidden: {message}"
    elif attrs.name:
        text = f"{qualified} {go_quote(attrs.name)} is forbidden: {message}"
    else:
        text = f"{qualified} is forbidden: {message}"
    err = APIError(403, "Forbidden", text, details)
    err.status.setdefault("details", {})
    return err
