"""The Manager: a shared cache and client, runnables, leader election, metrics and probes
(pkg/manager).

``mgr = Manager(rest, Options(...), scheme=SCHEME)`` (the application's Scheme, for example a
generated package's ``scheme.SCHEME``: the library has none of its own); add controllers (usually through
``runtime.builder.controller_managed_by(mgr)``) and other runnables with ``add``; then
``mgr.start(stop)`` blocks until ``stop`` is set.

Start order (as Go): metrics and health servers; the cache; non-leader runnables (the webhook
server, anything whose ``need_leader_election()`` is False); then, once elected (at once without
leader election), leader runnables (controllers). A runnable is anything with
``start(stop: threading.Event)`` that blocks until ``stop``; one without
``need_leader_election`` counts as leader-only.

Guarantees:
- When ``stop`` is set every runnable is asked to stop; ``start`` returns once all have
  returned or ``graceful_shutdown_timeout`` (30 s) has passed.
- A runnable raising stops the whole manager; ``start`` re-raises the first such error. An
  error raised once the stop has begun (a runnable starting as ``stop`` is set) is only logged.
- Losing the leader lease stops the manager and raises ``LeaderElectionLostError``.
- A metrics or probe address it cannot listen on raises ``ListenError`` (an OSError) first.
- Async controllers (``async def reconcile``) all run on the manager's one event loop
  (``get_event_loop()``, a thread started on first use and closed after every runnable has
  returned); the async client (``get_async_client()``) sends from the same loop. Sync and async
  controllers mix freely.
- Hooks (kopf's ``on.startup``, ``on.cleanup`` and ``on.probe``): ``add_startup_hook(fn)``
  runs ``fn()`` (awaited on the manager's loop when ``async def``) once the probe servers
  listen and before the cache and every runnable start, in the order added; a failure is
  logged once and retried (after a ``TemporaryError``'s delay, else ``backoff``), a
  ``PermanentError``/``TerminalError`` or the last of ``retries`` attempts makes ``start`` raise
  it; the stop while retrying ends ``start``. ``add_cleanup_hook(fn)`` runs ``fn()`` once
  every runnable has returned (in the reverse order; failures logged, not retried).
  ``add_probe(name, fn)``: ``fn()`` returns a JSON-able value, served with the others at the
  liveness endpoint (``/healthz``) as a JSON object when asked for JSON (``Accept:
  application/json`` or ``?format=json``); raising fails the probe (and ``/healthz``).
- Defaults: sync period 10 h, leader election 15 s / 10 s / 2 s, metrics and probes off
  ("0"), webhook port 9443.
- ``shard_ring``: sharding (``runtime.sharding``) instead of leader election: leader runnables
  run while this replica holds its own shard Lease; the builder partitions its controllers'
  ``for_``/``owns`` kinds; a sharder (a non-leader runnable, elected on its own Lease) assigns.
  ``shard_webhook``: it also assigns on create, through a mutating webhook served by the
  webhook server (``runtime.sharding.webhook``).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import socket
import threading
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from samplecontroller.client.scheme import Scheme
from samplecontroller.logs import get_logger
from samplecontroller.probes import ProbeServer, parse_bind_address
from samplecontroller.runtime import healthz
from samplecontroller.runtime import metrics as runtime_metrics
from samplecontroller.runtime.cache import DEFAULT_SYNC_PERIOD, Cache, ClientFor, metadata_client_factory
from samplecontroller.runtime.cache import Options as CacheOptions
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.consistency import ReadYourWrites
from samplecontroller.runtime.eventloop import EventLoop

if TYPE_CHECKING:
    from samplecontroller.runtime.client.aio import AsyncClient
from samplecontroller.wait import with_cancel

log = get_logger("runtime.manager")


class Runnable(Protocol):
    """Anything the Manager runs: ``start(stop)`` blocks until ``stop`` is set (or fails by raising)."""

    def start(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set; an exception stops the whole Manager."""


class LeaderElectionLostError(RuntimeError):
    """The manager lost its leader lease."""


class ListenError(OSError):
    """The metrics or health probe server could not listen on its bind address (in use,
    not permitted, ...): raised by ``Manager.start`` before anything else has started."""


@dataclass
class Options:
    """Manager options (Go's manager.Options). Bind addresses: "0" or "" disables."""

    scheme: Scheme | None = None  # or Manager(..., scheme=); one of the two is required
    cache: CacheOptions = field(default_factory=CacheOptions)
    sync_period: float = DEFAULT_SYNC_PERIOD
    namespaces: Sequence[str] = ()
    metrics_bind_address: str = "0"
    health_probe_bind_address: str = "0"
    readiness_endpoint_name: str = "/readyz"
    liveness_endpoint_name: str = "/healthz"
    leader_election: bool = False
    leader_election_id: str = ""
    leader_election_namespace: str = ""
    leader_election_release_on_cancel: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    graceful_shutdown_timeout: float = 30.0
    field_owner: str | None = None
    webhook_port: int = 9443
    webhook_host: str = ""
    webhook_cert_dir: str = ""
    # read your own writes for every controller built on this manager (runtime.consistency)
    read_your_writes: ReadYourWrites = field(default_factory=ReadYourWrites)
    # sharding (runtime.sharding): the ring's name turns it on. This replica then holds its own
    # shard Lease (named shard_identity, default: host name + random suffix) in
    # leader_election_namespace instead of electing a leader; controllers built on this manager
    # partition their for_/owns kinds; an elected sharder assigns objects to the live shards.
    shard_ring: str = ""
    shard_identity: str = ""
    shard_resync_period: float = 300.0
    # assignment on create (runtime.sharding.webhook): the sharder's mutating webhook, served by
    # this Manager's webhook server; its clientConfig (a service or url, and caBundle; the ring's
    # path is appended), or None: this server's URL with the CA in webhook_cert_dir/ca.crt
    shard_webhook: bool = False
    shard_webhook_client_config: dict[str, Any] | None = None


def _needs_leader(r: Any) -> bool:
    fn = getattr(r, "need_leader_election", None)
    return True if fn is None else bool(fn())


class _FuncRunnable:
    def __init__(self, fn: Callable[[threading.Event], None], leader: bool) -> None:
        self.fn = fn
        self.leader = leader

    def start(self, stop: threading.Event) -> None:
        self.fn(stop)

    def need_leader_election(self) -> bool:
        return self.leader


def runnable_func(fn: Callable[[threading.Event], None], *, need_leader_election: bool = True) -> Runnable:
    """Wrap ``fn(stop)`` as a runnable."""
    return _FuncRunnable(fn, need_leader_election)


class Manager:
    """See the module docstring. ``scheme`` (or ``options.scheme``) maps the application's model
    types to resources; ValueError without one. ``client_for`` overrides how typed clients are
    made (tests pass a fake clientset's ``FakeResourceClient`` factory); otherwise ``rest`` is
    required."""

    def __init__(self, rest: Any, options: Options | None = None, *, scheme: Scheme | None = None,
                 client_for: ClientFor | None = None) -> None:
        self.options = options or Options()
        if scheme is not None and self.options.scheme is not None and scheme is not self.options.scheme:
            raise ValueError("a Manager takes one Scheme: scheme= and options.scheme differ")
        chosen = scheme if scheme is not None else self.options.scheme
        if chosen is None:
            raise ValueError("a Manager needs a Scheme (scheme=, for example a generated package's scheme.SCHEME)")
        self.scheme: Scheme = chosen
        self.rest = rest
        metadata_client_for: ClientFor | None = None  # a given client_for reads metadata through itself
        if client_for is None:
            if rest is None:
                raise ValueError("a Manager needs a REST client (or client_for)")
            from samplecontroller.client import ResourceClient

            def client_for(info: Any, ns: str | None) -> Any:
                return ResourceClient(rest, info, ns)

            metadata_client_for = metadata_client_factory(rest)

        self.client_for: ClientFor = client_for
        cache_opts = self.options.cache
        if self.options.namespaces and not cache_opts.namespaces:
            cache_opts.namespaces = tuple(self.options.namespaces)
        if cache_opts.sync_period == DEFAULT_SYNC_PERIOD:
            cache_opts.sync_period = self.options.sync_period
        self.cache = Cache(client_for, cache_opts, scheme=self.scheme, metadata_client_for=metadata_client_for)
        self.client = Client(client_for, self.cache, scheme=self.scheme, field_owner=self.options.field_owner)
        self.api_reader = Client(client_for, None, scheme=self.scheme, field_owner=self.options.field_owner)
        self.healthz = healthz.Handler()
        self.readyz = healthz.Handler()
        self._lock = threading.Lock()
        self._leader: list[Runnable] = []
        self._others: list[Runnable] = []
        self._elected = threading.Event()
        self._started = False
        self._stop: threading.Event | None = None
        self._errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []
        self._servers: list[ProbeServer] = []
        self._webhook_server: Any = None
        self._broadcaster: Any = None
        self.event_loop = EventLoop()
        self._async_client: AsyncClient | None = None
        self._async_rest: Any = None
        self._startup: list[_Hook] = []
        self._cleanup: list[_Hook] = []
        self.sharding: Any = None  # runtime.sharding.shard.Shard with Options.shard_ring
        self.sharder: Any = None
        self.shard_webhook: Any = None  # runtime.sharding.webhook.AssignHandler with Options.shard_webhook
        if self.options.shard_ring:
            self._setup_sharding()
        elif self.options.shard_webhook or self.options.shard_webhook_client_config is not None:
            raise ValueError("shard_webhook needs shard_ring: the webhook assigns objects to the shards of a ring")
        runtime_metrics.install()

    def _setup_sharding(self) -> None:
        from samplecontroller.runtime import sharding
        from samplecontroller.runtime.sharding.shard import Shard
        from samplecontroller.runtime.sharding.sharder import Sharder

        opts = self.options
        sharding.validate_ring_name(opts.shard_ring)
        if opts.leader_election:
            raise ValueError("shard_ring and leader_election exclude each other: a sharded replica holds its own "
                             "shard Lease instead of electing one leader")
        if self.rest is None:
            raise ValueError("sharding needs a REST client")
        identity = opts.shard_identity or sharding.default_identity()
        sharding.validate_identity(identity)
        namespace = opts.leader_election_namespace or _pod_namespace()
        self.sharding = Shard(opts.shard_ring, identity, namespace, self.scheme)
        self.client.on_create = self.sharding.label_created
        self.sharder = Sharder(self.rest, self.sharding, lease_duration=opts.lease_duration,
                               renew_deadline=opts.renew_deadline, retry_period=opts.retry_period,
                               resync_period=opts.shard_resync_period,
                               namespaces=tuple(self.cache.options.namespaces or ()))
        self._others.append(self.sharder)
        if opts.shard_webhook:
            self._setup_shard_webhook()
        elif opts.shard_webhook_client_config is not None:
            raise ValueError("shard_webhook_client_config is set but shard_webhook is not: set shard_webhook=True "
                             "to serve the sharder's assignment webhook")

    def _setup_shard_webhook(self) -> None:
        from pathlib import Path

        from samplecontroller.runtime.sharding import webhook

        opts, shard, sharder = self.options, self.sharding, self.sharder
        base = opts.shard_webhook_client_config
        if base is not None:
            webhook.client_config(shard.ring, base, "", 0, Path())  # a mistake is refused here, named
        server = self.get_webhook_server()
        self.shard_webhook = webhook.AssignHandler(sharder)
        server.register(webhook.path_for(shard.ring), self.shard_webhook)

        def configuration(_leading: threading.Event) -> dict[str, Any] | None:
            if not server.started.is_set():
                return None
            client = webhook.client_config(shard.ring, base, server.host, server.bound_port, Path(server.cert_dir))
            return webhook.configuration(shard.ring, list(shard.partitions.values()), client, sharder.namespaces)

        sharder.webhook_configuration = configuration

    # -- accessors -----------------------------------------------------------------------

    def get_client(self) -> Client:
        """The shared client: reads from the Manager's cache, writes to the API server."""
        return self.client

    def get_cache(self) -> Cache:
        """The shared cache (one informer per type, started with the Manager)."""
        return self.cache

    def get_scheme(self) -> Scheme:
        """The scheme the Manager was built with."""
        return self.scheme

    def get_field_indexer(self) -> Cache:
        """controller-runtime's ``mgr.GetFieldIndexer()``: ``index_field(Model, name, extract)`` registers
        a field index (before the manager starts) that ``client.list(Model, matching_fields={name: value})``
        and the cache's ``list`` then answer from the cache, as Go's ``client.MatchingFields``."""
        return self.cache

    def get_async_client(self) -> AsyncClient:
        """The awaited client for async reconcilers (``runtime.client.aio.AsyncClient``): reads
        from this manager's cache, writes over an ``AsyncRESTClient`` sharing ``rest``'s
        configuration and credentials, on the manager's event loop (use it there only). A
        manager made with ``client_for`` and no REST client gets the same calls over its sync
        client (``FakeAsyncClient``, for fakes). Needs the ``async`` extra with a REST client."""
        with self._lock:
            if self._async_client is None:
                from samplecontroller.runtime.client import aio

                if self.rest is None:
                    self._async_client = aio.FakeAsyncClient(self.client)
                else:
                    from samplecontroller.rest.aio import AsyncRESTClient

                    self._async_rest = AsyncRESTClient(self.rest)
                    self._async_client = aio.AsyncClient.for_rest_client(
                        self._async_rest, self.cache, scheme=self.scheme, field_owner=self.options.field_owner)
                    if self.sharding is not None:
                        self._async_client.on_create = self.sharding.label_created
            return self._async_client

    def get_event_loop(self) -> EventLoop:
        """The event loop every async controller of this manager runs its reconciles on."""
        return self.event_loop

    def get_async_api_reader(self) -> AsyncClient:
        """``get_api_reader`` awaited: ``get_async_client``'s calls, its reads straight from the
        API server (no cache); on the manager's event loop."""
        from samplecontroller.runtime.client import aio

        client = self.get_async_client()
        if isinstance(client, aio.FakeAsyncClient):
            return aio.FakeAsyncClient(self.api_reader)
        return aio.AsyncClient(client.client_for, None, scheme=self.scheme, field_owner=self.options.field_owner)

    def get_api_reader(self) -> Client:
        """A client that reads straight from the API server (no cache)."""
        return self.api_reader

    def elected(self) -> threading.Event:
        """Set once this manager leads (at start without leader election)."""
        return self._elected

    def get_webhook_server(self) -> Any:
        """The manager's webhook server (created on first use, started as a non-leader runnable)."""
        with self._lock:
            if self._webhook_server is None:
                from samplecontroller.runtime.webhook import Server

                self._webhook_server = Server(host=self.options.webhook_host, port=self.options.webhook_port,
                                              cert_dir=self.options.webhook_cert_dir)
                self._others.append(self._webhook_server)
            return self._webhook_server

    def get_event_recorder_for(self, name: str) -> Any:
        """An EventRecorder writing Events as ``name`` (through the REST client)."""
        from samplecontroller import record

        with self._lock:
            if self._broadcaster is None:
                self._broadcaster = record.new_broadcaster()
                # each Event at debug, as controller-runtime's recorder (V(1)): not every Event twice at info
                self._broadcaster.start_structured_logging("debug")
                if self.rest is not None:
                    self._broadcaster.start_recording_to_sink(record.ResourceEventSink.for_rest_client(self.rest))
            return self._broadcaster.new_recorder(name)

    def get_events_recorder_for(self, name: str) -> Any:
        """An events.k8s.io/v1 recorder reporting as ``name`` (``record.events_v1.EventRecorder``:
        ``eventf(regarding, related, type, reason, action, note)``), controller-runtime's new recorder;
        ``get_event_recorder_for`` is the core/v1 one."""
        from samplecontroller.kubernetes.clientset import Clientset
        from samplecontroller.record.events_v1 import EventRecorder, EventWriter

        with self._lock:
            recorders = self.__dict__.setdefault("_events_v1_recorders", {})
            if name not in recorders:
                recorders[name] = EventRecorder(EventWriter.for_clientset(Clientset(self.rest)), name,
                                                f"{name}-{_pod_name()}", scheme=self.scheme)
            return recorders[name]

    # -- registration --------------------------------------------------------------------

    def add(self, runnable: Runnable) -> None:
        """Add a runnable; after start it is started at once (leader ones once elected)."""
        leader = _needs_leader(runnable)
        with self._lock:
            (self._leader if leader else self._others).append(runnable)
            stop = self._stop
            start_now = self._started and stop is not None and (not leader or self._elected.is_set())
        if start_now and stop is not None:
            self._run(runnable, stop)

    def add_healthz_check(self, name: str, check: healthz.Checker) -> None:
        """Add a liveness check ``check() -> None`` (raises to fail) served at ``/healthz`` and ``/healthz/<name>``."""
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: healthz.Checker) -> None:
        """Add a readiness check ``check() -> None`` (raises to fail) served at ``/readyz`` and ``/readyz/<name>``."""
        self.readyz.add(name, check)

    def add_startup_hook(self, fn: Callable[[], Any], *, name: str | None = None, retries: int | None = None,
                         backoff: float = 1.0) -> None:
        """kopf's ``on.startup``: ``fn()`` (sync or ``async def``) runs before the cache and the
        runnables start; retried until it succeeds (see the module docstring). Before ``start``."""
        if retries is not None and retries < 1:
            raise ValueError("retries must be at least 1 (the number of attempts), or None for no limit")
        if backoff < 0:
            raise ValueError("backoff must not be negative")
        with self._lock:
            if self._started:
                raise RuntimeError("startup hooks are added before the manager starts")
            self._startup.append(_Hook(fn, _hook_name(fn, name), retries, backoff))

    def add_cleanup_hook(self, fn: Callable[[], Any], *, name: str | None = None) -> None:
        """kopf's ``on.cleanup``: ``fn()`` (sync or ``async def``) runs once every runnable has
        stopped, before the event loop closes; a failure is logged."""
        with self._lock:
            self._cleanup.append(_Hook(fn, _hook_name(fn, name), 1, 0.0))

    def add_probe(self, name: str, fn: Callable[[], Any]) -> None:
        """kopf's ``on.probe``: ``fn()``'s value is served as ``name`` in the liveness endpoint's
        JSON (``/healthz`` with ``Accept: application/json`` or ``?format=json``); ``fn``
        raising fails the probe and the liveness check."""
        self.healthz.add_probe(name, fn)

    def _run_startup_hooks(self, stop: threading.Event) -> bool:
        """Each startup hook until it succeeds; False when ``stop`` came first. Raises a hook's
        PermanentError/TerminalError, or its last error once out of ``retries``."""
        from samplecontroller.runtime.reconcile import TemporaryError, is_terminal

        for hook in self._startup:
            attempt = 0
            while not stop.is_set():
                attempt += 1
                try:
                    self._call(hook.fn)
                    log.info("Startup hook succeeded", hook=hook.name, attempt=attempt)
                    break
                except Exception as err:
                    error = f"{type(err).__name__}: {err}"
                    if is_terminal(err) or (hook.retries is not None and attempt >= hook.retries):
                        log.error("Startup hook failed; the manager does not start", hook=hook.name,
                                  attempt=attempt, error=error)
                        raise
                    delay = err.delay if isinstance(err, TemporaryError) and err.delay is not None else hook.backoff
                    extra = {} if isinstance(err, TemporaryError) else {
                        "traceback": "".join(traceback.format_exception(err))}
                    log.error(f"Startup hook failed; retrying in {delay:g}s", hook=hook.name, attempt=attempt,
                              error=error, **extra)
                    stop.wait(delay)
        return not stop.is_set()

    def _run_cleanup_hooks(self) -> None:
        for hook in reversed(self._cleanup):
            try:
                self._call(hook.fn)
                log.info("Cleanup hook succeeded", hook=hook.name)
            except Exception as err:
                log.error("Cleanup hook failed", hook=hook.name, error=f"{type(err).__name__}: {err}",
                          traceback="".join(traceback.format_exception(err)))

    def _call(self, fn: Callable[[], Any]) -> Any:
        """``fn()``; a coroutine it returns is run to its end on the manager's event loop."""
        result = fn()
        if inspect.isawaitable(result):
            async def wait() -> Any:
                return await result

            return self.event_loop.run(wait())
        return result

    def cache_synced_check(self) -> None:
        """A readiness checker: fails until the cache has synced."""
        if not self.cache.wait_for_cache_sync(timeout=0):
            raise RuntimeError("informers not synced")

    # -- running -------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Run everything until ``stop`` (see the module docstring). Raises on failure."""
        with self._lock:
            if self._started:
                raise RuntimeError("the manager was already started")
            self._started = True
        internal = with_cancel(stop)  # also cancelled on its own when a runnable fails
        self._stop = internal
        try:
            self._serve_endpoints()
            if not self._run_startup_hooks(internal):
                return
            self._run(runnable_func(self.cache.start, need_leader_election=False), internal)
            synced = self.cache.wait_for_cache_sync(stop=internal, timeout=None)
            if not synced and not internal.is_set():
                raise RuntimeError("failed to wait for caches to sync")
            with self._lock:
                others = list(self._others)
            for r in others:
                self._run(r, internal)
            if self.options.leader_election or self.sharding is not None:
                self._run(runnable_func(self._lead, need_leader_election=False), internal)
            else:
                self._start_leader_runnables(internal)
            internal.wait()
        finally:
            internal.set()
            self._shutdown()
        if self._errors:
            raise self._errors[0]

    def _start_leader_runnables(self, stop: threading.Event) -> None:
        with self._lock:
            self._elected.set()
            leaders = list(self._leader)
        for r in leaders:
            self._run(r, stop)

    def _run(self, r: Runnable, stop: threading.Event) -> None:
        def target() -> None:
            try:
                r.start(stop)
            except BaseException as err:
                if stop.is_set():  # as Go: an error after the stop sequence began is logged, not returned
                    log.error("Error received after the stop sequence was engaged", runnable=type(r).__name__,
                              error=f"{type(err).__name__}: {err}")
                    return
                log.error("Runnable failed; stopping the manager", runnable=type(r).__name__,
                          error=f"{type(err).__name__}: {err}")
                self._errors.append(err)
                stop.set()

        t = threading.Thread(target=target, name=f"runnable-{type(r).__name__}", daemon=True)
        with self._lock:
            self._threads.append(t)
        t.start()

    def _lead(self, stop: threading.Event) -> None:
        from samplecontroller import leaderelection

        opts = self.options
        release = opts.leader_election_release_on_cancel
        if self.sharding is not None:  # this replica's own shard Lease, named after it and labelled with its ring
            from samplecontroller.client import ResourceClient
            from samplecontroller.runtime.sharding import RING_LABEL

            identity = self.sharding.identity
            lock = leaderelection.LeaseLock(self.sharding.namespace, identity,
                                            ResourceClient(self.rest, leaderelection.resourcelock.LEASES,
                                                           self.sharding.namespace),
                                            identity, labels={RING_LABEL: self.sharding.ring})
        else:
            if not opts.leader_election_id:
                raise ValueError("leader election needs leader_election_id")
            namespace = opts.leader_election_namespace or _pod_namespace()
            identity = f"{socket.gethostname()}_{uuid.uuid4()}"
            lock = leaderelection.LeaseLock.for_rest_client(self.rest, namespace, opts.leader_election_id, identity)

        def started(leading_stop: threading.Event) -> None:
            log.info("Became leader", identity=identity)
            self._start_leader_runnables(stop)

        def stopped() -> None:
            if not stop.is_set():
                self._errors.append(LeaderElectionLostError("leader election lost"))
                stop.set()

        config = leaderelection.LeaderElectionConfig(
            lock=lock, lease_duration=opts.lease_duration, renew_deadline=opts.renew_deadline,
            retry_period=opts.retry_period,
            callbacks=leaderelection.LeaderCallbacks(on_started_leading=started, on_stopped_leading=stopped),
            release_on_cancel=release, name=identity if self.sharding is not None else opts.leader_election_id)
        leaderelection.LeaderElector(config).run(stop)

    def _serve_endpoints(self) -> None:
        opts = self.options
        metrics_addr = parse_bind_address(opts.metrics_bind_address)
        probe_addr = parse_bind_address(opts.health_probe_bind_address)
        if metrics_addr is not None:
            self._servers.append(_listen("metrics", metrics_addr, runtime_metrics.serve))
            log.info("Serving metrics", address=f"{metrics_addr[0]}:{self._servers[-1].address[1]}")
        if probe_addr is not None:
            endpoints = {opts.liveness_endpoint_name: self.healthz, opts.readiness_endpoint_name: self.readyz}
            self._servers.append(_listen("health probe", probe_addr, lambda a: healthz.serve(a, endpoints)))
            log.info("Serving health probes", address=f"{probe_addr[0]}:{self._servers[-1].address[1]}")

    def server_addresses(self) -> list[tuple[str, int]]:
        """The bound (host, port) of the metrics and probe servers, in that order."""
        return [s.address for s in self._servers]

    def _shutdown(self) -> None:
        with self._lock:
            threads = list(self._threads)
        timeout = self.options.graceful_shutdown_timeout

        def join_all() -> None:
            for t in threads:
                t.join()

        joiner = threading.Thread(target=join_all, daemon=True)
        joiner.start()
        joiner.join(timeout)
        if joiner.is_alive():
            log.error("Graceful shutdown timed out; some runnables are still running", timeout=timeout)
        self._run_cleanup_hooks()
        for s in self._servers:
            s.close()
        self._servers.clear()
        if self._async_rest is not None and self.event_loop.started():
            with contextlib.suppress(Exception):
                self.event_loop.run(self._async_rest.close())
        self.event_loop.close(timeout)
        if self._broadcaster is not None:
            with contextlib.suppress(Exception):
                self._broadcaster.shutdown()


@dataclass
class _Hook:
    fn: Callable[[], Any]
    name: str
    retries: int | None
    backoff: float


def _hook_name(fn: Any, name: str | None) -> str:
    return name or str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _listen(what: str, address: tuple[str, int], serve: Callable[[tuple[str, int]], ProbeServer]) -> ProbeServer:
    try:
        return serve(address)
    except OSError as err:
        raise ListenError(f"cannot listen on {address[0]}:{address[1]} for the {what} server: "
                          f"{err.strerror or err}") from err


def _pod_namespace() -> str:
    path = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
    with contextlib.suppress(OSError), open(path) as f:
        ns = f.read().strip()
        if ns:
            return ns
    return os.environ.get("POD_NAMESPACE", "default")


__all__ = ["LeaderElectionLostError", "ListenError", "Manager", "Options", "Runnable", "parse_bind_address",
           "runnable_func"]


def _pod_name() -> str:
    """This replica's name (reportingInstance): $POD_NAME, else the host name."""
    import os
    import socket

    return os.environ.get("POD_NAME") or socket.gethostname()
