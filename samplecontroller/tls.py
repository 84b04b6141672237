"""Throwaway TLS material: a certificate authority and a serving certificate signed by it.

Used by the embedded API server and by the webhook server for local runs and tests.

Contract: ``serving_material()`` returns PEM bytes for a CA certificate, a serving certificate
(valid for ``localhost``, ``127.0.0.1`` and ``::1`` plus any extra hosts) and its private key.
The material is generated once per process and per host set and then cached in memory (key
generation is the slow part), so starting many servers in one test run stays fast. ECDSA P-256
keys are used: both Go (kubectl) and OpenSSL (the Python client) accept them.

Every certificate made here passes strict X.509 verification (``ssl.VERIFY_X509_STRICT``, on by
default in Python 3.13's ``ssl.create_default_context`` and in urllib3 there): v3 with Subject and
Authority Key Identifiers, keyUsage, a critical CA basicConstraints, extendedKeyUsage and
subjectAltName on the serving certificate. ``certificate_authority`` and ``leaf_certificate`` make
such certificates for other uses (client certificates in tests). ``load_or_create`` replaces
material kept on disk that lacks them.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ServingMaterial", "cert_pem", "certificate_authority", "key_pem", "leaf_certificate", "load_or_create",
           "private_dir", "serving_material", "write_private"]


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


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    """digitalSignature (an ECDSA key signs the TLS handshake), plus keyCertSign and cRLSign on a CA."""
    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                         data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign, crl_sign=cert_sign,
                         encipher_only=False, decipher_only=False)


def _certificate(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Certificate | None,
                 issuer_key: ec.EllipticCurvePrivateKey, validity: tuple[datetime.datetime, datetime.datetime],
                 *extensions: tuple[x509.ExtensionType, bool]) -> x509.Certificate:
    """A v3 certificate for ``key`` signed by ``issuer_key`` (self-signed when ``issuer`` is None) that
    strict X.509 verification (OpenSSL's ``X509_V_FLAG_X509_STRICT``, Python 3.13's default) accepts:
    a Subject Key Identifier, an Authority Key Identifier (the issuer's subject key identifier, as
    Go's crypto/x509 writes it), keyUsage, and the given ``(extension, critical)`` pairs."""
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    if issuer is None:
        aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski)
    else:
        issuer_ski = issuer.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(issuer_ski)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject if issuer is None else issuer.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(ski, critical=False)
        .add_extension(aki, critical=False)
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(issuer_key, hashes.SHA256())


def certificate_authority(common_name: str, validity: tuple[datetime.datetime, datetime.datetime]
                          ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A self-signed CA (critical basicConstraints CA:TRUE, critical keyUsage keyCertSign/cRLSign)."""
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(_name(common_name), key, None, key, validity,
                        (x509.BasicConstraints(ca=True, path_length=None), True),
                        (_key_usage(cert_sign=True), True))
    return cert, key


def leaf_certificate(common_name: str, ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey],
                     validity: tuple[datetime.datetime, datetime.datetime], usage: x509.ObjectIdentifier,
                     hosts: tuple[str, ...] = ()) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """An end-entity certificate signed by ``ca`` for one extended key usage (server or client
    auth), with a subjectAltName entry per host (DNS name or IP address) when ``hosts`` is given."""
    key = ec.generate_private_key(ec.SECP256R1())
    extensions: list[tuple[x509.ExtensionType, bool]] = [
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (_key_usage(cert_sign=False), True),
        (x509.ExtendedKeyUsage([usage]), False),
    ]
    if hosts:
        extensions.append((_san(hosts), False))
    return _certificate(_name(common_name), key, ca[0], ca[1], validity, *extensions), key


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    """``key`` as an unencrypted PKCS#8 PEM."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def cert_pem(cert: x509.Certificate) -> bytes:
    """``cert`` as PEM."""
    return cert.public_bytes(serialization.Encoding.PEM)


@functools.lru_cache(maxsize=8)
def serving_material(extra_hosts: tuple[str, ...] = (), common_name: str = "samplecontroller-apiserver") -> ServingMaterial:
    """The (cached) CA and serving certificate for loopback plus ``extra_hosts``."""
    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=365))
    ca = certificate_authority("samplecontroller-local-ca", validity)
    hosts = tuple(dict.fromkeys(("localhost", "127.0.0.1", "::1", *extra_hosts)))
    cert, key = leaf_certificate(common_name, ca, validity, ExtendedKeyUsageOID.SERVER_AUTH, hosts)
    return ServingMaterial(ca_pem=cert_pem(ca[0]), cert_pem=cert_pem(cert), key_pem=key_pem(key))


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
        ca = x509.load_pem_x509_certificate(material.ca_pem)
        cert.verify_directly_issued_by(ca)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        # material written before the key identifiers were added fails strict verification
        # (Python 3.13's default): replace it
        for each in (ca, cert):
            for needed in (x509.SubjectKeyIdentifier, x509.AuthorityKeyIdentifier, x509.KeyUsage):
                each.extensions.get_extension_for_class(needed)
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
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
