"""Serving certificates for the webhook server (for local runs and tests).

``write_self_signed(cert_dir, hosts)`` writes ``tls.crt`` and ``tls.key`` (ECDSA P-256, valid one
year, SANs for loopback plus ``hosts``) signed by a throwaway CA, and returns the CA's PEM, which
clients use as their CA bundle (an AdmissionReview client's ``caBundle``).
"""

from __future__ import annotations

from pathlib import Path

from samplecontroller.tls import serving_material

CERT_NAME = "tls.crt"
KEY_NAME = "tls.key"


def write_self_signed(cert_dir: str | Path, hosts: tuple[str, ...] = ()) -> bytes:
    """Write tls.crt/tls.key into ``cert_dir`` (created if needed); return the CA certificate PEM."""
    directory = Path(cert_dir)
    directory.mkdir(parents=True, exist_ok=True)
    material = serving_material(tuple(hosts), common_name="samplecontroller-webhook")
    (directory / CERT_NAME).write_bytes(material.cert_pem)
    key_path = directory / KEY_NAME
    key_path.write_bytes(material.key_pem)
    key_path.chmod(0o600)
    return material.ca_pem
