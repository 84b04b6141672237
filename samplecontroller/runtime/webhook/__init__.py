"""An HTTPS admission webhook server (pkg/webhook).

``Server(host="", port=9443, cert_dir=...)`` serves handlers registered with
``register(path, handler)`` over TLS using ``tls.crt``/``tls.key`` from ``cert_dir`` (Go's
defaults: port 9443, ``<tmp>/k8s-webhook-server/serving-certs``): AdmissionReview v1 handlers
(``admission``) and ConversionReview handlers (``conversion``, at ``/convert``). The certificate
is watched (``runtime.certwatcher``): a renewed pair on disk is served to new connections
within ``cert_poll_interval`` seconds, without a restart. It is a manager runnable
(``start(stop)`` blocks; not leader-only). ``port`` 0 picks a free port; ``bound_port`` tells
which once ``started`` is set. Handlers run on a thread pool, so they may block.
``started_checker()`` is a healthz checker that fails until the server listens.
See ``admission`` for defaulters, validators and ``webhook_managed_by``, ``conversion`` for the
conversion webhook. Needs the
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
from samplecontroller.runtime.certwatcher import DEFAULT_POLL_INTERVAL, CertWatcher
from samplecontroller.runtime.webhook.admission import (
    BadRequest,
    DefaultingHandler,
    Handler,
    ValidatingHandler,
    WebhookBuilder,
    declarations,
    denied,
    denied_by_status,
    parse_review,
    path_for,
    review,
    webhook_managed_by,
)
from samplecontroller.runtime.webhook.certs import CERT_NAME, KEY_NAME, write_self_signed
from samplecontroller.runtime.webhook.conversion import CONVERT_PATH, ConversionWebhook
from samplecontroller.runtime.webhook_options import WebhookDeclaration, WebhookOptions

log = get_logger("runtime.webhook")

DEFAULT_PORT = 9443
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs")
MAX_BODY = 7 * 1024 * 1024


class Server:
    """The HTTPS server of a manager's webhooks (controller-runtime's ``webhook.Server``; see the module docstring).

    ``host`` "" listens on every interface; ``port`` 0 picks a free port (``bound_port`` says
    which once ``started`` is set); ``cert_dir`` holds ``cert_name`` and ``key_name``, re-read
    every ``cert_poll_interval`` seconds.
    """

    def __init__(self, host: str = "", port: int = DEFAULT_PORT, cert_dir: str | Path = "",
                 cert_name: str = CERT_NAME, key_name: str = KEY_NAME,
                 cert_poll_interval: float = DEFAULT_POLL_INTERVAL) -> None:
        self.host = host
        self.port = port
        self.cert_dir = Path(cert_dir or DEFAULT_CERT_DIR)
        self.cert_name = cert_name
        self.key_name = key_name
        self.cert_poll_interval = cert_poll_interval
        self.cert_watcher: CertWatcher | None = None
        self._handlers: dict[str, Handler | ConversionWebhook] = {}
        self._lock = threading.Lock()
        self.started = threading.Event()
        self.bound_port = 0

    def need_leader_election(self) -> bool:
        """False: the webhook server answers on every replica."""
        return False

    def register(self, path: str, handler: Handler | ConversionWebhook) -> None:
        """Serve ``handler`` at ``path`` (as controller-runtime's ``Server.Register``).

        ``path`` must start with ``/``; a path registered twice raises ``ValueError`` (Go
        panics). A handler may be registered before or after ``start``: requests to a path with
        no handler get 404. Only POST with ``Content-Type: application/json`` reaches the
        handler (405 and 400 otherwise); an admission handler gets the ``request`` of a checked
        AdmissionReview v1 body (one that is not gets ``allowed: false`` with code 400), a
        ``ConversionWebhook`` the raw body.
        """
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with /")
        with self._lock:
            if path in self._handlers:
                raise ValueError(f"can't register duplicate path: {path}")
            self._handlers[path] = handler

    def handler(self, path: str) -> Handler | ConversionWebhook | None:
        """The handler registered at ``path``, if any."""
        with self._lock:
            return self._handlers.get(path)

    def started_checker(self) -> None:
        """A healthz checker (``runtime.healthz.Checker``): raises until the server listens.

        Pass the method itself: ``mgr.add_readyz_check("webhook", server.started_checker)``, so
        that a replica is not ready before it can answer the API server's calls (Go's
        ``StartedChecker()`` returns such a checker).
        """
        if not self.started.is_set():
            raise RuntimeError("webhook server has not started yet")

    def _ssl_context(self) -> ssl.SSLContext:
        cert, key = self.cert_dir / self.cert_name, self.cert_dir / self.key_name
        try:
            self.cert_watcher = CertWatcher(cert, key)
        except FileNotFoundError:
            raise FileNotFoundError(f"webhook serving certificate not found: expected {cert} and {key}") from None
        return self.cert_watcher.context

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
        if isinstance(handler, ConversionWebhook):
            status, answer = await asyncio.get_running_loop().run_in_executor(None, handler.serve, body)
            if isinstance(answer, str):
                return web.Response(status=status, text=answer)
            return web.Response(status=status, body=json.dumps(answer).encode(), content_type="application/json")
        try:
            req = parse_review(body)
        except BadRequest as err:
            return web.json_response(review(denied("", 400, "BadRequest", str(err))), status=200)
        resp = await asyncio.get_running_loop().run_in_executor(None, handler.handle, req)
        return web.Response(body=json.dumps(review(resp)).encode(), content_type="application/json")

    async def _watch_certificate(self, stop: threading.Event) -> None:
        """Until ``stop``: reload the certificate when it changes on disk."""
        next_poll = asyncio.get_running_loop().time() + self.cert_poll_interval
        while not stop.is_set():
            await asyncio.sleep(0.05)
            now = asyncio.get_running_loop().time()
            if self.cert_watcher is not None and now >= next_poll:
                next_poll = now + self.cert_poll_interval
                self.cert_watcher.poll()

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
            await self._watch_certificate(stop)
        finally:
            self.started.clear()
            await webserving.cleanup(runner)  # no connection left to the garbage collector


__all__ = [
    "CONVERT_PATH", "DEFAULT_CERT_DIR", "DEFAULT_PORT", "ConversionWebhook", "DefaultingHandler", "Handler", "Server",
    "ValidatingHandler",
    "WebhookBuilder", "WebhookDeclaration", "WebhookOptions", "declarations", "denied_by_status", "path_for", "webhook_managed_by", "write_self_signed",
]
