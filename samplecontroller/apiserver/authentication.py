"""Who a request comes from (kube-apiserver's authenticators and ``user.Info``).

``UserInfo`` is the authenticated (or impersonated) user; the authentication filter stores it on
the request under ``USER_KEY`` (read it with ``user_of(request)``), where the authorization
filter, the review handlers and any handler that records the requester (CSR ``spec.username``)
find it.

Identities, as in a kubeadm cluster:
- the server's own bearer token (the admin kubeconfig) is ``ADMIN``: user ``admin`` in
  ``system:masters``, the superuser group every request of which is allowed;
- a service account token this server issued (``tokens``), while that ServiceAccount exists with
  the token's uid, is ``system:serviceaccount:<namespace>:<name>`` in ``system:serviceaccounts``,
  ``system:serviceaccounts:<namespace>`` and ``system:authenticated``;
- a request without credentials is ``system:anonymous`` in ``system:unauthenticated``.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from samplecontroller.apiserver import tokens
from samplecontroller.apiserver.storage import Store

__all__ = ["ADMIN", "ALL_AUTHENTICATED", "ALL_UNAUTHENTICATED", "ANONYMOUS", "ANONYMOUS_NAME", "SYSTEM_MASTERS",
           "USER_KEY", "UserInfo", "authenticate_bearer", "service_account_current", "service_account_groups",
           "service_account_user", "split_service_account", "user_of"]

SYSTEM_MASTERS = "system:masters"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS_NAME = "system:anonymous"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated user (k8s.io/apiserver's ``user.DefaultInfo``): name, uid, groups and extra."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The ``UserInfo`` of authentication.k8s.io/v1 (TokenReview, SelfSubjectReview, admission)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out

    @property
    def is_master(self) -> bool:
        """Whether the user is in ``system:masters`` (always allowed, may always escalate)."""
        return SYSTEM_MASTERS in self.groups


USER_KEY: Any = web.RequestKey("user", UserInfo) if hasattr(web, "RequestKey") else "user"
"""Where the filters store the request's ``UserInfo`` (an aiohttp RequestKey from aiohttp 3.13 on)."""

ADMIN = UserInfo("admin", groups=(SYSTEM_MASTERS, ALL_AUTHENTICATED))
ANONYMOUS = UserInfo(ANONYMOUS_NAME, groups=(ALL_UNAUTHENTICATED,))


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups of every service account of ``namespace`` (without ``system:authenticated``)."""
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a token of service account ``namespace/name`` authenticates as."""
    return UserInfo(f"{SA_PREFIX}{namespace}:{name}", uid, (*service_account_groups(namespace), ALL_AUTHENTICATED))


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a ``system:serviceaccount:<ns>:<name>`` user name, else None."""
    if not username.startswith(SA_PREFIX):
        return None
    namespace, sep, name = username[len(SA_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


_VERIFIED: dict[tuple[str, str], tuple[UserInfo, float]] = {}
_VERIFIED_LIMIT = 4096


def authenticate_bearer(secret: str, bearer: str) -> UserInfo | None:
    """The user of bearer token ``bearer``: ``ADMIN`` for the server's token, the service account
    of a token this server signed with ``secret`` (unexpired), else None (401). Verified tokens
    are remembered (with their expiry) so a client's every request costs no signature check."""
    if hmac.compare_digest(bearer.encode("utf-8", "surrogateescape"), secret.encode()):
        return ADMIN
    if not (bearer.isascii() and bearer.count(".") == 2):
        return None
    known = _VERIFIED.get((secret, bearer))
    if known is not None:
        if known[1] >= time.time():
            return known[0]
        del _VERIFIED[(secret, bearer)]
    claims = tokens.verify(secret, bearer)
    if claims is None:
        return None
    info = tokens.user_info(claims)
    user = UserInfo(str(info["username"]), str(info.get("uid") or ""), tuple(info["groups"]))
    if len(_VERIFIED) >= _VERIFIED_LIMIT:
        _VERIFIED.clear()
    _VERIFIED[(secret, bearer)] = (user, float(claims.get("exp") or 0))
    return user


SERVICE_ACCOUNTS_KEY = "/serviceaccounts"


def service_account_current(store: Store, user: UserInfo) -> bool:
    """Whether ``user``, if a service account's, still names a stored ServiceAccount with the same
    uid (the serviceaccount authenticator's lookup: a deleted account's tokens stop working)."""
    account = split_service_account(user.name)
    if account is None or not user.uid:
        return True
    entry = store.get(SERVICE_ACCOUNTS_KEY, *account)
    return entry is not None and (entry.obj.get("metadata") or {}).get("uid") == user.uid


def user_of(request: web.Request) -> UserInfo:
    """The user the request runs as (set by the authentication and impersonation filters);
    ``ADMIN`` when the server runs without authentication."""
    user = request.get(USER_KEY)
    return user if isinstance(user, UserInfo) else ADMIN
