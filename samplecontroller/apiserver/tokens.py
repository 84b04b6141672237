"""Service account tokens (``serviceaccounts/<name>/token``, ``kubectl create token``), their
verification, and the service account issuer discovery documents (pkg/serviceaccount).

A ``Signer`` issues JWTs with the claims kube-apiserver puts in bound service account tokens
(``aud``, ``exp``, ``iat``, ``iss``, ``jti``, ``kubernetes.io`` with the namespace, the service
account and the bound Pod, Secret or Node, ``nbf``, ``sub``), signed with ES256 under a P-256 key
derived from the server's own bearer token (so a restarted server with the same token accepts
the tokens of its last run). Its public key is served as a JWK set (``/openid/v1/jwks``) and
named in the OpenID provider configuration (``/.well-known/openid-configuration``), so other
parties verify the tokens as they verify a cluster's.

``Signer.verify`` is the JWT authenticator: the signature, the issuer, ``exp``/``nbf``/``iat``
(with kube's 60 s leeway on each: a token is still accepted a minute after it expired) and the
audiences, which must intersect the ones requested (the
server's API audiences, ``--api-audiences``, by default the issuer): a token meant for another
party is refused. What the claims bind to (the service account, a Pod, a Secret) is checked
against the store by ``authentication.token_user``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

__all__ = ["ISSUER", "LEEWAY", "NBF_LEEWAY", "BoundObject", "Signer", "TokenError", "bound_objects", "claims_of", "signer", "user_info"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEEWAY = 60
"""Seconds of clock skew kube's JWT validation allows (go-jose's ``DefaultLeeway``): a token is
accepted until 60 s after its ``exp``, and from 60 s before its ``nbf`` and ``iat``."""
NBF_LEEWAY = LEEWAY
ALGORITHM = "ES256"
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


class TokenError(Exception):
    """A token that is signed by this server but not acceptable (its audiences); the message is
    kube's authenticator error."""


@dataclass(frozen=True)
class BoundObject:
    """What a token's ``kubernetes.io`` claim binds it to: ``kind`` is ``pod``, ``secret`` or
    ``node`` (as in the claim), with the object's name and uid."""

    kind: str
    name: str
    uid: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _number(value: Any) -> float:
    """A NumericDate claim's seconds (0 when absent or not a number)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _go_quote_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


class Signer:
    """Issues and verifies this server's service account tokens (see the module docstring).
    ``api_audiences`` are the audiences a token must have one of to authenticate to this server,
    and what a TokenRequest without audiences gets."""

    def __init__(self, secret: str, api_audiences: Sequence[str] = (ISSUER,), issuer: str = ISSUER) -> None:
        scalar = int.from_bytes(hashlib.sha256(b"serviceaccount-signing-key:" + secret.encode()).digest(), "big")
        self._key = ec.derive_private_key(scalar % (_P256_ORDER - 1) + 1, ec.SECP256R1())
        self._public = self._key.public_key()
        self.issuer = issuer
        self.api_audiences = tuple(api_audiences) or (issuer,)
        der = self._public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.key_id = _b64(hashlib.sha256(der).digest())  # kube's keyIDFromPublicKey

    def issue(self, namespace: str, name: str, uid: str, audiences: Sequence[str], expiration_seconds: int,
              bound: Sequence[BoundObject] = (), now: float | None = None) -> tuple[str, int]:
        """A signed token for service account ``namespace/name`` bound to ``bound``; returns
        (token, expiry as epoch seconds)."""
        issued = int(now if now is not None else time.time())
        expiry = issued + expiration_seconds
        private: dict[str, Any] = {"namespace": namespace}
        for obj in bound:
            private[obj.kind] = {"name": obj.name, "uid": obj.uid}
        private["serviceaccount"] = {"name": name, "uid": uid}
        claims = {"aud": list(audiences), "exp": expiry, "iat": issued, "iss": self.issuer, "jti": str(uuid.uuid4()),
                  "kubernetes.io": private, "nbf": issued, "sub": f"system:serviceaccount:{namespace}:{name}"}
        header = _b64(json.dumps({"alg": ALGORITHM, "kid": self.key_id}, separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        der = self._key.sign(f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{header}.{payload}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}", expiry

    def verify(self, token: str, audiences: Sequence[str] | None = None, now: float | None = None
               ) -> dict[str, Any] | None:
        """The claims of a token this server signed that is current (``exp``, ``nbf``), else
        None; raises ``TokenError`` when its audiences miss ``audiences`` (default: the API
        audiences)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = json.loads(_unb64(parts[0]))
            signature = _unb64(parts[2])
            if not isinstance(header, dict) or header.get("alg") != ALGORITHM or len(signature) != 64:
                return None
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            self._public.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, TypeError, InvalidSignature):
            return None
        moment = now if now is not None else time.time()
        if (not isinstance(claims, dict) or claims.get("iss") != self.issuer
                or not isinstance(claims.get("exp"), int) or moment - LEEWAY > claims["exp"]
                or moment + LEEWAY < _number(claims.get("nbf")) or moment + LEEWAY < _number(claims.get("iat"))):
            return None
        token_audiences = [str(a) for a in claims.get("aud") or ()] or list(self.api_audiences)
        wanted = list(audiences) if audiences else list(self.api_audiences)
        if not set(token_audiences) & set(wanted):
            raise TokenError(f"token audiences {_go_quote_list(token_audiences)} is invalid for the target "
                             f"audiences {_go_quote_list(wanted)}")
        return claims

    def jwks(self) -> dict[str, Any]:
        """The JSON Web Key Set of ``/openid/v1/jwks``."""
        numbers = self._public.public_numbers()
        return {"keys": [{"use": "sig", "kty": "EC", "kid": self.key_id, "crv": "P-256", "alg": ALGORITHM,
                          "x": _b64(numbers.x.to_bytes(32, "big")), "y": _b64(numbers.y.to_bytes(32, "big"))}]}

    def openid_configuration(self, jwks_uri: str) -> dict[str, Any]:
        """The OpenID provider configuration of ``/.well-known/openid-configuration``."""
        return {"issuer": self.issuer, "jwks_uri": jwks_uri, "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": [ALGORITHM]}


@functools.lru_cache(maxsize=16)
def signer(secret: str, api_audiences: tuple[str, ...] = (ISSUER,)) -> Signer:
    """The ``Signer`` of ``secret`` (derived once per process)."""
    return Signer(secret, api_audiences)


def user_info(claims: dict[str, Any]) -> dict[str, Any]:
    """The user a service account token authenticates as (``extra`` as kube sets it: the bound
    Pod's and Node's name and uid, and the credential id)."""
    info = claims.get("kubernetes.io") or {}
    namespace = str(info.get("namespace") or "")
    account = info.get("serviceaccount") or {}
    extra: dict[str, list[str]] = {}
    for kind in ("pod", "node"):
        ref = info.get(kind)
        if isinstance(ref, dict):
            extra[f"authentication.kubernetes.io/{kind}-name"] = [str(ref.get("name") or "")]
            extra[f"authentication.kubernetes.io/{kind}-uid"] = [str(ref.get("uid") or "")]
    if claims.get("jti"):
        extra["authentication.kubernetes.io/credential-id"] = [f"JTI={claims['jti']}"]
    return {"username": str(claims.get("sub") or ""), "uid": str(account.get("uid") or ""),
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
            "extra": extra}


def claims_of(token: str) -> dict[str, Any]:
    """The claims of a token already verified (no signature check: never trust them otherwise)."""
    parts = token.split(".")
    try:
        claims = json.loads(_unb64(parts[1])) if len(parts) == 3 else {}
    except (ValueError, TypeError):
        return {}
    return claims if isinstance(claims, dict) else {}


def bound_objects(claims: dict[str, Any]) -> list[BoundObject]:
    """The Pod, Secret and Node a token's claims bind it to."""
    info = claims.get("kubernetes.io") or {}
    out = []
    for kind in ("pod", "secret", "node"):
        ref = info.get(kind) if isinstance(info, dict) else None
        if isinstance(ref, dict):
            out.append(BoundObject(kind, str(ref.get("name") or ""), str(ref.get("uid") or "")))
    return out
