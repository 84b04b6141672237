"""A self-signed serving certificate for the webhook server (for local runs and tests).

``write_self_signed(cert_dir, hosts)`` writes ``tls.crt`` and ``tls.key`` (ECDSA P-256, valid one
year, SANs for ``hosts``; default localhost, 127.0.0.1, ::1) and returns the certificate PEM,
which clients use as their CA bundle (the certificate is its own CA).
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CERT_NAME = "tls.crt"
KEY_NAME = "tls.key"


def _san(hosts: tuple[str, ...]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def self_signed(hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")) -> tuple[bytes, bytes]:
    """(certificate PEM, private key PEM) of a new self-signed serving certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "webhook")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def write_self_signed(cert_dir: str | Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")) -> bytes:
    """Write tls.crt/tls.key into ``cert_dir`` (created if needed); return the certificate PEM."""
    directory = Path(cert_dir)
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = self_signed(hosts)
    (directory / CERT_NAME).write_bytes(cert)
    key_path = directory / KEY_NAME
    key_path.write_bytes(key)
    key_path.chmod(0o600)
    return cert
