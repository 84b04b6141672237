"""The PodCertificateRequest strategy (certificates.k8s.io/v1): kube's
pkg/apis/certificates/validation ValidatePodCertificateRequestCreate, ...Update and
...StatusUpdate, and the 1.37 API's ``stubPKCS10Request`` as its definition documents it.

- create: ``signerName`` (ValidateSignerName), ``podName``/``serviceAccountName``/``nodeName``
  DNS subdomains, the three UIDs non-empty and at most 128 bytes, ``maxExpirationSeconds``
  (defaulted to 86400) in [3600, 86400] for ``kubernetes.io`` signers and [3600, 7862400] for the
  others, ``stubPKCS10Request`` at most 10 KiB, a DER PKCS#10 request whose self-signature
  verifies and whose key is Ed25519, ECDSA P-256/P-384/P-521 or RSA 3072/4096;
- update: the spec is immutable;
- status (the ``status`` subresource): at most one Issued/Denied/Failed condition, True, no other
  type; the conditions as metav1.Conditions; a status in a terminal condition is immutable; a
  Denied or Failed one has only conditions; an Issued one carries a PEM chain of CERTIFICATE
  blocks whose leaf was issued to the requested key, with ``notBefore``/``notAfter`` those of the
  leaf (``notBefore`` within 5 minutes of the server's clock), a lifetime of at least one hour and
  at most ``maxExpirationSeconds``, ``beginRefreshAt`` at least 10 minutes after ``notBefore`` and
  before ``notAfter``; without such a transition the status does not change.

Not checked: ``unverifiedUserAnnotations`` (ValidateUserAnnotations' source was not found) and
the leaf's email addresses. The messages about ``stubPKCS10Request`` are the server's own (kube's
text for that field was not found); those about its key are kube's for the key fields it replaced.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from samplecontroller.apiserver import schema
from samplecontroller.apiserver.objects import deep_get
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import FieldError
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy
from samplecontroller.apiserver.strategies.migration import condition_errors
from samplecontroller.apiserver.validation import dns1123_label_errors, dns1123_subdomain_errors

__all__ = ["PodCertificateRequestStrategy", "signer_name_errors"]

_MIN_EXPIRATION, _KUBE_MAX_EXPIRATION, _MAX_EXPIRATION = 3600, 86400, 91 * 86400
_MAX_KEY_SIZE, _MAX_CHAIN_SIZE = 10 * 1024, 100 * 1024
_TERMINAL = ("Issued", "Denied", "Failed")
_CHECKED = frozenset({"spec.signerName", "spec.podName", "spec.podUID", "spec.serviceAccountName",
                      "spec.serviceAccountUID", "spec.nodeName", "spec.nodeUID"})
_STUB = "spec.stubPKCS10Request"
_CHAIN = "status.certificateChain"
_PEM = re.compile(r"-----BEGIN ([^\n-]*)-----\r?\n(.*?)\n?-----END \1-----", re.DOTALL)


def signer_name_errors(where: str, name: str) -> list[FieldError]:
    """ValidateSignerName (pkg/apis/core/validation)."""
    if not name:
        return [schema.required(where)]
    segments = name.split("/")
    if len(segments) != 2:
        return [schema.invalid(where, name, "must be a fully qualified domain and path of the form "
                                            "'example.com/signer-name'")]
    domain, path = segments
    errors: list[FieldError] = []
    if len(domain) > 253:
        errors.append(schema.too_long(where, 253))
    labels = domain.split(".")
    for label in labels:
        messages = dns1123_label_errors(label)
        if messages:
            errors += [schema.invalid(where, domain, f"validating label {_go_quote(label)}: {m}") for m in messages]
            break
    if len(labels) < 2:
        errors.append(schema.invalid(where, domain, "should be a domain with at least two segments separated by dots"))
    for label in path.split("."):
        messages = dns1123_subdomain_errors(label)
        if messages:
            errors += [schema.invalid(where, path, f"validating label {_go_quote(label)}: {m}") for m in messages]
            break
    if len(name) > 253 + 253 + 63 + 1 + 1:
        errors.append(schema.too_long(where, 253 + 253 + 63 + 1 + 1))
    return errors


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_kubernetes_signer(name: str) -> bool:
    host = name.partition("/")[0]
    return host == "kubernetes.io" or host.endswith(".kubernetes.io")


def _key_error(key: Any) -> tuple[Any, str] | None:
    """The (value, detail) of kube's error about an unsupported subject key, None for a good one."""
    if isinstance(key, ed25519.Ed25519PublicKey):
        return None
    if isinstance(key, ec.EllipticCurvePublicKey):
        if not isinstance(key.curve, (ec.SECP256R1, ec.SECP384R1, ec.SECP521R1)):
            return f"curve {key.curve.name}", "elliptic public keys must use curve P256 or P384"
        return None
    if isinstance(key, rsa.RSAPublicKey):
        bits = (key.key_size + 7) // 8 * 8
        if bits not in (3072, 4096):
            return f"{bits}-bit modulus", "RSA keys must have modulus size 3072 or 4096"
        return None
    return schema.OMIT, "unknown public key type; supported types are Ed25519, ECDSA, and RSA"


def _stub_request(encoded: Any) -> tuple[x509.CertificateSigningRequest | None, list[FieldError]]:
    """The parsed ``stubPKCS10Request`` (base64 of DER) and its errors."""
    try:
        der = base64.b64decode(str(encoded or ""), validate=True)
    except (binascii.Error, ValueError):
        der = b""
    if len(der) > _MAX_KEY_SIZE:
        return None, [schema.too_long(_STUB, _MAX_KEY_SIZE)]
    try:
        csr = x509.load_der_x509_csr(der)
        key = csr.public_key()
    except (ValueError, TypeError):
        return None, [schema.invalid(_STUB, schema.OMIT, "must be a DER-serialized PKCS#10 certificate request")]
    found = _key_error(key)
    if found is not None:
        return None, [schema.invalid(_STUB, found[0], found[1])]
    if not csr.is_signature_valid:
        return None, [schema.invalid(_STUB, schema.OMIT, "could not verify the certificate request's signature")]
    return csr, []


def _spec_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidatePodCertificateRequestCreate's spec rules, in its order."""
    signer = str(spec.get("signerName") or "")
    errors = signer_name_errors("spec.signerName", signer)
    for name_key, uid_key in (("podName", "podUID"), ("serviceAccountName", "serviceAccountUID"),
                              ("nodeName", "nodeUID")):
        name, uid = str(spec.get(name_key) or ""), str(spec.get(uid_key) or "")
        errors += [schema.invalid(f"spec.{name_key}", name, m) for m in dns1123_subdomain_errors(name)]
        if not uid:
            errors.append(schema.invalid(f"spec.{uid_key}", uid, "must not be empty"))
        if len(uid.encode()) > 128:
            errors.append(schema.too_long(f"spec.{uid_key}", 128))
    seconds = spec.get("maxExpirationSeconds")
    if not isinstance(seconds, int):
        errors.append(schema.required("spec.maxExpirationSeconds", "must be set"))
        return errors
    high = _KUBE_MAX_EXPIRATION if _is_kubernetes_signer(signer) else _MAX_EXPIRATION
    if not _MIN_EXPIRATION <= seconds <= high:
        errors.append(schema.invalid("spec.maxExpirationSeconds", seconds,
                                     f"must be in the range [{_MIN_EXPIRATION}, {high}]"))
    if spec.get("stubPKCS10Request"):
        errors += _stub_request(spec.get("stubPKCS10Request"))[1]
    return errors


def _conditions(obj: Obj) -> list[Mapping[str, Any]]:
    found = deep_get(obj, "status", "conditions")
    return [c for c in found if isinstance(c, Mapping)] if isinstance(found, list) else []


def _has(obj: Obj, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in _conditions(obj))


def _normal(status: Any) -> dict[str, Any]:
    """A status without its empty fields (Go's zero values compare equal to absent ones)."""
    return {k: v for k, v in status.items() if v not in (None, "", [], {})} if isinstance(status, Mapping) else {}


def _time(value: Any) -> datetime | None:
    try:
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _go_time(when: datetime) -> str:
    """time.Time's String() in the server's zone (UTC)."""
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _go_duration(delta: timedelta) -> str:
    """time.Duration's String() for whole seconds."""
    total = int(delta.total_seconds())
    sign, total = ("-", -total) if total < 0 else ("", total)
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{sign}{minutes}m{seconds}s"
    return f"{sign}{seconds}s"


def _blocks(chain: str) -> list[tuple[str, bytes | None]]:
    """The PEM blocks of ``chain``: (type, DER or None when the body is not base64)."""
    out: list[tuple[str, bytes | None]] = []
    for found in _PEM.finditer(chain):
        try:
            out.append((found.group(1), base64.b64decode("".join(found.group(2).split()), validate=True)))
        except (binascii.Error, ValueError):
            out.append((found.group(1), None))
    return out


def _issued_errors(obj: Obj, old: Obj, now: datetime) -> list[FieldError]:
    """ValidatePodCertificateRequestStatusUpdate's rules for a transition to Issued."""
    chain = str(deep_get(obj, "status", "certificateChain") or "")
    if len(chain.encode()) > _MAX_CHAIN_SIZE:
        return [schema.too_long(_CHAIN, _MAX_CHAIN_SIZE)]
    blocks = _blocks(chain)
    if not blocks:
        return [schema.invalid(_CHAIN, chain, "issued certificate chain must contain at least one certificate")]
    if blocks[0][0] != "CERTIFICATE":
        return [schema.invalid(_CHAIN, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")]
    try:
        leaf = x509.load_der_x509_certificate(blocks[0][1] or b"")
        leaf_key = leaf.public_key()
    except ValueError:
        return [schema.invalid(_CHAIN, chain, "leaf certificate does not parse as valid X.509")]
    errors: list[FieldError] = []
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.DNSName)
    except (x509.ExtensionNotFound, ValueError):
        names = []
    for name in names:
        if name == "":
            errors.append(schema.invalid(_CHAIN, name, "leaf certificate should not contain empty DNSName"))
        if ".." in name:
            errors.append(schema.invalid(_CHAIN, name, "leaf certificate's DNSName should not contain '..'"))
        if name.startswith(".") or name.endswith("."):
            errors.append(schema.invalid(_CHAIN, name, "leaf certificate's DNSName should not start or end with '.'"))
    csr, _ = _stub_request(deep_get(old, "spec", "stubPKCS10Request"))
    if csr is None:
        return [*errors, schema.invalid(_STUB, schema.OMIT, "must be a DER-serialized PKCS#10 certificate request")]
    if csr.public_key() != leaf_key:
        return [*errors, schema.invalid(_CHAIN, chain, "leaf certificate was not issued to the requested public key")]
    status = obj.get("status") or {}
    stamps = {key: _time(status.get(key)) for key in ("notBefore", "notAfter", "beginRefreshAt")}
    for key, detail in (("notBefore", "must be present and consistent with the issued certificate"),
                        ("notAfter", "must be present and consistent with the issued certificate"),
                        ("beginRefreshAt", "must be present and in the range [notbefore+10min, notafter-10min]")):
        if stamps[key] is None:
            errors.append(schema.required(f"status.{key}", detail))
    not_before, not_after, refresh = stamps["notBefore"], stamps["notAfter"], stamps["beginRefreshAt"]
    if errors or not_before is None or not_after is None or refresh is None:
        return errors
    leaf_before, leaf_after = leaf.not_valid_before_utc, leaf.not_valid_after_utc
    if not_before != leaf_before:
        return [schema.invalid("status.notBefore", schema.GoRaw(_go_time(not_before)),
                               "must be set to the NotBefore time encoded in the leaf certificate")]
    if not now - timedelta(minutes=5) < not_before < now + timedelta(minutes=5):
        return [schema.invalid("status.notBefore", schema.GoRaw(_go_time(not_before)),
                               "must be set to within 5 minutes of kube-apiserver's current time")]
    if not_after != leaf_after:
        return [schema.invalid("status.notAfter", schema.GoRaw(_go_time(not_after)),
                               "must be set to the NotAfter time encoded in the leaf certificate")]
    lifetime = leaf_after - leaf_before
    if lifetime < timedelta(hours=1):
        return [schema.invalid(_CHAIN, schema.GoRaw(_go_duration(lifetime)), "leaf certificate lifetime must be >= 1 hour")]
    limit = deep_get(obj, "spec", "maxExpirationSeconds")
    if isinstance(limit, int) and lifetime > timedelta(seconds=limit):
        return [schema.invalid(_CHAIN, schema.GoRaw(_go_duration(lifetime)),
                               f"leaf certificate lifetime must be <= spec.maxExpirationSeconds ({limit})")]
    if refresh < not_before + timedelta(minutes=10):
        return [schema.invalid("status.beginRefreshAt", schema.GoRaw(_go_time(refresh)),
                               "must be at least 10 minutes after status.notBefore")]
    if refresh > not_after - timedelta(minutes=10):
        return [schema.invalid("status.beginRefreshAt", schema.GoRaw(_go_time(refresh)),
                               "must be at least 10 minutes before status.notAfter")]
    for block_type, der in blocks[1:]:
        if block_type != "CERTIFICATE":  # (sic: kube's message misspells CERTIFICATE here)
            return [schema.invalid(_CHAIN, chain, "issued certificate chain must consist entirely of CERTFICATE PEM "
                                                  "blocks")]
        try:
            x509.load_der_x509_certificate(der or b"")
        except ValueError:
            return [schema.invalid(_CHAIN, chain, "intermediate certificate does not parse as valid X.509")]
    return []


def status_errors(obj: Obj, old: Obj, now: datetime) -> list[FieldError]:
    """ValidatePodCertificateRequestStatusUpdate (the metadata rules aside)."""
    errors: list[FieldError] = []
    known = 0
    for i, condition in enumerate(_conditions(obj)):
        ctype, path = condition.get("type") or "", f"status.conditions.[{i}]"  # (sic: kube's path)
        if ctype in _TERMINAL:
            known += 1
            if known > 1:
                errors.append(schema.invalid(f"{path}.type", ctype, 'There may be at most one condition with type '
                                                                     '"Issued", "Denied", or "Failed"'))
            if condition.get("status") != "True":
                errors.append(schema.not_supported(f"{path}.status", condition.get("status") or "", ("True",)))
        else:
            errors.append(schema.not_supported(f"{path}.type", ctype, _TERMINAL))
    errors += condition_errors(deep_get(obj, "status", "conditions"), "status.conditions")
    if errors:
        return errors
    new_status, old_status = _normal(obj.get("status")), _normal(old.get("status"))
    if any(_has(old, t) for t in _TERMINAL):
        if new_status != old_status:
            return [schema.invalid("status", schema.OMIT,
                                   "immutable after PodCertificateRequest is issued, denied, or failed")]
        return []
    if _has(obj, "Denied") or _has(obj, "Failed"):
        if set(new_status) - {"conditions"}:
            return [schema.invalid("status", schema.OMIT, "non-condition status fields must be empty when denying "
                                                          "or failing the PodCertificateRequest")]
        return []
    if _has(obj, "Issued"):
        return _issued_errors(obj, old, now)
    if new_status != old_status:
        return [schema.invalid("status", schema.OMIT,
                               'status is immutable unless transitioning to "Issued", "Denied", or "Failed"')]
    return []


class PodCertificateRequestStrategy(Strategy):
    """PodCertificateRequest (see the module's docstring)."""

    def default(self, res: Resource, obj: Obj, creating: bool, sch: Schema) -> None:
        super().default(res, obj, creating, sch)
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("maxExpirationSeconds") is None:
            spec["maxExpirationSeconds"] = 86400  # the 1.37 definition: "If omitted, kube-apiserver will set it to 86400"

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        # 1.37's definitions mark the names and UIDs required; kube's own rules report them
        errors = [e for e in super().validate(res, obj, sch) if e.field not in _CHECKED]
        spec = obj.get("spec")
        return errors + _spec_errors(spec if isinstance(spec, Mapping) else {})

    def validate_status(self, res: Resource, obj: Obj, old: Obj, sch: Schema) -> list[FieldError]:
        return status_errors(obj, old, datetime.now(UTC))

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None or obj.get("spec") == old.get("spec"):
            return []
        # (kube prints the internal spec with %#v, pointers as addresses: abbreviated here)
        return [schema.invalid("spec", schema.GoRaw("certificates.PodCertificateRequestSpec{...}"),
                               "field is immutable")]
