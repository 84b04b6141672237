"""ClusterTrustBundle validation as kube-apiserver runs pkg/apis/certificates/validation
``ValidateClusterTrustBundle`` (``strategies.trustbundles``), through the kind's strategy and
the object meta check as the server runs them."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from samplecontroller.apiserver.restmapper import Resource
from samplecontroller.apiserver.strategies import for_kind
from samplecontroller.apiserver.validation import validate_object_meta

_RES = Resource("certificates.k8s.io", "v1", "clustertrustbundles", "ClusterTrustBundle", namespaced=False)


def _cert(ca: bool | None) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test")])
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1)))
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


CA, CA2, LEAF, BARE = _cert(True), _cert(True), _cert(False), _cert(None)


def _bundle(name: str, trust: str, signer: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"trustBundle": trust}
    if signer is not None:
        spec["signerName"] = signer
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle", "metadata": {"name": name},
            "spec": spec}


def _errors(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    strategy = for_kind("certificates.k8s.io", "ClusterTrustBundle")
    errors = validate_object_meta(obj, False) + strategy.validate(_RES, obj, None)
    errors += strategy.validate_gated(_RES, obj, old, 37) + strategy.validate_extra(obj, old)
    return [str(e) for e in errors]


_OMIT = 'spec.trustBundle: Invalid value: "<value omitted>"'
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("ok", _bundle("roots", CA + CA2), []),
    ("signer-named ok", _bundle("example.com:signer:roots", "junk before\n" + CA, "example.com/signer"), []),
    ("no anchor", _bundle("roots", "x"), [f"{_OMIT}: at least one trust anchor must be provided"]),
    ("not a certificate block", _bundle("roots", CA.replace("CERTIFICATE", "PUBLIC KEY")),
     [f"{_OMIT}: entry 0 has bad block type: PUBLIC KEY"]),
    ("headers", _bundle("roots", CA.replace("-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)),
     [f"{_OMIT}: entry 0 has PEM block headers"]),
    ("not X.509", _bundle("roots", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
     [f"{_OMIT}: entry 0 does not parse as X.509"]),
    ("not a CA", _bundle("roots", CA + LEAF + BARE),
     [f"{_OMIT}: entry 1 does not have the CA bit set", f"{_OMIT}: entry 2 does not have the CA bit set"]),
    ("duplicate", _bundle("roots", CA + CA2 + CA), [f"{_OMIT}: duplicate trust anchor (indices [0 2])"]),
    ("too long", _bundle("roots", "x" * (1024 * 1024 + 1)),
     ["spec.trustBundle: Too long: may not be more than 1048576 bytes"]),
    ("colon without signer", _bundle("a:b", CA),
     ['metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its '
      "name"]),
    ("name without the signer prefix", _bundle("roots", CA, "example.com/signer"),
     ['metadata.name: Invalid value: "roots": ClusterTrustBundle for signerName example.com/signer must be '
      "named with prefix example.com:signer:"]),
    ("bad signer name", _bundle("example.com:roots", CA, "example.com"),
     ['spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form '
      "'example.com/signer-name'"]),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cluster_trust_bundle(obj: dict[str, Any], expected: list[str]) -> None:
    assert _errors(obj) == expected


def test_update() -> None:
    """signerName is immutable; an unchanged trustBundle is not parsed again."""
    stored = _bundle("roots", "x")
    assert _errors(_bundle("roots", "x"), stored) == []
    moved = _bundle("example.com:signer:roots", CA, "example.com/signer")
    assert _errors(moved, _bundle("example.com:signer:roots", CA)) == [
        'spec.signerName: Invalid value: "example.com/signer": field is immutable']
