"""Running the embedded API server: ``LocalAPIServer`` (a background thread) and ``serve`` (the CLI).

``LocalAPIServer`` contract: ``__enter__`` returns once the server accepts requests (or raises
``OSError``/``RuntimeError``); ``url``, ``kubeconfig_path``, ``token``, ``ca_path`` are then set
and the kubeconfig (server, CA data, token) is written. ``__exit__`` stops the server, closes
every watch and the storage. ``requests`` is a copy of the recorded
``RequestRecord(user_agent, verb, resource)`` entries (for RBAC-coverage checks), empty unless
``record_requests`` (how many to keep, the newest) is given. ``history``/``history_window`` bound the
watch history (events, seconds; see ``storage``). ``event_ttl`` (seconds, default
3600 as kube-apiserver's ``--event-ttl``) is how long an Event lives after its last write.
``call(fn)`` runs ``fn(core)`` on the server loop (the only safe way to touch its state).
Connections and requests are bounded as kube-apiserver bounds them, each configurable (tests use
short values): ``header_timeout`` (32 s, ReadHeaderTimeout) closes connections that do not
deliver a complete request header in time, ``idle_timeout`` (90 s, IdleTimeout) idle kept-alive
ones (see ``transport``); ``request_timeout`` (60 s, ``--request-timeout``) answers a request that
is not long-running and not done by then (a body that never arrives) with 504 and closes its
connection; ``max_requests_inflight``/``max_mutating_requests_inflight`` (400/200) answer 429 to
requests beyond them, system:masters exempt (see ``filters``). ``api_audiences`` (default the
issuer) are the audiences service account tokens must name one of (see ``tokens``);
``service_account_jwks_uri`` (kube's ``--service-account-jwks-uri``; default this server's own
``url`` + ``/openid/v1/jwks``) is the ``jwks_uri`` of the issuer's OpenID configuration;
``bookmark_interval`` (60 s) how often a watch gets a bookmark. ``simulate_deployments`` and
``simulate_jobs`` turn on the Deployment and Job simulators (``controllers``; ``job_backoff`` is
the Job controller's first Pod failure backoff, 10 s).

Every write is committed before its response is sent (see ``storage``); with ``data_dir`` the
directory is 0700 and every file in it (database, CA, serving key, token) 0600, created so; the
kubeconfig and its ``.ca.crt`` are 0600 too.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import gc
import ipaddress
import secrets
import socket
import ssl
import tempfile
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from samplecontroller.apiserver import bodies, cluster
from samplecontroller.apiserver.controllers import Controllers
from samplecontroller.apiserver.controllers.eventttl import EventExpiry
from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.filters import (
    MAX_MUTATING_REQUESTS_INFLIGHT,
    MAX_REQUESTS_INFLIGHT,
    REQUEST_TIMEOUT,
)
from samplecontroller.apiserver.restmapper import RESTMapper
from samplecontroller.apiserver.storage import Store
from samplecontroller.apiserver.tokens import ISSUER
from samplecontroller.apiserver.transport import (
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    HTTPServer,
)
from samplecontroller.apiserver.version import parse_emulated_version
from samplecontroller.apiserver.web import APIServerApp, RequestRecord
from samplecontroller.tls import load_or_create, private_file, serving_material, write_private

__all__ = ["GC_THRESHOLD", "LocalAPIServer", "is_https_url", "tune_gc", "write_kubeconfig"]

T = TypeVar("T")


GC_THRESHOLD = (10_000, 10, 10)
"""The cycle collector's thresholds in the server process (``gc.set_threshold``; CPython's are
700, 10, 10): the server's GC CPU in ``benchmarks/bench_apiserver.py``'s writes and create
scenarios 0.79 s -> 0.22 s (of about 7 s)."""


def tune_gc() -> None:
    """For a process that is the server's own (``python -m samplecontroller.apiserver``, a
    benchmark's server process), never a host the server is embedded in: collect and freeze
    everything alive now (``gc.freeze``: never scanned again, still freed by reference counting)
    and set ``GC_THRESHOLD``. Call it once the server is ready."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def write_kubeconfig(path: Path, url: str, token: str, ca_pem: bytes | None) -> None:
    """Write a kubeconfig with one cluster/user/context named ``local`` (mode 0600)."""
    cluster: dict[str, Any] = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": cluster}],
        "users": [{"name": "local-admin", "user": {"token": token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "local-admin", "namespace": "default"}}],
        "current-context": "local",
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())


def _load_or_create_token(path: Path, fresh: str) -> str:
    """The bearer token kept at ``path`` (so a restarted server accepts the clients of the last
    run; tightened to mode 0600), or ``fresh``, written there with mode 0600."""
    if path.is_file():
        private_file(path)
        token = path.read_text().strip()
        if token:
            return token
    write_private(path, fresh.encode())
    return fresh


def _endpoint_address(host: str) -> str:
    """The IP address the ``kubernetes`` Service's endpoints show for URL host ``host``."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return "127.0.0.1"


def is_https_url(text: str) -> bool:
    """True for an absolute https URL (kube's check of ``--service-account-jwks-uri``)."""
    parsed = urllib.parse.urlsplit(text)
    return parsed.scheme == "https" and bool(parsed.netloc)


def big_stack_thread(target: Callable[[], None], name: str) -> threading.Thread:
    """A started daemon thread with a ``bodies.SERVER_STACK_SIZE`` stack (``bodies.big_stack``)."""
    with bodies.big_stack():
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
    return thread


class LocalAPIServer:
    """The embedded API server on a background thread with its own event loop. ``emulated_version``
    (``"1.34"``) serves the API of an older Kubernetes minor version, as kube-apiserver's
    ``--emulated-version`` (see ``version``); an unsupported one raises ``EmulationVersionError``."""

    def __init__(self, data_dir: str | Path | None = None, simulate_deployments: bool = False, *,
                 kubeconfig_path: str | Path | None = None, port: int = 0, bind: str = "127.0.0.1",
                 insecure_http: bool = False, token: str | None = None, history: int = 100_000,
                 bookmark_interval: float = 60.0, simulate_delay: float = 0.3, record_requests: int = 0,
                 event_ttl: float = 3600.0, history_window: float = 75.0,
                 header_timeout: float = HEADER_TIMEOUT, api_audiences: tuple[str, ...] = (ISSUER,),
                 idle_timeout: float = IDLE_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT,
                 max_requests_inflight: int = MAX_REQUESTS_INFLIGHT,
                 max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT, simulate_jobs: bool = False,
                 job_backoff: float = 10.0, service_account_jwks_uri: str = "",
                 emulated_version: str | int | None = None) -> None:
        self.emulated_minor = parse_emulated_version(emulated_version)
        """The Kubernetes minor version served (kube-apiserver's ``--emulated-version``; 37 by default)."""
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.simulate_deployments = simulate_deployments
        self.simulate_jobs = simulate_jobs
        self.job_backoff = job_backoff
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        if kubeconfig_path is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="apiserver-")
            kubeconfig_path = Path(self._tmpdir.name) / "kubeconfig"
        self.kubeconfig_path = Path(kubeconfig_path)
        self.port = port
        self.bind = bind
        self.insecure_http = insecure_http
        self._token_given = token is not None
        self.token = token or secrets.token_urlsafe(32)
        self.history = history
        self.history_window = history_window
        self.bookmark_interval = bookmark_interval
        self.simulate_delay = simulate_delay
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.request_timeout = request_timeout
        self.max_requests_inflight = max_requests_inflight
        self.max_mutating_requests_inflight = max_mutating_requests_inflight
        self.api_audiences = tuple(api_audiences) or (ISSUER,)
        if service_account_jwks_uri and not is_https_url(service_account_jwks_uri):
            raise ValueError(f"service_account_jwks_uri requires an https URL, got {service_account_jwks_uri!r}")
        self.service_account_jwks_uri = service_account_jwks_uri
        if event_ttl <= 0:
            raise ValueError(f"event_ttl must be positive, got {event_ttl}")
        self.record_requests = record_requests
        self.event_ttl = event_ttl
        self.url = ""
        self.ca_path: Path | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.core: Core | None = None
        self.controllers: Controllers | None = None
        self.store: Store | None = None
        self.app: APIServerApp | None = None
        self._http: HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._expiry: EventExpiry | None = None

    @property
    def requests(self) -> list[RequestRecord]:
        """The recorded requests, oldest first (a copy; empty unless ``record_requests``)."""
        return list(self.app.requests) if self.app is not None else []

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> LocalAPIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server on its own thread and wait until it serves (raises what failed, within 30 s)."""
        self._thread = big_stack_thread(self._run, "apiserver")
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        if not self._ready.is_set():
            raise RuntimeError("the embedded API server did not start within 30s")

    def stop(self) -> None:
        """Stop the server and wait for its thread; safe to call twice."""
        loop, stop = self.loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(15)
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._main())
        except BaseException as err:  # report startup failures to start()
            self._error = err
            self._ready.set()
        finally:
            loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        await self.serve_async()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.shutdown_async()

    async def serve_async(self) -> None:
        """Start serving on the current loop (used by the thread and by the CLI)."""
        self.store = Store(self.data_dir, history=self.history, history_window=self.history_window)  # takes the data directory's lock
        if self.data_dir is not None and not self._token_given:
            self.token = _load_or_create_token(self.data_dir / "token", self.token)
        ssl_ctx: ssl.SSLContext | None = None
        ca_pem: bytes | None = None
        if not self.insecure_http:
            extra = () if self.bind in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::") else (self.bind,)
            material = (load_or_create(self.data_dir / "pki", extra) if self.data_dir is not None
                        else serving_material(extra))
            ca_pem = material.ca_pem
            ssl_ctx = self._ssl_context(material.cert_pem, material.key_pem)
        mapper = RESTMapper(self.emulated_minor)
        self.core = Core(self.store, mapper)
        self.controllers = Controllers(self.core, simulate_deployments=self.simulate_deployments,
                                       simulate_delay=self.simulate_delay, root_ca=ca_pem,
                                       simulate_jobs=self.simulate_jobs, job_backoff=self.job_backoff)
        self.controllers.start(asyncio.get_running_loop())
        self._expiry = EventExpiry(self.store, self.event_ttl)
        self._expiry.start(asyncio.get_running_loop())
        self.app = APIServerApp(self.store, mapper, self.core, self.token, bookmark_interval=self.bookmark_interval,
                                record_requests=self.record_requests, api_audiences=self.api_audiences,
                                request_timeout=self.request_timeout, max_requests_inflight=self.max_requests_inflight,
                                max_mutating_requests_inflight=self.max_mutating_requests_inflight)
        sock = socket.socket(socket.AF_INET6 if ":" in self.bind else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.bind, self.port))
        sock.listen(1024)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        self._http = HTTPServer(self.app.handler, sock, ssl_context=ssl_ctx, max_body=bodies.MAX_BODY_BYTES,
                                header_timeout=self.header_timeout, idle_timeout=self.idle_timeout)
        await self._http.start()
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "") else ("[::1]" if self.bind == "::" else self.bind)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        scheme = "http" if self.insecure_http else "https"
        cluster.publish_endpoints(self.core, _endpoint_address(host), self.port)
        self.url = f"{scheme}://{host}:{self.port}"
        self.app.jwks_uri = self.service_account_jwks_uri or f"{self.url}/openid/v1/jwks"
        if ca_pem is not None:
            ca_file = self.kubeconfig_path.with_name(self.kubeconfig_path.name + ".ca.crt")
            ca_file.parent.mkdir(parents=True, exist_ok=True)
            write_private(ca_file, ca_pem)
            self.ca_path = ca_file
        write_kubeconfig(self.kubeconfig_path, self.url, self.token, ca_pem)

    async def shutdown_async(self) -> None:
        """On the server's event loop: close every watch and stop the background work before the loop ends."""
        if self._expiry is not None:
            self._expiry.stop()
        if self.store is not None:
            for group in list(self.store.watchers.values()):
                for watcher in list(group):
                    watcher.close()
        if self.app is not None:
            self.app.stopping = True
        if self._http is not None:
            await self._http.close()
        if self.app is not None:
            await self.app.close()
        if self.store is not None:
            self.store.close()

    @staticmethod
    def _ssl_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            write_private(cert, cert_pem)
            write_private(key, key_pem)
            ctx.load_cert_chain(str(cert), str(key))
        return ctx

    # ------------------------------------------------------------------ helpers for tests

    def call(self, fn: Callable[[Core], T], timeout: float = 10.0) -> T:
        """Run ``fn(core)`` on the server loop and return its result."""
        loop, core = self.loop, self.core
        if loop is None or core is None:
            raise RuntimeError("the server is not running")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn(core))
            except BaseException as err:
                future.set_exception(err)

        loop.call_soon_threadsafe(run)
        return future.result(timeout)

    def compact(self) -> int:
        """Compact the history at the current revision (later watches from older RVs get 410)."""
        return self.call(lambda core: core.store.compact())
