"""Throwaway TLS material: a certificate authority and a serving certificate signed by it.

Used by the embedded API server and by the webhook server for local runs and tests.

Contract: ``serving_material()`` returns PEM bytes for a CA certificate, a serving certificate
(valid for ``localhost``, ``127.0.0.1`` and ``::1`` plus any extra hosts) and its private key.
The material is generated once per process and per host set and then cached in memory (key
generation is the slow part), so starting many servers in one test run stays fast. ECDSA P-256
keys are used: both Go (kubectl) and OpenSSL (the Python client) accept them.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ServingMaterial", "load_or_create", "private_dir", "serving_material", "write_private"]


@dataclass(frozen=True)
class ServingMaterial:
    """PEM-encoded CA certificate, serving certificate and serving key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(hosts: tuple[str, ...]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


@functools.lru_cache(maxsize=8)
def serving_material(extra_hosts: tuple[str, ...] = (), common_name: str = "samplecontroller-apiserver") -> ServingMaterial:
    """The (cached) CA and serving certificate for loopback plus ``extra_hosts``."""
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=365)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("samplecontroller-local-ca"))
        .issuer_name(_name("samplecontroller-local-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    hosts = tuple(dict.fromkeys(("localhost", "127.0.0.1", "::1", *extra_hosts)))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return ServingMaterial(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()),
    )


_FILES = ("ca.crt", "tls.crt", "tls.key")


def load_or_create(directory: Path, extra_hosts: tuple[str, ...] = (),
                   common_name: str = "samplecontroller-apiserver") -> ServingMaterial:
    """The material kept in ``directory`` (``ca.crt``, ``tls.crt``, ``tls.key``) when it is there,
    covers loopback plus ``extra_hosts`` and is valid for at least another day; else new material,
    written there (every file with mode 0600, the directory 0700; existing ones are tightened to
    those modes). Clients that trust the CA keep working across restarts."""
    paths = [directory / name for name in _FILES]
    if all(p.is_file() for p in paths):
        private_dir(directory)
        for path in paths:
            private_file(path)
        material = ServingMaterial(*(p.read_bytes() for p in paths))
        if _still_good(material, ("localhost", "127.0.0.1", "::1", *extra_hosts)):
            return material
    material = serving_material(extra_hosts, common_name)
    private_dir(directory)
    for path, data in zip(paths, (material.ca_pem, material.cert_pem, material.key_pem), strict=True):
        write_private(path, data)
    return material


def private_dir(directory: Path) -> None:
    """Make ``directory`` (and missing parents) with mode 0700; an existing one loses any group
    and other permissions (it holds keys and tokens)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    if directory.stat().st_mode & 0o077:
        directory.chmod(0o700)


def private_file(path: Path) -> None:
    """Take group and other permissions from an existing ``path`` (a file loosened since it was
    written, or kept by an older version)."""
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically by a file holding ``data`` that was created with mode 0600 (never
    readable by other users, not even for a moment: no write-then-chmod)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)  # a leftover of a crash may have other modes; O_EXCL makes a fresh one
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _still_good(material: ServingMaterial, hosts: tuple[str, ...]) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(material.cert_pem)
        serialization.load_pem_private_key(material.key_pem, password=None)
        x509.load_pem_x509_certificate(material.ca_pem)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, x509.ExtensionNotFound):
        return False
    names = {str(n) for n in san.get_values_for_type(x509.DNSName)}
    names |= {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    wanted = {str(ipaddress.ip_address(h)) if _is_ip(h) else h for h in hosts}
    expires = cert.not_valid_after_utc
    return wanted <= names and expires - datetime.datetime.now(datetime.UTC) > datetime.timedelta(days=1)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
