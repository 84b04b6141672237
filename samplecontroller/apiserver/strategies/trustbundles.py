"""ClusterTrustBundle validation (certificates.k8s.io), as kube-apiserver's strategy runs
pkg/apis/certificates/validation ``ValidateClusterTrustBundle`` and its update:

- the name: with a ``spec.signerName``, prefixed by the signer name with ``/`` as ``:`` and
  ``:``, the rest a DNS subdomain; without, a DNS subdomain with no ``:``
  (pkg/apis/core/validation ``ValidateClusterTrustBundleName``);
- ``spec.signerName``, when set, as ``ValidateSignerName`` (``recent_pod``); immutable on update;
- ``spec.trustBundle``: at most 1 MiB of PEM ``CERTIFICATE`` blocks without headers, each an
  X.509 CA certificate, at least one, none twice (``validateTrustBundle``); not parsed again on
  an update that keeps it.

PEM blocks are found as Go's encoding/pem ``Decode`` finds them (text around them is skipped, a
malformed block too).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cryptography import x509

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError, invalid, too_long
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.strategies.recent_pod import signer_name_errors
from samplecontroller.apiserver.validation import dns1123_subdomain_errors

__all__ = ["ClusterTrustBundleStrategy", "trust_bundle_errors"]

_MAX_TRUST_BUNDLE_SIZE = 1 * 1024 * 1024  # certificates.MaxTrustBundleSize
_OMITTED = "<value omitted>"
_FIELD = "spec.trustBundle"
_BLOCK = re.compile(r"(?:^|\n)-----BEGIN ([^\n]*?)-----[ \t\r]*\n(.*?)(?:^|\n)-----END \1-----[ \t\r]*(?=\n|$)",
                    re.DOTALL)


def _pem_blocks(text: str) -> list[tuple[str, bool, bytes | None]]:
    """The PEM blocks of ``text``: type, whether it has headers, its bytes (None: the body is not
    base64, which Go's Decode skips as no block)."""
    blocks: list[tuple[str, bool, bytes | None]] = []
    for match in _BLOCK.finditer(text):
        kind, body = match.group(1), match.group(2)
        lines = body.split("\n")
        headers = False
        if lines and ":" in lines[0]:
            headers = True
            while lines and ":" in lines[0]:
                lines.pop(0)
        try:
            data = base64.b64decode("".join("".join(lines).split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        blocks.append((kind, headers, data))
    return blocks


def trust_bundle_errors(bundle: str) -> list[FieldError]:
    """validateTrustBundle."""
    if len(bundle.encode()) > _MAX_TRUST_BUNDLE_SIZE:
        return [too_long(_FIELD, _MAX_TRUST_BUNDLE_SIZE)]
    errors: list[FieldError] = []
    seen: dict[bytes, list[int]] = {}
    for i, (kind, headers, data) in enumerate(_pem_blocks(bundle)):
        if kind != "CERTIFICATE":
            errors.append(invalid(_FIELD, _OMITTED, f"entry {i} has bad block type: {kind}"))
            continue
        if headers:
            errors.append(invalid(_FIELD, _OMITTED, f"entry {i} has PEM block headers"))
            continue
        try:
            cert = x509.load_der_x509_certificate(data or b"")
            constraints: Any = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        except x509.ExtensionNotFound:
            constraints = None
        except ValueError:
            errors.append(invalid(_FIELD, _OMITTED, f"entry {i} does not parse as X.509"))
            continue
        if constraints is None or not constraints.ca:
            errors.append(invalid(_FIELD, _OMITTED, f"entry {i} does not have the CA bit set"))
            continue
        seen.setdefault(data or b"", []).append(i)
    if errors:
        return errors
    if not seen:
        return [invalid(_FIELD, _OMITTED, "at least one trust anchor must be provided")]
    return [invalid(_FIELD, _OMITTED, f"duplicate trust anchor (indices [{' '.join(map(str, indices))}])")
            for indices in seen.values() if len(indices) > 1]


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def _name_errors(name: str, signer: str, prefix: bool) -> list[str]:
    """ValidateClusterTrustBundleName(signerName)(name, prefix)."""
    if not signer:
        if ":" in name:
            return ['ClusterTrustBundle without signer name must not have ":" in its name']
        return dns1123_subdomain_errors(_mask_trailing_dash(name) if prefix else name)
    required_prefix = signer.replace("/", ":") + ":"
    if not name.startswith(required_prefix):
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {required_prefix}"]
    rest = name[len(required_prefix):]
    return dns1123_subdomain_errors(_mask_trailing_dash(rest) if prefix else rest)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class ClusterTrustBundleStrategy(Strategy):
    """ValidateClusterTrustBundle and ValidateClusterTrustBundleUpdate (the object meta's name
    rule is this kind's: ``validation`` checks only its path segments)."""

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        errors = super().validate(res, obj, sch)
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        signer = _text(spec.get("signerName") if isinstance(spec, dict) else None)
        if isinstance(meta, dict):
            for key, prefix in (("generateName", True), ("name", False)):
                value = _text(meta.get(key))
                if value:
                    errors += [invalid(f"metadata.{key}", value, m) for m in _name_errors(value, signer, prefix)]
        if signer:
            errors += signer_name_errors(signer, "spec.signerName")
        return errors

    def validate_gated(self, res: Resource, obj: Obj, old: Obj | None, minor: int) -> list[FieldError]:
        errors = super().validate_gated(res, obj, old, minor)
        bundle = (obj.get("spec") or {}).get("trustBundle")
        if isinstance(bundle, str) and (old is None or bundle != (old.get("spec") or {}).get("trustBundle")):
            errors += trust_bundle_errors(bundle)
        return errors

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        signer = (obj.get("spec") or {}).get("signerName") or ""
        if signer != ((old.get("spec") or {}).get("signerName") or ""):
            return [invalid("spec.signerName", signer, "field is immutable")]
        return []
