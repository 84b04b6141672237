"""The embedded API server and the controller as separate processes, for the crash and soak tests.

``ServerProcess(tmp, *args)`` runs ``python -m samplecontroller.apiserver --kubeconfig tmp/kubeconfig
*args`` and waits for its ready line; ``kill9()`` ends it as a crash would; ``call`` is a small
HTTPS JSON client (the kubeconfig's token and CA) that raises ``OSError`` when the server is gone.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def wait_until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


class ServerProcess:
    """``python -m samplecontroller.apiserver`` (see the module docstring)."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.kubeconfig = tmp / "kubeconfig"
        self.proc = subprocess.Popen([sys.executable, "-m", "samplecontroller.apiserver", "--kubeconfig",
                                      str(self.kubeconfig), *args], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.extend(self.proc.stdout.readline().split()))  # type: ignore[union-attr]
        reader.start()
        reader.join(60)
        if len(line) < 2 or line[0] != "ready":
            self.proc.kill()
            raise RuntimeError(f"the API server did not start: {line}")
        self.url = line[1]
        parsed = urllib.parse.urlparse(self.url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 443
        cfg = yaml.safe_load(self.kubeconfig.read_text())
        self.token = cfg["users"][0]["user"]["token"]
        ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        self.ssl = ssl.create_default_context(cadata=ca)
        self._local = threading.local()

    def call(self, method: str, path: str, body: Any = None,
             ctype: str = "application/json") -> tuple[int, Any]:
        """One request on this thread's kept-alive connection: (status, decoded JSON body)."""
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=30)
            self._local.conn = conn
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = ctype
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            self._local.conn = None
            raise OSError(f"{method} {path}: {err}") from err
        return resp.status, json.loads(payload) if payload else None

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def install_foo_crd(server: ServerProcess) -> None:
    """Create the Foo CRD and wait until Foos can be created."""
    crd = yaml.safe_load((ROOT / "crds" / "foo.yaml").read_text())
    code, body = server.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    wait_until(lambda: server.call("GET", "/apis/samplecontroller.k8s.io/v1alpha1/foos")[0] == 200, 10,
               "the Foo CRD serves")


class SwitchingProxy:
    """A loopback TCP proxy whose backend can be switched: ``switch(port)`` cuts every open
    connection and sends new ones to ``port`` (a server restored elsewhere, with no downtime)."""

    def __init__(self, backend_port: int) -> None:
        self.backend_port = backend_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def switch(self, backend_port: int) -> None:
        with self._lock:
            self.backend_port = backend_port
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._open.clear()

    def close(self) -> None:
        self._listener.close()
        self.switch(0)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                try:
                    backend = socket.create_connection(("127.0.0.1", self.backend_port))
                except OSError:
                    client.close()
                    continue
                self._open |= {client, backend}
            for src, dst in ((client, backend), (backend, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
