"""runtime.certwatcher: the webhook server serves a renewed certificate without a restart (issue 23, item 3)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from samplecontroller.runtime.certwatcher import CertWatcher
from samplecontroller.runtime.webhook import Server
from samplecontroller.runtime.webhook.certs import CERT_NAME, KEY_NAME, write_self_signed


def peer_certificate(port: int) -> bytes:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock, \
            ctx.wrap_socket(sock, server_hostname="localhost") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def pem_to_der(path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(path.read_text().split("-----END CERTIFICATE-----")[0]
                                    + "-----END CERTIFICATE-----\n")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    write_self_signed(tmp_path)
    s = Server(host="127.0.0.1", port=0, cert_dir=tmp_path, cert_poll_interval=0.05)
    stop = threading.Event()
    thread = threading.Thread(target=s.start, args=(stop,), daemon=True)
    thread.start()
    assert s.started.wait(10)
    yield s
    stop.set()
    thread.join(10)


def test_a_renewed_certificate_is_served_to_new_connections(server: Server, tmp_path: Path) -> None:
    first = peer_certificate(server.bound_port)
    assert first == pem_to_der(tmp_path / CERT_NAME)
    write_self_signed(tmp_path, ("renewed.example",))  # a new pair, as cert-manager renews the Secret
    renewed = pem_to_der(tmp_path / CERT_NAME)
    assert renewed != first
    deadline = time.monotonic() + 30
    while peer_certificate(server.bound_port) != renewed:
        assert time.monotonic() < deadline, "the renewed certificate was never served"
        time.sleep(0.05)
    assert server.cert_watcher is not None and server.cert_watcher.reloads >= 1


def test_a_pair_that_does_not_load_keeps_the_current_one(tmp_path: Path) -> None:
    write_self_signed(tmp_path)
    watcher = CertWatcher(tmp_path / CERT_NAME, tmp_path / KEY_NAME)
    assert watcher.poll() is False  # nothing changed
    (tmp_path / KEY_NAME).write_text("half written")
    assert watcher.poll() is False and watcher.reloads == 0
    write_self_signed(tmp_path, ("renewed.example",))
    assert watcher.poll() is True and watcher.reloads == 1


def test_a_missing_pair_names_the_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"expected .*tls\.crt and .*tls\.key"):
        CertWatcher(tmp_path / CERT_NAME, tmp_path / KEY_NAME)
