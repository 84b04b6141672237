"""Every certificate the toolkit makes passes strict X.509 verification, on every Python.

Python 3.13's ``ssl.create_default_context()`` (and urllib3 2 there) sets ``VERIFY_X509_STRICT``:
OpenSSL then refuses a certificate without an Authority Key Identifier, a CA without a Subject
Key Identifier or keyUsage, a non-critical CA basicConstraints, ... These tests set the flag
explicitly, so 3.11 and 3.12 check what 3.13 users get: real TLS handshakes against the embedded
API server (fresh material and material kept in a data directory, also material an older version
wrote there) and the webhook server. The kubeconfig tests' own client and server certificates are
checked the same way in ``test_kubeconfig.py`` (their mutual-TLS server verifies strictly).
"""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from samplecontroller import tls
from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.runtime.webhook import Server, write_self_signed


def strict_context(ca_pem: bytes) -> ssl.SSLContext:
    """A client context trusting ``ca_pem`` with strict X.509 verification, whatever the Python."""
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    assert ctx.verify_flags & ssl.VERIFY_X509_STRICT
    return ctx


def handshake(ctx: ssl.SSLContext, port: int, server_hostname: str = "localhost") -> dict[str, object]:
    """A TLS handshake with 127.0.0.1:``port``; the verified peer certificate."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            ctx.wrap_socket(raw, server_hostname=server_hostname) as conn:
        peer = conn.getpeercert()
    assert peer
    return dict(peer)


def get_version(server: LocalAPIServer, ctx: ssl.SSLContext) -> dict[str, object]:
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=10)
    try:
        conn.request("GET", "/version", headers={"Authorization": f"Bearer {server.token}"})
        resp = conn.getresponse()
        assert resp.status == 200
        out: dict[str, object] = json.loads(resp.read())
        return out
    finally:
        conn.close()


def test_every_certificate_has_what_strict_verification_needs() -> None:
    """The extensions themselves (the handshakes below prove OpenSSL's verdict)."""
    material = tls.serving_material(("example.internal",), common_name="strict-check")
    ca = x509.load_pem_x509_certificate(material.ca_pem)
    leaf = x509.load_pem_x509_certificate(material.cert_pem)
    for cert in (ca, leaf):
        assert cert.version is x509.Version.v3
        ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        assert not ski.critical
        assert ski.value == x509.SubjectKeyIdentifier.from_public_key(cert.public_key())  # type: ignore[arg-type]
        aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
        assert not aki.critical
        assert aki.value.key_identifier == ca.extensions.get_extension_for_class(
            x509.SubjectKeyIdentifier).value.digest
        assert cert.extensions.get_extension_for_class(x509.KeyUsage).critical
        basic = cert.extensions.get_extension_for_class(x509.BasicConstraints)
        assert basic.critical and basic.value.ca is (cert is ca)
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert leaf.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature
    assert list(leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH]
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "example.internal" in san.get_values_for_type(x509.DNSName)


def test_embedded_apiserver_serving_certificate(apiserver: LocalAPIServer) -> None:
    assert apiserver.ca_path is not None
    ctx = strict_context(apiserver.ca_path.read_bytes())
    for name in ("localhost", "127.0.0.1"):
        handshake(ctx, apiserver.port, name)
    assert "gitVersion" in get_version(apiserver, ctx)


def _legacy_material(directory: Path) -> None:
    """What samplecontroller wrote into ``<data dir>/pki`` before the key identifiers: a CA with
    basicConstraints and keyUsage only, a serving certificate without keyUsage and key identifiers."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "samplecontroller-local-ca")])

    def builder(subject: x509.Name, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(public)
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                .not_valid_after(now + datetime.timedelta(days=365)))

    ca = (builder(ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "samplecontroller-apiserver")]),
                    key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(
                ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    tls.private_dir(directory)
    tls.write_private(directory / "ca.crt", tls.cert_pem(ca))
    tls.write_private(directory / "tls.crt", tls.cert_pem(leaf))
    tls.write_private(directory / "tls.key", tls.key_pem(key))


def test_material_kept_in_a_data_directory(tmp_path: Path) -> None:
    """Material in ``<data dir>/pki`` is strict too; material an older version wrote there (no key
    identifiers: Python 3.13 clients refuse it) is replaced, not served."""
    pki = tmp_path / "data" / "pki"
    _legacy_material(pki)
    legacy_ca = (pki / "ca.crt").read_bytes()
    with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "kubeconfig") as server:
        assert server.ca_path is not None
        ca = server.ca_path.read_bytes()
        assert ca != legacy_ca and (pki / "ca.crt").read_bytes() == ca
        assert "gitVersion" in get_version(server, strict_context(ca))
    # kept across restarts once it is good
    with LocalAPIServer(data_dir=tmp_path / "data", kubeconfig_path=tmp_path / "kubeconfig") as server:
        assert server.ca_path is not None and server.ca_path.read_bytes() == ca
        assert "gitVersion" in get_version(server, strict_context(ca))


def test_legacy_material_fails_strict_verification(tmp_path: Path) -> None:
    """The reason for the replacement above: what older versions wrote fails a strict handshake."""
    _legacy_material(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                try:
                    server_ctx.wrap_socket(conn, server_side=True).close()
                except (ssl.SSLError, OSError):
                    pass

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        with pytest.raises(ssl.SSLCertVerificationError, match="Key Identifier"):
            handshake(strict_context((tmp_path / "ca.crt").read_bytes()), listener.getsockname()[1])
        thread.join(10)


@pytest.fixture
def webhook_server(tmp_path: Path) -> Iterator[tuple[Server, bytes]]:
    ca = write_self_signed(tmp_path, ("webhook.example",))
    server = Server(host="127.0.0.1", port=0, cert_dir=tmp_path)
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.started.wait(10)
    yield server, ca
    stop.set()
    thread.join(10)
    assert not thread.is_alive()


def test_webhook_server_certificate(webhook_server: tuple[Server, bytes]) -> None:
    """As the API server's admission client (``caBundle`` = the returned CA) verifies it."""
    server, ca = webhook_server
    ctx = strict_context(ca)
    for name in ("localhost", "127.0.0.1", "webhook.example"):
        handshake(ctx, server.bound_port, name)
    conn = http.client.HTTPSConnection("127.0.0.1", server.bound_port, context=ctx, timeout=10)
    try:
        conn.request("POST", "/not-registered", body=b"{}", headers={"Content-Type": "application/json"})
        assert conn.getresponse().status == 404
    finally:
        conn.close()


def test_client_certificates_made_by_leaf_certificate(tmp_path: Path) -> None:
    """A client certificate from ``tls.leaf_certificate`` passes a server's strict verification."""
    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(hours=1))
    ca = tls.certificate_authority("strict-test-ca", validity)
    server_cert = tls.leaf_certificate("server", ca, validity, ExtendedKeyUsageOID.SERVER_AUTH, ("localhost",))
    client_cert = tls.leaf_certificate("alice", ca, validity, ExtendedKeyUsageOID.CLIENT_AUTH)
    for name, (cert, key) in (("server", server_cert), ("client", client_cert)):
        (tmp_path / f"{name}.crt").write_bytes(tls.cert_pem(cert))
        (tmp_path / f"{name}.key").write_bytes(tls.key_pem(key))
    ca_pem = tls.cert_pem(ca[0])
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    server_ctx.load_verify_locations(cadata=ca_pem.decode())
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    server_ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    seen: list[str] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def serve() -> None:
            conn, _ = listener.accept()
            with server_ctx.wrap_socket(conn, server_side=True) as tls_conn:
                peer = tls_conn.getpeercert() or {}
                seen.append(dict(x[0] for x in peer["subject"])["commonName"])  # type: ignore[arg-type,index,misc]

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        client_ctx = strict_context(ca_pem)
        client_ctx.load_cert_chain(tmp_path / "client.crt", tmp_path / "client.key")
        handshake(client_ctx, listener.getsockname()[1])
        thread.join(10)
    assert seen == ["alice"]
    assert client_cert[0].extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature
    assert x509.load_pem_x509_certificate(tls.cert_pem(client_cert[0])) == client_cert[0]
