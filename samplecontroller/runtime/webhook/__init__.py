"""An HTTPS admission webhook server (pkg/webhook).

``Server(host="", port=9443, cert_dir=...)`` serves AdmissionReview v1 handlers registered with
``register(path, handler)`` over TLS using ``tls.crt``/``tls.key`` from ``cert_dir`` (Go's
defaults: port 9443, ``<tmp>/k8s-webhook-server/serving-certs``). It is a manager runnable
(``start(stop)`` blocks; not leader-only). ``port`` 0 picks a free port; ``bound_port`` tells
which once ``started`` is set. Handlers run on a thread pool, so they may block.
``started_checker()`` is a healthz checker that fails until the server listens.
See ``admission`` for defaulters and validators and ``webhook_managed_by``. Needs the
``webhook`` extra (aiohttp, cryptography): without it, importing this package raises
``samplecontroller._extras.MissingExtraError`` (one line naming the pip command).
"""

from __future__ import annotations

from samplecontroller import _extras

_extras.require("webhook", "samplecontroller.runtime.webhook")

import asyncio
import json
import os
import ssl
import tempfile
import threading
from pathlib import Path

from aiohttp import web

from samplecontroller import webserving
from samplecontroller.logs import get_logger
from samplecontroller.runtime.webhook.admission import (
    BadRequest,
    DefaultingHandler,
    Handler,
    ValidatingHandler,
    WebhookBuilder,
    denied,
    parse_review,
    path_for,
    review,
    webhook_managed_by,
)
from samplecontroller.runtime.webhook.certs import CERT_NAME, KEY_NAME, write_self_signed

log = get_logger("runtime.webhook")

DEFAULT_PORT = 9443
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs")
MAX_BODY = 7 * 1024 * 1024


class Server:
    """See the module docstring."""

    def __init__(self, host: str = "", port: int = DEFAULT_PORT, cert_dir: str | Path = "",
                 cert_name: str = CERT_NAME, key_name: str = KEY_NAME) -> None:
        self.host = host
        self.port = port
        self.cert_dir = Path(cert_dir or DEFAULT_CERT_DIR)
        self.cert_name = cert_name
        self.key_name = key_name
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self.started = threading.Event()
        self.bound_port = 0

    def need_leader_election(self) -> bool:
        return False

    def register(self, path: str, handler: Handler) -> None:
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with /")
        with self._lock:
            if path in self._handlers:
                raise ValueError(f"can't register duplicate path: {path}")
            self._handlers[path] = handler

    def started_checker(self) -> None:
        if not self.started.is_set():
            raise RuntimeError("webhook server has not started yet")

    def _ssl_context(self) -> ssl.SSLContext:
        cert, key = self.cert_dir / self.cert_name, self.cert_dir / self.key_name
        if not cert.exists() or not key.exists():
            raise FileNotFoundError(f"webhook serving certificate not found: expected {cert} and {key}")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(cert), str(key))
        return ctx

    async def _handle(self, request: web.Request) -> web.Response:
        with self._lock:
            handler = self._handlers.get(request.path)
        if handler is None:
            return web.Response(status=404, text="404 page not found\n")
        if request.method != "POST":
            return web.Response(status=405, text="only POST is allowed\n")
        ctype = request.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip() != "application/json":
            return web.Response(status=400, text=f"contentType={ctype}, expected application/json\n")
        body = await request.read()
        try:
            req = parse_review(body)
        except BadRequest as err:
            return web.json_response(review(denied("", 400, "BadRequest", str(err))), status=200)
        resp = await asyncio.get_running_loop().run_in_executor(None, handler.handle, req)
        return web.Response(body=json.dumps(review(resp)).encode(), content_type="application/json")

    def start(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set. Raises when the certificate is missing or the port is taken."""
        asyncio.run(self._serve(stop))

    async def _serve(self, stop: threading.Event) -> None:
        ctx = self._ssl_context()
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host or None, self.port, ssl_context=ctx)
            await site.start()
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.bound_port = int(sockets[0].getsockname()[1]) if sockets else self.port
            log.info("Serving webhook server", host=self.host or "0.0.0.0", port=self.bound_port)
            self.started.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)
        finally:
            self.started.clear()
            await webserving.cleanup(runner)  # no connection left to the garbage collector


__all__ = [
    "DEFAULT_CERT_DIR", "DEFAULT_PORT", "DefaultingHandler", "Handler", "Server", "ValidatingHandler",
    "WebhookBuilder", "path_for", "webhook_managed_by", "write_self_signed",
]
