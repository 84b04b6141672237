"""Who a request comes from (kube-apiserver's authenticators and ``user.Info``).

``UserInfo`` is the authenticated (or impersonated) user; the authentication filter stores it on
the request under ``USER_KEY`` (read it with ``user_of(request)``), where the authorization
filter, the review handlers and any handler that records the requester (CSR ``spec.username``)
find it.

Identities, as in a kubeadm cluster:
- the server's own bearer token (the admin kubeconfig) is ``ADMIN``: user ``admin`` in
  ``system:masters``, the superuser group every request of which is allowed;
- a service account token this server issued (``tokens``) for one of the API audiences, while
  that ServiceAccount (and the Pod or Secret the token is bound to) exists with the token's uid, is ``system:serviceaccount:<namespace>:<name>`` in ``system:serviceaccounts``,
  ``system:serviceaccounts:<namespace>`` and ``system:authenticated``;
- a request without credentials is ``system:anonymous`` in ``system:unauthenticated``.
"""

from __future__ import annotations

import calendar
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samplecontroller.apiserver import tokens
from samplecontroller.apiserver.httpmessages import Request
from samplecontroller.apiserver.storage import Store

__all__ = ["ADMIN", "ALL_AUTHENTICATED", "ALL_UNAUTHENTICATED", "ANONYMOUS", "ANONYMOUS_NAME", "SYSTEM_MASTERS",
           "INVALIDATED", "USER_KEY", "UserInfo", "Verified", "authenticate_token", "service_account_groups",
           "service_account_user", "split_service_account", "user_of", "validate_bound"]

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


USER_KEY = "user"
"""Where the filters store the request's ``UserInfo`` (``request[USER_KEY]``)."""

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


@dataclass(frozen=True)
class Verified:
    """A token's verified claims as the authenticators use them: the user, the expiry and the
    objects the token is bound to."""

    user: UserInfo
    expiry: float
    bound: tuple[tokens.BoundObject, ...] = ()


_VERIFIED: dict[tuple[str, tuple[str, ...], str], Verified] = {}
_VERIFIED_LIMIT = 4096
INVALIDATED = "service account token has been invalidated"
BOUND_GRACE_SECONDS = 60
"""A token bound to an object stays valid this long after the object's deletionTimestamp (kube's
allowance for a pod's grace period)."""


def _verified(signer: tokens.Signer, secret: str, bearer: str) -> Verified | None:
    """The verified claims of a service account token for the API audiences (remembered with
    its expiry, so a client's every request costs no signature check); raises ``TokenError``."""
    key = (secret, signer.api_audiences, bearer)
    known = _VERIFIED.get(key)
    if known is not None:
        if known.expiry + tokens.LEEWAY >= time.time():  # as verify: a minute past exp
            return known
        del _VERIFIED[key]
    claims = signer.verify(bearer)
    if claims is None:
        return None
    found = _from_claims(claims)
    if len(_VERIFIED) >= _VERIFIED_LIMIT:
        _VERIFIED.clear()
    _VERIFIED[key] = found
    return found


def _from_claims(claims: dict[str, Any]) -> Verified:
    info = tokens.user_info(claims)
    extra = {k: tuple(v) for k, v in info["extra"].items()}
    user = UserInfo(str(info["username"]), str(info.get("uid") or ""), tuple(info["groups"]), extra)
    return Verified(user, float(claims.get("exp") or 0), tuple(tokens.bound_objects(claims)))


def authenticate_token(store: Store, secret: str, bearer: str, api_audiences: tuple[str, ...] = (tokens.ISSUER,),
                       audiences: tuple[str, ...] = ()) -> tuple[UserInfo | None, str]:
    """The user of bearer token ``bearer`` and, for none, why (kube's authenticator error):
    ``ADMIN`` for the server's token ``secret``; the service account of a token this server
    signed, current, meant for ``audiences`` (default: ``api_audiences``), whose service account
    and bound Pod/Secret still exist with the uids it names (``validate_bound``)."""
    if hmac.compare_digest(bearer.encode("utf-8", "surrogateescape"), secret.encode()):
        return ADMIN, ""
    if not (bearer.isascii() and bearer.count(".") == 2):
        return None, "invalid bearer token"
    signer = tokens.signer(secret, api_audiences)
    try:
        if audiences:
            claims = signer.verify(bearer, audiences)
            found = _from_claims(claims) if claims is not None else None
        else:
            found = _verified(signer, secret, bearer)
    except tokens.TokenError as err:
        return None, str(err)
    if found is None:
        return None, "invalid bearer token"
    why = validate_bound(store, found)
    return (None, why) if why else (found.user, "")


def _deleted_long_ago(obj: dict[str, Any], now: float) -> bool:
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not isinstance(stamp, str):
        return False
    try:
        deleted = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return False
    return deleted < now - BOUND_GRACE_SECONDS


def validate_bound(store: Store, verified: Verified) -> str:
    """Why a verified token no longer authenticates (kube's service account claims validator),
    "" while it does: its ServiceAccount must exist with the token's uid, and a Pod or Secret it
    is bound to must exist with the uid it names and not have been deleted more than 60 s ago."""
    account = split_service_account(verified.user.name)
    if account is None:
        return INVALIDATED
    namespace = account[0]
    entry = store.get(SERVICE_ACCOUNTS_KEY, *account)
    if entry is None or (verified.user.uid and (entry.obj.get("metadata") or {}).get("uid") != verified.user.uid):
        return INVALIDATED
    now = time.time()
    for bound in verified.bound:
        if bound.kind == "node":
            continue  # node info is informational unless the token is bound to the node (kube: the same check)
        stored = store.get(_BOUND_KEYS[bound.kind], namespace, bound.name)
        if stored is None:
            return INVALIDATED
        uid = (stored.obj.get("metadata") or {}).get("uid")
        if uid != bound.uid:
            return f"{bound.kind} UID ({uid}) does not match service account {bound.kind} ref claim ({bound.uid})"
        if _deleted_long_ago(stored.obj, now):
            return INVALIDATED
    return ""


SERVICE_ACCOUNTS_KEY = "/serviceaccounts"
_BOUND_KEYS = {"pod": "/pods", "secret": "/secrets"}


def user_of(request: Request) -> UserInfo:
    """The user the request runs as (set by the authentication and impersonation filters);
    ``ADMIN`` when the server runs without authentication."""
    user = request.get(USER_KEY)
    return user if isinstance(user, UserInfo) else ADMIN
