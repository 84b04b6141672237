"""Wiring for ``main.py``: connect, check, and run the sample-controller.

``run(args, stop, ...)`` is main.go's body. It promises:

- A user mistake (no or bad kubeconfig, unreachable server, bad credentials, the Foo CRD not
  installed) raises nothing: it prints one line ``main.py: error: ...`` and returns 1.
- With ``--local`` it starts the embedded API server (data under ``local_dir``, the
  deployment-status simulator on), installs every CRD in ``crds_dir`` and prints how to point
  kubectl at it, then runs the controller against it.
- When ``stop`` is set (SIGINT/SIGTERM, whichever thread receives it) informers stop, work in
  progress finishes (bounded by ``--shutdown-timeout``) and it returns 0.
- ``--controller runtime`` leaves leader election and the probe/metrics servers to the
  controller-runtime Manager (``foo_reconciler.run``); ``classic`` gets them from here.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from samplecontroller.apimachinery import errors, k8syaml
from samplecontroller.logs import get_logger
from samplecontroller.wait import as_context, with_cancel

if TYPE_CHECKING:
    from generated import clientset as sample
    from generated.informers import SharedInformerFactory as SampleInformerFactory
    from samplecontroller.kubernetes import clientset as kubernetes
    from samplecontroller.kubernetes.informers import SharedInformerFactory as KubeInformerFactory

log = get_logger("main")

FOO_CRD_NAME = "foos.samplecontroller.k8s.io"
FOO_GROUP_VERSION = "samplecontroller.k8s.io/v1alpha1"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class UserError(Exception):
    """A mistake the user can fix; its message is printed as one line."""


def run(args: argparse.Namespace, stop: threading.Event, *, local_dir: Path, crds_dir: Path) -> int:
    """Run the controller as ``main.py`` asked; return the process exit status. Called on the main
    thread, the work runs beside it (``signals.run_handling_signals``) so a stop signal is seen
    whichever thread the kernel delivers it to."""
    from samplecontroller import signals

    return signals.run_handling_signals(lambda: _run(args, stop, local_dir, crds_dir))


def _run(args: argparse.Namespace, stop: threading.Event, local_dir: Path, crds_dir: Path) -> int:
    try:
        if args.controller == "async":
            _require_async()
        if getattr(args, "shard_ring", ""):
            _check_sharding(args)
        with contextlib.ExitStack() as stack:
            kubeconfig, master = args.kubeconfig, args.master
            if args.local:
                kubeconfig = stack.enter_context(_local_server(local_dir, crds_dir, args.port,
                                                               getattr(args, "emulated_version", "") or None))
                master = ""
            rest = _connect(kubeconfig, master, args.kube_api_qps, args.kube_api_burst, args.workers,
                            getattr(args, "exec_plugin_timeout", None))
            _preflight(rest)
            return _run_elected(args, rest, stop)
    except UserError as err:
        print(f"main.py: error: {err}", file=sys.stderr)
        return 1


def _require_async() -> None:
    """``--controller async`` needs the async client's extra: one line naming it, before connecting."""
    from samplecontroller._extras import MissingExtraError, require

    try:
        require("async", "--controller async")
    except MissingExtraError as err:
        raise UserError(str(err)) from None


# -- connecting ------------------------------------------------------------------------------


def _connect(kubeconfig: str, master: str, qps: float, burst: int, workers: int,
             exec_timeout: float | None = None) -> Any:
    """One RESTClient for the process; its pool keeps a connection per worker plus the watches';
    an exec credential plugin may run ``exec_timeout`` seconds (None: ``rest.config.EXEC_TIMEOUT``)."""
    from samplecontroller import rest
    from samplecontroller.rest.config import EXEC_TIMEOUT

    try:
        return rest.load_rest_client(kubeconfig=kubeconfig or None, master=master or None, qps=qps, burst=burst,
                                     pool_size=workers + rest.DEFAULT_POOL_SIZE,
                                     exec_timeout=EXEC_TIMEOUT if exec_timeout is None else exec_timeout)
    except rest.ConfigError as err:
        raise UserError(str(err)) from None


def _preflight(rest_client: Any) -> None:
    """Fail with one clear line when the server is unreachable, refuses us, or lacks the CRD."""
    from samplecontroller import rest

    try:
        rest_client.request("GET", "/version")
    except rest.TransportError as err:
        raise UserError(str(err)) from None
    except errors.StatusError as err:
        raise UserError(f"the API server refused /version: {err}") from None
    try:
        rest_client.request("GET", f"/apis/{FOO_GROUP_VERSION}")
    except errors.StatusError as err:
        if errors.is_not_found(err):
            raise UserError(
                f"the Foo CRD ({FOO_CRD_NAME}) is not installed on this cluster; run: kubectl apply -f crds/"
            ) from None
        if errors.is_unauthorized(err) or errors.is_forbidden(err):
            raise UserError(f"not allowed to use {FOO_GROUP_VERSION}: {err}") from None
        raise UserError(f"cannot read {FOO_GROUP_VERSION} discovery: {err}") from None
    except rest.TransportError as err:
        raise UserError(str(err)) from None


# -- the embedded API server (--local) -------------------------------------------------------


@contextlib.contextmanager
def _local_server(local_dir: Path, crds_dir: Path, port: int = 0, emulated_version: str | None = None) -> Iterator[str]:
    """Start the embedded API server on ``port`` (0: any free port), emulating ``emulated_version``
    (kube-apiserver's ``--emulated-version``), install the CRDs, print what to do; yield the
    kubeconfig. A port in use is a ``UserError`` naming ``--port``; an unsupported emulated version
    one naming ``--emulated-version``; so is a missing ``apiserver`` extra."""
    from samplecontroller._extras import MissingExtraError

    try:
        from samplecontroller.apiserver import LocalAPIServer
        from samplecontroller.apiserver.version import EmulationVersionError, parse_emulated_version
    except MissingExtraError as err:  # one line naming the pip command
        raise UserError(f"--local: {err}") from None
    try:
        parse_emulated_version(emulated_version)
    except EmulationVersionError as err:
        raise UserError(f"--emulated-version: {err}") from None

    try:
        local_dir.mkdir(parents=True, exist_ok=True)
        probe = local_dir / f".write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise UserError(f"--local-dir {local_dir}: cannot write there: {err.strerror or err}") from None
    kubeconfig = local_dir / "kubeconfig"
    try:
        server = LocalAPIServer(
            data_dir=local_dir / "data", simulate_deployments=True, kubeconfig_path=kubeconfig, port=port,
            emulated_version=emulated_version)
        server.__enter__()
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise UserError(f"cannot start the embedded API server: port {port} is in use "
                            "(pass --port N, or --port 0 for any free port)") from None
        raise UserError(f"cannot start the embedded API server: {err}") from None
    try:
        from samplecontroller import rest

        client = rest.load_rest_client(kubeconfig=str(server.kubeconfig_path))
        installed = install_crds(client, crds_dir)
        _print_banner(server.url, str(server.kubeconfig_path), installed)
        yield str(server.kubeconfig_path)
    finally:
        server.__exit__(None, None, None)


def load_crds(crds_dir: Path) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document in ``crds_dir`` (*.yaml, sorted by file name)."""
    docs: list[dict[str, Any]] = []
    for path in sorted(crds_dir.glob("*.y*ml")):
        try:
            for doc in k8syaml.load_all(path.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    docs.append(doc)
        except yaml.YAMLError as err:
            raise UserError(f"{path}: not valid YAML: {err}") from None
    return docs


def install_crds(rest_client: Any, crds_dir: Path, timeout: float = 10.0) -> list[str]:
    """Create or update every CRD in ``crds_dir`` and wait until each is Established."""
    import json

    names: list[str] = []
    for crd in load_crds(crds_dir):
        name = crd["metadata"]["name"]
        try:
            rest_client.request("POST", CRD_PATH, body=json.dumps(crd).encode(), content_type="application/json")
        except errors.StatusError as err:
            if not errors.is_already_exists(err):
                raise UserError(f"cannot install CRD {name}: {err}") from None
            live = json.loads(rest_client.request("GET", f"{CRD_PATH}/{name}"))
            crd = {**crd, "metadata": {**crd["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]}}
            rest_client.request("PUT", f"{CRD_PATH}/{name}", body=json.dumps(crd).encode(),
                                content_type="application/json")
        names.append(name)
    deadline = time.monotonic() + timeout
    for name in names:
        while not _crd_established(rest_client, name):
            if time.monotonic() > deadline:
                raise UserError(f"CRD {name} did not become Established within {timeout:g}s")
            time.sleep(0.05)
    return names


def _crd_established(rest_client: Any, name: str) -> bool:
    import json

    crd = json.loads(rest_client.request("GET", f"{CRD_PATH}/{name}"))
    conditions = crd.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def _print_banner(url: str, kubeconfig: str, crds: list[str]) -> None:
    print(
        "\n".join(
            [
                f"Embedded API server ready at {url} (CRDs installed: {', '.join(crds) or 'none'}).",
                "Deployments get a simulated status (availableReplicas follows spec.replicas); no pods run.",
                "In another shell:",
                f"  export KUBECONFIG={kubeconfig}",
                "  kubectl apply -f examples/example-foo.yaml",
                "  kubectl get foos,deployments",
                "  kubectl describe foo example-foo",
                "Stop with Ctrl-C.",
            ]
        ),
        flush=True,
    )


# -- leader election and the controller ------------------------------------------------------


def _check_sharding(args: argparse.Namespace) -> None:
    """--shard-ring: without --leader-elect, a valid name."""
    from samplecontroller.runtime.sharding import validate_ring_name

    if args.leader_elect:
        raise UserError("--shard-ring and --leader-elect exclude each other: each replica holds its own shard Lease")
    try:
        validate_ring_name(args.shard_ring)
    except ValueError as err:
        raise UserError(f"--shard-ring: {err}") from None


def _run_elected(args: argparse.Namespace, rest_client: Any, stop: threading.Event) -> int:
    if args.controller in ("runtime", "async"):
        return _run_runtime(args, rest_client, stop)
    with _probe_servers(args) as set_ready:
        if getattr(args, "shard_ring", ""):
            return _run_with_leader_election(args, rest_client, stop, set_ready, shard=_classic_shard(args))
        if not args.leader_elect:
            return _run_classic(args, rest_client, stop, set_ready)
        return _run_with_leader_election(args, rest_client, stop, set_ready)


def _run_runtime(args: argparse.Namespace, rest_client: Any, stop: threading.Event) -> int:
    """The FooReconciler (sync, or async for ``--controller async``) under a Manager, which does its
    own leader election and probes."""
    from samplecontroller import foo_reconciler
    from samplecontroller.runtime.manager import ListenError

    for address, flag in ((args.metrics_bind_address, "--metrics-bind-address"),
                          (args.health_probe_bind_address, "--health-probe-bind-address")):
        if address not in ("0", ""):
            _bind(address, flag)  # a malformed address is a one-line UserError, as in classic mode
    try:
        if args.controller == "async":
            from samplecontroller import foo_reconciler_async

            return foo_reconciler_async.run(rest_client, args, stop)
        return foo_reconciler.run(rest_client, args, stop)
    except ListenError as err:
        raise UserError(str(err)) from None


def _classic_shard(args: argparse.Namespace, identity: str = "") -> Any:
    """The classic controller's shard of ``--shard-ring`` (``runtime.sharding``): Foos partitioned,
    the Deployments they control following them."""
    from generated.apis.samplecontroller.v1alpha1 import Foo
    from samplecontroller.foo_reconciler import SCHEME
    from samplecontroller.kubernetes.apis.apps.v1 import Deployment
    from samplecontroller.runtime.sharding import default_identity
    from samplecontroller.runtime.sharding.shard import Shard

    shard = Shard(args.shard_ring, identity or default_identity(), args.leader_election_namespace or _pod_namespace(),
                  SCHEME)
    shard.register(Foo)
    shard.register(Deployment, owner=Foo)
    return shard


def _run_with_leader_election(
    args: argparse.Namespace, rest_client: Any, stop: threading.Event, set_ready: Callable[[bool], None],
    shard: Any = None,
) -> int:
    """Run the classic controller while this process holds the leader Lease, or with ``shard``
    its own shard Lease (``--shard-ring``: every replica works, on its share), beside a sharder."""
    from samplecontroller import leaderelection

    if shard is not None:
        from samplecontroller.client import ResourceClient
        from samplecontroller.runtime.sharding import RING_LABEL
        from samplecontroller.runtime.sharding.sharder import Sharder

        namespace, identity, lease_name = shard.namespace, shard.identity, shard.identity
        lock = leaderelection.LeaseLock(namespace, identity,
                                        ResourceClient(rest_client, leaderelection.resourcelock.LEASES, namespace),
                                        identity, labels={RING_LABEL: shard.ring})
        sharder = Sharder(rest_client, shard, namespaces=(args.namespace,) if args.namespace else ())
        threading.Thread(target=sharder.start, args=(stop,), name="sharder", daemon=True).start()
    else:
        namespace = args.leader_election_namespace or _pod_namespace()
        identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        lease_name = args.leader_election_id
        lock = leaderelection.LeaseLock.for_rest_client(rest_client, namespace, args.leader_election_id, identity)
    result: dict[str, int] = {"code": 0}
    lost = threading.Event()

    def on_started_leading(leading_stop: threading.Event) -> None:
        both = with_cancel(stop)  # stop, or leadership lost: whichever comes first
        as_context(leading_stop).add_done_callback(both.cancel)
        try:
            result["code"] = _run_classic(args, rest_client, both, set_ready, shard)
        except Exception as err:
            log.error("Controller failed", error=f"{type(err).__name__}: {err}")
            result["code"] = 1
        if not leading_stop.is_set():
            stop.set()  # the controller ended on its own: give up the lease and exit

    def on_stopped_leading() -> None:
        if not stop.is_set():
            log.error("Leader election lost", identity=identity)
            lost.set()
            result["code"] = 1
        else:
            log.info("Stopped leading", identity=identity)

    def on_new_leader(leader: str) -> None:
        if leader != identity:
            log.info("New leader elected", leader=leader)

    config = leaderelection.LeaderElectionConfig(
        lock=lock,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        callbacks=leaderelection.LeaderCallbacks(
            on_started_leading=on_started_leading,
            on_stopped_leading=on_stopped_leading,
            on_new_leader=on_new_leader,
        ),
        release_on_cancel=True,
        name=lease_name,
    )
    log.info("Attempting to acquire leader lease", lease=f"{namespace}/{lease_name}", identity=identity)
    leaderelection.LeaderElector(config).run(stop)
    return result["code"]


def _pod_namespace() -> str:
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    with contextlib.suppress(OSError):
        ns = path.read_text().strip()
        if ns:
            return ns
    return os.environ.get("POD_NAMESPACE", "default")


def _shard_classic(controller: Any, shard: Any) -> None:
    """The anchor's shard reconciler around the classic controller's ``sync_handler``: a Foo not
    assigned here is not synced; one with the drain label is released (both labels removed,
    guarded by its resourceVersion) with its Deployments (their shard label removed) and not synced; the Deployments it creates get this shard's
    label (they follow their Foo)."""
    import msgspec

    from samplecontroller.apimachinery import errors as api_errors
    from samplecontroller.apimachinery import meta
    from samplecontroller.client.types import MERGE_PATCH
    from samplecontroller.runtime.sharding.shard import CONTROLLER_UID_INDEX, controller_uids

    sync = controller.sync_handler
    create = controller._create_deployment
    controller.sharded = True  # a Deployment outside this shard's cache is read when its create meets it
    # a drain's acknowledgement finds the Foo's Deployments by controller UID, not by a scan of them all
    controller.deployments_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uids})
    deployments_indexer = controller.deployments_informer.get_indexer()

    def sharded_sync(key: Any) -> None:
        try:
            foo = controller.foos_lister.foos(key.namespace).get(key.name)
        except api_errors.NotFoundError:
            return  # deleted, or assigned elsewhere: not synced (as the runtime style)
        mine, draining = shard.assigned(foo)
        if not mine:
            return
        if draining:
            controller.sampleclientset.samplecontroller_v1alpha1().foos(key.namespace).patch(
                key.name, msgspec.json.encode(shard.release_patch(foo).body), MERGE_PATCH)
            deployments = controller.kubeclientset.apps_v1().deployments(key.namespace)
            for owned in shard.owned_by(foo, deployments_indexer.by_index(CONTROLLER_UID_INDEX, meta.get_uid(foo))):
                with contextlib.suppress(api_errors.ConflictError, api_errors.NotFoundError, api_errors.InvalidError):
                    release = shard.unassign_patch(owned)
                    deployments.patch(meta.get_name(owned), msgspec.json.encode(release.body), release.patch_type)
            return
        sync(key)

    class _Labelling:
        def __init__(self, deployments: Any) -> None:
            self.deployments = deployments

        def create(self, obj: Any, **kwargs: Any) -> Any:
            return self.deployments.create(shard.label_created(obj), **kwargs)

    controller.sync_handler = sharded_sync
    controller._create_deployment = lambda deployments, foo: create(_Labelling(deployments), foo)


def informer_factories(kubeclientset: kubernetes.Interface, sampleclientset: sample.Interface, resync: float,
                       namespace: str | None,
                       label_selector: str | None = None) -> tuple[KubeInformerFactory, SampleInformerFactory]:
    """The classic controller's shared informers, as Go's main.go makes them: one factory for the
    built-in kinds (Deployments) and one for the generated ones (Foos), started with one stop.
    They cache no managedFields: the controller never reads them, and a cached field would hold
    its whole watch event in memory. ``label_selector``: only the objects it selects (sharding)."""
    from generated.informers import SharedInformerFactory as SampleInformerFactory
    from samplecontroller.cache import strip_managed_fields
    from samplecontroller.kubernetes.informers import SharedInformerFactory as KubeInformerFactory

    def tweak(options: Any) -> None:
        options.label_selector = label_selector

    selecting = tweak if label_selector else None
    return (KubeInformerFactory(kubeclientset, resync, namespace=namespace, transform=strip_managed_fields,
                                tweak_list_options=selecting),
            SampleInformerFactory(sampleclientset, resync, namespace=namespace, transform=strip_managed_fields,
                                  tweak_list_options=selecting))


def _run_classic(
    args: argparse.Namespace, rest_client: Any, stop: threading.Event, set_ready: Callable[[bool], None],
    shard: Any = None,
) -> int:
    from generated.clientset import Clientset
    from samplecontroller import record
    from samplecontroller.controller import Controller
    from samplecontroller.foo import CONTROLLER_AGENT_NAME
    from samplecontroller.kubernetes.clientset import Clientset as KubeClientset

    kubeclientset = KubeClientset(rest_client)
    sampleclientset = Clientset(rest_client)
    kube_factory, sample_factory = informer_factories(kubeclientset, sampleclientset, args.resync,
                                                      args.namespace or None,
                                                      shard.selector() if shard is not None else None)
    broadcaster = record.new_broadcaster()
    broadcaster.start_structured_logging()
    broadcaster.start_recording_to_sink(record.ResourceEventSink.for_rest_client(rest_client))
    recorder = broadcaster.new_recorder(CONTROLLER_AGENT_NAME)

    controller = Controller(
        kubeclientset,
        sampleclientset,
        kube_factory.apps.v1.deployments,
        sample_factory.samplecontroller.v1alpha1.foos,
        recorder,
    )
    if shard is not None:
        _shard_classic(controller, shard)
    # one stop for both factories, as Go's kubeInformerFactory.Start(ctx.Done()) and
    # exampleInformerFactory.Start(ctx.Done()); Controller.run waits for both caches
    kube_factory.start(stop)
    sample_factory.start(stop)
    set_ready(True)
    try:
        controller.run(args.workers, stop, shutdown_timeout=args.shutdown_timeout)
    except RuntimeError as err:
        if stop.is_set():
            return 0
        log.error("Error running controller", error=str(err))
        return 1
    finally:
        set_ready(False)
        kube_factory.shutdown()
        sample_factory.shutdown()
        broadcaster.shutdown()
    log.info("Controller stopped")
    return 0


# -- metrics and health endpoints ------------------------------------------------------------


@contextlib.contextmanager
def _probe_servers(args: argparse.Namespace) -> Iterator[Callable[[bool], None]]:
    """Serve /metrics and /healthz + /readyz when their bind addresses are not "0"."""
    from samplecontroller import probes

    ready = threading.Event()

    def set_ready(value: bool) -> None:
        if value:
            ready.set()
        else:
            ready.clear()

    servers: list[probes.ProbeServer] = []
    try:
        if args.metrics_bind_address not in ("0", ""):
            from samplecontroller.controller import install_metrics
            from samplecontroller.workqueue import prometheus

            prometheus.install()
            install_metrics()
            servers.append(_listen(args.metrics_bind_address, "--metrics-bind-address", probes.serve_metrics))
        if args.health_probe_bind_address not in ("0", ""):
            servers.append(_listen(args.health_probe_bind_address, "--health-probe-bind-address",
                                   lambda address: probes.serve_health(address, ready.is_set)))
    except UserError:
        for s in servers:
            s.close()
        raise
    try:
        yield set_ready
    finally:
        for s in servers:
            s.close()


def _listen(address: str, flag: str, serve: Callable[[tuple[str, int]], Any]) -> Any:
    """``serve`` on the address of ``flag``; a UserError naming both when it cannot listen."""
    bound = _bind(address, flag)
    try:
        return serve(bound)
    except OSError as err:
        raise UserError(f"{flag}: cannot listen on {address}: {err.strerror or err}") from None


def _bind(address: str, flag: str) -> tuple[str, int]:
    from samplecontroller import probes

    try:
        bound = probes.parse_bind_address(address)
    except ValueError as err:
        raise UserError(f"{flag}: {err}") from None
    if bound is None:
        raise UserError(f"{flag}: {address!r} is not host:port or :port")
    return bound
