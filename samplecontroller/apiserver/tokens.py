"""Service account tokens (``serviceaccounts/<name>/token``, ``kubectl create token``) and
TokenReview answers.

Tokens are JWTs with the claims kube-apiserver puts in bound service account tokens (``iss``,
``sub``, ``aud``, ``exp``, ``iat``, ``nbf`` and ``kubernetes.io``), signed with HMAC-SHA256 under
a key derived from the server's own bearer token, so the server accepts them as credentials (the
service account's user, authorized by RBAC: see ``authentication`` and ``authorization``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from typing import Any

__all__ = ["ISSUER", "issue", "review_status", "user_info", "verify"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
ADMIN_USER: dict[str, Any] = {"username": "admin", "groups": ["system:masters", "system:authenticated"]}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key(secret: str) -> bytes:
    return hashlib.sha256(b"serviceaccount-token:" + secret.encode()).digest()


def issue(secret: str, namespace: str, name: str, uid: str, audiences: list[str], expiration_seconds: int,
          now: float | None = None) -> tuple[str, int]:
    """A signed token for service account ``namespace/name``; returns (token, expiry as epoch seconds)."""
    issued = int(now if now is not None else time.time())
    expiry = issued + expiration_seconds
    claims = {
        "aud": audiences, "exp": expiry, "iat": issued, "iss": ISSUER, "jti": str(uuid.uuid4()),
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        "nbf": issued, "sub": f"system:serviceaccount:{namespace}:{name}",
    }
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(_key(secret), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}", expiry


def verify(secret: str, token: str, now: float | None = None) -> dict[str, Any] | None:
    """The claims of a token this server issued and that has not expired, else None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = hmac.new(_key(secret), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(expected, _unb64(parts[2])):
            return None
        claims = json.loads(_unb64(parts[1]))
    except (ValueError, TypeError):
        return None
    if not isinstance(claims, dict) or int(claims.get("exp") or 0) < (now if now is not None else time.time()):
        return None
    return claims


def user_info(claims: dict[str, Any]) -> dict[str, Any]:
    """The user a service account token authenticates as."""
    info = claims.get("kubernetes.io") or {}
    namespace = str(info.get("namespace") or "")
    account = info.get("serviceaccount") or {}
    return {"username": str(claims.get("sub") or ""), "uid": str(account.get("uid") or ""),
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]}


def review_status(secret: str, token: str) -> dict[str, Any]:
    """The ``status`` of a TokenReview of ``token``: the admin token, a token this server issued,
    or unauthenticated."""
    if token and hmac.compare_digest(token.encode(), secret.encode()):
        return {"authenticated": True, "user": dict(ADMIN_USER), "audiences": [ISSUER]}
    claims = verify(secret, token) if token else None
    if claims is None:
        return {"user": {}, "error": "invalid bearer token"}
    return {"authenticated": True, "user": user_info(claims), "audiences": list(claims.get("aud") or [])}
