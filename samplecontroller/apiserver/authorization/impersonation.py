"""User impersonation (k8s.io/apiserver endpoints/filters/impersonation.go): ``Impersonate-User``,
``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and ``Impersonate-Extra-<key>`` headers.

Each impersonated attribute is an authorization check of verb ``impersonate`` for the requester:
``users`` (or ``serviceaccounts`` in the account's namespace for ``system:serviceaccount:ns:name``)
and ``groups`` in the core group, ``uids`` and ``userextras/<key>`` in
``authentication.k8s.io``; the first one denied is a 403 naming it. Without groups, a service
account gets its own groups; ``system:authenticated`` is added unless the user is
``system:anonymous`` (which gets ``system:unauthenticated``) or either group is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from multidict import CIMultiDictProxy

from samplecontroller.apiserver.authentication import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS_NAME,
    UserInfo,
    service_account_groups,
    split_service_account,
)
from samplecontroller.apiserver.authorization.attributes import Attributes, forbidden
from samplecontroller.apiserver.authorization.rbac import Authorizer
from samplecontroller.apiserver.errors import bad_request

__all__ = ["impersonate"]

_EXTRA_PREFIX = "impersonate-extra-"


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes arrive as surrogates
        return False
    return True


def _check(authorizer: Authorizer, attrs: Attributes) -> None:
    decision = authorizer.authorize(attrs)
    if not decision.allowed:
        raise forbidden(attrs, decision.reason)


def impersonate(authorizer: Authorizer, requester: UserInfo, headers: CIMultiDictProxy[str]) -> UserInfo:
    """The user ``requester`` acts as per the impersonation ``headers`` (403 when a check fails,
    400 for groups, uid or extra without a user)."""
    username = headers.get("Impersonate-User", "")
    groups_given = headers.getall("Impersonate-Group", [])
    uid = headers.get("Impersonate-Uid", "")
    extra: dict[str, list[str]] = {}
    for header, value in headers.items():
        if header.lower().startswith(_EXTRA_PREFIX):
            extra.setdefault(unquote(header[len(_EXTRA_PREFIX):]).lower(), []).append(value)
    given = [username, uid, *groups_given, *extra, *(v for values in extra.values() for v in values)]
    if any(not _utf8(value) for value in given):
        raise bad_request("impersonation headers must be valid UTF-8")
    if not username:
        if groups_given or uid or extra:
            raise bad_request("requested impersonation of groups, uid or extra without impersonating a user")
        return requester

    def act(**kw: str) -> Attributes:
        return Attributes(requester, "impersonate", True, **kw)

    groups: list[str] = []
    account = split_service_account(username)
    if account is not None:
        namespace, name = account
        _check(authorizer, act(namespace=namespace, resource="serviceaccounts", name=name))
        if not groups_given:
            groups = list(service_account_groups(namespace))
    else:
        _check(authorizer, act(resource="users", name=username))
    for group in groups_given:
        _check(authorizer, act(resource="groups", name=group))
        groups.append(group)
    if uid:
        _check(authorizer, act(api_group="authentication.k8s.io", resource="uids", name=uid))
    for key, values in extra.items():
        for value in values:
            _check(authorizer, act(api_group="authentication.k8s.io", resource="userextras", subresource=key,
                                   name=value))
    if username != ANONYMOUS_NAME:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    frozen: Mapping[str, tuple[str, ...]] = {k: tuple(v) for k, v in extra.items()}
    return UserInfo(username, uid, tuple(groups), frozen)
