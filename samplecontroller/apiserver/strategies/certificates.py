"""The CertificateSigningRequest strategy (pkg/registry/certificates/certificates and
pkg/apis/certificates/validation):

- on create, ``spec.username``/``uid``/``groups``/``extra`` are the requester's (whatever the
  client sent is dropped) and the status starts empty: nobody creates a pre-approved request;
- ``spec.request`` must be a PEM ``CERTIFICATE REQUEST`` with a valid signature, ``usages`` known
  and unique, ``signerName`` of the form ``example.com/signer-name``, ``expirationSeconds`` at
  least 600;
- an update of the main resource changes neither spec nor status; the ``status`` subresource may
  set the certificate (once) and conditions other than Approved/Denied; the ``approval``
  subresource (``kubectl certificate approve|deny``) changes only the conditions;
- conditions: Approved, Denied and Failed are True only, Approved and Denied are mutually
  exclusive, none of them is ever removed, one condition per type; their timestamps are filled in.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from cryptography import x509

from samplecontroller.apiserver.objects import copy_json, deep_get, now_rfc3339
from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.schema import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from samplecontroller.apiserver.strategies.base import Obj, Schema, Strategy

__all__ = ["CertificateSigningRequestStrategy"]

_USAGES = sorted({
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment",
    "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing",
    "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc"})
_TRUE_ONLY = ("Approved", "Denied", "Failed")
_APPROVAL = ("Approved", "Denied")


def _conditions(obj: Obj) -> list[dict[str, Any]]:
    found = deep_get(obj, "status", "conditions")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _of_type(obj: Obj, ctype: str) -> list[dict[str, Any]]:
    return [c for c in _conditions(obj) if c.get("type") == ctype]


def request_error(encoded: Any) -> str | None:
    """Why ``spec.request`` (base64 of PEM) is no signed PKCS#10 request (None when it is one):
    the first PEM block must be a ``CERTIFICATE REQUEST`` whose signature verifies."""
    try:
        pem = base64.b64decode(str(encoded or ""), validate=True)
    except (binascii.Error, ValueError):
        pem = b""
    start = pem.find(b"-----BEGIN ")
    if start < 0 or not pem.startswith(b"-----BEGIN CERTIFICATE REQUEST-----", start):
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_pem_x509_csr(pem[start:])
    except ValueError:
        return "x509: malformed certificate request"
    if not csr.is_signature_valid:
        return "x509: signature verification failure"
    return None


def _signer_name_errors(name: Any) -> list[FieldError]:
    if not name:
        return [required("spec.signerName")]
    text = str(name)
    domain, _, path = text.partition("/")
    if not path or not domain or "/" in path:
        return [invalid("spec.signerName", text, "must be a fully qualified domain and path of the form "
                        "'example.com/signer-name'")]
    return []


class CertificateSigningRequestStrategy(Strategy):
    """CertificateSigningRequests (see the module docstring)."""

    records_requester = True

    def __init__(self) -> None:
        super().__init__(field_labels=["spec.signerName"])

    def set_requester(self, obj: Obj, user: Mapping[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        if user.get("username"):
            spec["username"] = str(user["username"])
        if user.get("uid"):
            spec["uid"] = str(user["uid"])
        if user.get("groups"):
            spec["groups"] = [str(g) for g in user["groups"]]
        if user.get("extra"):
            spec["extra"] = {str(k): [str(x) for x in v] for k, v in dict(user["extra"]).items()}

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str) -> None:
        new["spec"] = copy_json(old.get("spec"))
        old_status = dict(old.get("status") or {})
        raw_status = new.get("status")
        new_status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
        if subresource == "approval":
            status = {**old_status, "conditions": new_status.get("conditions")}
        elif subresource == "status":
            status = {**new_status}
            approval = [c for c in _conditions(new) if c.get("type") in _APPROVAL]
            if approval != [c for c in _conditions(old) if c.get("type") in _APPROVAL]:
                status["conditions"] = old_status.get("conditions")  # only the approval subresource sets them
        else:
            status = copy_json(old_status)
        if status.get("conditions") in (None, []):
            status.pop("conditions", None)
        new["status"] = status
        self._stamp_conditions(new, old)

    @staticmethod
    def _stamp_conditions(new: Obj, old: Obj) -> None:
        """populateConditionTimestamps: lastUpdateTime when unset, lastTransitionTime for a new
        condition or a changed status."""
        now = now_rfc3339()
        before = {c.get("type"): c for c in _conditions(old)}
        for condition in _conditions(new):
            condition.setdefault("lastUpdateTime", now)
            previous = before.get(condition.get("type"))
            if not condition.get("lastTransitionTime"):
                same = previous is not None and previous.get("status") == condition.get("status")
                condition["lastTransitionTime"] = previous.get("lastTransitionTime", now) if same and previous else now

    def validate(self, res: Resource, obj: Obj, sch: Schema) -> list[FieldError]:
        errors = super().validate(res, obj, sch)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        if "request" in spec:
            problem = request_error(spec.get("request"))
            if problem is not None:
                errors.append(invalid("spec.request", spec.get("request"), problem))
        usages = spec.get("usages") if isinstance(spec.get("usages"), list) else []
        assert isinstance(usages, list)
        if not usages:
            errors.append(required("spec.usages"))
        seen: set[Any] = set()
        for i, usage in enumerate(usages):
            if usage not in _USAGES:
                errors.append(not_supported(f"spec.usages[{i}]", usage, _USAGES))
            if usage in seen:
                errors.append(duplicate(f"spec.usages[{i}]", usage))
            seen.add(usage)
        if spec.get("signerName"):
            errors += _signer_name_errors(spec["signerName"])
        seconds = spec.get("expirationSeconds")
        if isinstance(seconds, int) and seconds < 600:
            errors.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 600 seconds "
                                                                     "(10 minutes)"))
        return errors + self._condition_errors(obj)

    @staticmethod
    def _condition_errors(obj: Obj) -> list[FieldError]:
        errors: list[FieldError] = []
        seen: set[Any] = set()
        approved = denied = False
        for i, condition in enumerate(_conditions(obj)):
            path, ctype, status = f"status.conditions[{i}]", condition.get("type"), condition.get("status")
            if not ctype:
                errors.append(required(f"{path}.type"))
            allowed = ["True"] if ctype in _TRUE_ONLY else ["False", "True", "Unknown"]
            if not status:
                errors.append(required(f"{path}.status"))
            elif status not in allowed:
                errors.append(not_supported(f"{path}.status", status, allowed))
            if (ctype == "Approved" and denied) or (ctype == "Denied" and approved):
                errors.append(invalid(f"{path}.type", ctype, "Approved and Denied conditions are mutually exclusive"))
            approved, denied = approved or ctype == "Approved", denied or ctype == "Denied"
            if ctype in seen:
                errors.append(duplicate(f"{path}.type", ctype))
            seen.add(ctype)
        return errors

    def validate_extra(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None:
            return []
        errors: list[FieldError] = []
        for ctype in _TRUE_ONLY:
            if len(_of_type(obj, ctype)) < len(_of_type(old, ctype)):
                errors.append(forbidden("status.conditions", f'updates may not remove a condition of type "{ctype}"'))
        before, after = deep_get(old, "status", "certificate"), deep_get(obj, "status", "certificate")
        if before and after != before:
            errors.append(forbidden("status.certificate", "updates may not modify existing certificate content"))
        return errors
