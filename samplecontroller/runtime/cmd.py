"""The main program of an operator: flags, logging, signals, ``--local``, the Manager (kubebuilder's main.go).

An operator's ``__main__`` is one call::

    sys.exit(cmd.main(prog="myoperator", name="myoperator", scheme=SCHEME, setup=setup,
                      crds=[Path("config/crd/bases")],
                      webhooks=[Path("config/webhook"), Path("config/crd/patches")]))

``setup(mgr, args)`` registers the controllers with the Manager: controller-runtime style
reconcilers through ``runtime.builder``, client-go style controllers as runnables
(``mgr.add(...)``); either way the Manager does leader election, serves /metrics, /healthz and
/readyz, records Events, and stops everything on SIGINT/SIGTERM.

Flags (``add_flags``): ``--kubeconfig``, ``--master``; ``--local`` (start the embedded API server
with the CRDs of ``--crds DIR...`` (default: ``crds``) installed, data and ``kubeconfig`` under
``--local-dir``, on ``--port``, serving the API of ``--emulated-version``); ``--namespace``, ``--workers``,
``--resync``, ``--leader-elect``,
``--leader-election-id`` (default ``<name>-lock``), ``--leader-election-namespace``,
``--metrics-bind-address``, ``--health-probe-bind-address``, ``--shutdown-timeout``, ``-v``;
``--webhook-host``, ``--webhook-port`` (default 9443), ``--webhook-cert-dir`` (default
``<tmp>/k8s-webhook-server/serving-certs``, where a cluster mounts the cert-manager Secret): the
Manager's webhook server, started when ``setup`` registers a webhook.

With ``--local``, the webhook manifests of ``webhooks`` (``WebhookInstallOptions``: webhook
configurations and CRD conversion patches) are installed pointing at the Manager's webhook
server on ``127.0.0.1:--webhook-port``, with a self-signed certificate written to
``<local-dir>/serving-certs`` (its CA in the configurations' ``caBundle``); the server reloads
that certificate when it changes on disk.

Promises: a user mistake (bad kubeconfig, unreachable server, a port in use, a bad CRD, a
missing extra for ``--local``) is one line ``<prog>: error: ...`` and exit status 1; a stop
signal lets work in progress finish (bounded by ``--shutdown-timeout``) and exits 0; a second
signal exits 1 at once; a failing controller or a lost lease exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import functools
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from samplecontroller.apimachinery.durations import parse_duration
from samplecontroller.client.scheme import Scheme
from samplecontroller.flags import OneLineParser, port, positive_int
from samplecontroller.logs import get_logger
from samplecontroller.runtime import healthz
from samplecontroller.runtime.manager import ListenError, Manager, Options

__all__ = ["LOCAL_PORT", "Controls", "Setup", "UserError", "add_flags", "controlled", "main", "new_manager",
           "parse_flags", "run"]

log = get_logger("cmd")

LOCAL_PORT = 6443
WEBHOOK_PORT = 9443
Setup = Callable[[Manager, argparse.Namespace], None]


class UserError(Exception):
    """A mistake the user can fix; printed as one line."""


# -- in-process control (samplecontroller.testing.runner) ---------------------------------------


@dataclass
class Controls:
    """How a test runner drives ``main`` in its own process: ``main`` then stops on ``stop``
    instead of signals, leaves logging to the runner, and ``run`` hands over its ``manager``
    (``manager_built`` is set then)."""

    stop: threading.Event = field(default_factory=threading.Event)
    manager: Manager | None = None
    manager_built: threading.Event = field(default_factory=threading.Event)
    errors: list[str] = field(default_factory=list)


_controls: contextvars.ContextVar[Controls | None] = contextvars.ContextVar("samplecontroller_cmd_controls",
                                                                           default=None)


def controlled(controls: Controls, fn: Callable[[], Any]) -> Any:
    """Call ``fn()`` with ``controls`` in force for the ``main``/``run`` it calls (in this thread)."""
    ctx = contextvars.copy_context()
    ctx.run(_controls.set, controls)
    return ctx.run(fn)

# -- end in-process control ---------------------------------------------------------------------


def _seconds(value: str) -> float:
    try:
        return float(value) if value.replace(".", "", 1).isdigit() else parse_duration(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_flags(parser: argparse.ArgumentParser, *, name: str, local_dir: Path = Path(".local"),
              crds: Sequence[Path] = (), webhooks: Sequence[Path] = ()) -> None:
    """The operator flags (see the module docstring) on ``parser``."""
    parser.add_argument("--kubeconfig", default="", help="Path to a kubeconfig (default: $KUBECONFIG, "
                        "~/.kube/config, else the in-cluster service account).")
    parser.add_argument("--master", default="", help="The API server's address; overrides the kubeconfig's.")
    parser.add_argument("--local", action="store_true",
                        help="Start the embedded API server with the project's CRDs and run against it.")
    parser.add_argument("--local-dir", type=Path, default=local_dir,
                        help=f"With --local: its data and kubeconfig (default {local_dir}/).")
    parser.add_argument("--crds", type=Path, nargs="+", action="extend", default=None, metavar="DIR",
                        help="With --local: the CRD directories to install (default "
                             f"{', '.join(map(str, crds)) or 'none'}).")
    parser.set_defaults(default_crds=list(crds), webhook_manifests=list(webhooks))
    parser.add_argument("--port", type=port, default=LOCAL_PORT,
                        help=f"With --local: its HTTPS port (default {LOCAL_PORT}; 0 picks a free port).")
    parser.add_argument("--emulated-version", default="", metavar="1.MINOR",
                        help="With --local: serve the API of Kubernetes 1.MINOR (1.33 to 1.36) as kube-apiserver's "
                             "--emulated-version does (default: 1.37).")
    parser.add_argument("--namespace", default="", help="Only watch this namespace (default: all).")
    parser.add_argument("--workers", type=positive_int, default=2, help="Concurrent reconciles per controller.")
    parser.add_argument("--resync", type=_seconds, default=36000.0,
                        help="Informer resync period (seconds or a duration like 10h; default 10h).")
    parser.add_argument("--leader-elect", action="store_true", help="Use a Lease for leader election.")
    parser.add_argument("--leader-election-id", default=f"{name}-lock", help="Name of the leader election Lease.")
    parser.add_argument("--leader-election-namespace", default="",
                        help="Namespace of the Lease (default: the pod's namespace, else default).")
    parser.add_argument("--metrics-bind-address", default="0", help='Address for /metrics, e.g. ":8080"; "0" disables.')
    parser.add_argument("--health-probe-bind-address", default="0",
                        help='Address for /healthz and /readyz, e.g. ":8081"; "0" disables.')
    parser.add_argument("--shutdown-timeout", type=_seconds, default=30.0,
                        help="Bound on the whole shutdown after a stop signal (default 30s).")
    parser.add_argument("--webhook-host", default="", help="The webhook server's address (default: all).")
    parser.add_argument("--webhook-port", type=port, default=WEBHOOK_PORT,
                        help=f"The webhook server's HTTPS port (default {WEBHOOK_PORT}).")
    parser.add_argument("--webhook-cert-dir", default="",
                        help="The webhook server's tls.crt and tls.key (default "
                             "<tmp>/k8s-webhook-server/serving-certs; with --local, <local-dir>/serving-certs, "
                             "written for the run).")
    parser.add_argument("-v", "--log-level", default="info", help="debug, info, warning, error, or a klog number.")


def new_manager(rest: Any, args: argparse.Namespace, *, name: str, scheme: Scheme) -> Manager:
    """A Manager configured from the flags, writing as ``name``."""
    from samplecontroller.runtime.cache import Options as CacheOptions
    from samplecontroller.runtime.cache import strip_managed_fields

    return Manager(rest, Options(
        sync_period=args.resync, namespaces=(args.namespace,) if args.namespace else (),
        cache=CacheOptions(default_transform=strip_managed_fields), field_owner=name,
        graceful_shutdown_timeout=args.shutdown_timeout, leader_election=args.leader_elect,
        leader_election_id=args.leader_election_id, leader_election_namespace=args.leader_election_namespace,
        leader_election_release_on_cancel=True, metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address, webhook_host=args.webhook_host,
        webhook_port=args.webhook_port, webhook_cert_dir=args.webhook_cert_dir), scheme=scheme)


def _local_webhooks(args: argparse.Namespace) -> Any:
    """The WebhookInstallOptions of the project's webhook manifests that exist (None: there are none);
    points ``args``' webhook server at it."""
    paths = [p for p in args.webhook_manifests if p.exists()]
    if not paths:
        return None
    from samplecontroller.runtime.webhook.install import InstallError, WebhookInstallOptions

    options = WebhookInstallOptions(paths, local_serving_port=args.webhook_port,
                                    local_serving_cert_dir=args.local_dir / "serving-certs")
    try:
        if not options.read().configurations and not options.conversions:
            return None
        if args.webhook_cert_dir:
            raise UserError(f"--webhook-cert-dir: with --local and webhooks, the serving certificate is written to "
                            f"{options.local_serving_cert_dir} (its CA goes into the installed configurations)")
        options.setup()
    except InstallError as err:
        raise UserError(f"--local: {err}") from None
    args.webhook_host, args.webhook_cert_dir = options.local_serving_host, str(options.local_serving_cert_dir)
    return options


@contextlib.contextmanager
def _local(args: argparse.Namespace, crds: Sequence[Path]) -> Iterator[str]:
    from samplecontroller._extras import MissingExtraError

    try:
        from samplecontroller.apiserver.local import LocalServerError, serve_local
    except MissingExtraError as err:
        raise UserError(f"--local: {err}") from None
    webhooks = _local_webhooks(args)
    try:
        with serve_local(args.local_dir, crds, port=args.port,
                         patch_crds=functools.partial(_patch_crds, webhooks) if webhooks else None,
                         emulated_version=getattr(args, "emulated_version", "") or None,
                         prepare=functools.partial(_install_webhooks, webhooks) if webhooks is not None else None,
                         ) as server:
            print(f"Embedded API server ready at {server.url}; in another shell:\n"
                  f"  export KUBECONFIG={server.kubeconfig_path.resolve()}\n"
                  f"  kubectl apply -f config/samples/\n"
                  f"Stop with Ctrl-C.", flush=True)
            yield str(server.kubeconfig_path)
    except LocalServerError as err:
        raise UserError(f"--local: {err}") from None


def _patch_crds(options: Any, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from samplecontroller.runtime.webhook.install import InstallError

    try:
        patched: list[dict[str, Any]] = options.patch_crds(docs)
    except InstallError as err:
        raise UserError(f"--local: {err}") from None
    return patched


def _install_webhooks(options: Any, server: Any) -> None:
    """Install the webhook manifests on the embedded API server (before its kubeconfig is published)."""
    from samplecontroller import rest
    from samplecontroller.apimachinery import errors

    try:
        installed = options.install(rest.load_rest_client(kubeconfig=str(server.kubeconfig_path)))
    except errors.StatusError as err:
        raise UserError(f"--local: the embedded API server refused a webhook configuration: {err}") from None
    log.info("Webhooks installed", url=options.url, configurations=", ".join(installed) or "none",
             conversions=", ".join(sorted(options.conversions)) or "none")


def _connect(kubeconfig: str, master: str) -> Any:
    from samplecontroller import rest
    from samplecontroller.apimachinery import errors

    try:
        client = rest.load_rest_client(kubeconfig=kubeconfig or None, master=master or None)
        client.request("GET", "/version")
    except rest.ConfigError as err:
        raise UserError(str(err)) from None
    except rest.TransportError as err:
        raise UserError(str(err)) from None
    except errors.StatusError as err:
        raise UserError(f"the API server refused /version: {err}") from None
    return client


def parse_flags(argv: Sequence[str] | None = None, *, prog: str | None = None, name: str,
                crds: Sequence[Path] = (), webhooks: Sequence[Path] = (),
                description: str | None = None) -> argparse.Namespace:
    """The flags of ``argv``; a bad flag is one line and exit 1 (``SystemExit``)."""
    parser = OneLineParser(prog=prog, description=description)
    add_flags(parser, name=name, crds=crds, webhooks=webhooks)
    args = parser.parse_args(argv)
    if args.port != LOCAL_PORT and not args.local:
        parser.error("--port applies only with --local (the embedded API server)")
    if args.crds is None:
        args.crds = args.default_crds
    return args


def run(args: argparse.Namespace, stop: threading.Event, *, name: str, scheme: Scheme, setup: Setup) -> int:
    """Connect (or start ``--local`` with ``args.crds``), build the Manager, ``setup`` it, run until
    ``stop``; the exit status. Raises ``UserError`` for a user mistake."""
    with contextlib.ExitStack() as stack:
        kubeconfig, master = args.kubeconfig, args.master
        if args.local:
            kubeconfig, master = stack.enter_context(_local(args, args.crds)), ""
        mgr = new_manager(_connect(kubeconfig, master), args, name=name, scheme=scheme)
        mgr.add_healthz_check("ping", healthz.ping)
        mgr.add_readyz_check("informers", mgr.cache_synced_check)
        setup(mgr, args)
        controls = _controls.get()
        if controls is not None:
            controls.manager = mgr
            controls.manager_built.set()
        log.info("Starting manager", name=name)
        try:
            mgr.start(stop)
        except ListenError as err:
            raise UserError(str(err)) from None
        except Exception as err:
            log.error("Problem running manager", error=f"{type(err).__name__}: {err}")
            return 1
        log.info("Manager stopped", name=name)
        return 0


def main(argv: Sequence[str] | None = None, *, prog: str, name: str, scheme: Scheme, setup: Setup,
         crds: Sequence[Path] = (), webhooks: Sequence[Path] = (), description: str | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), set up logging and signals, ``run``; the exit status."""
    from samplecontroller import logs, signals

    args = parse_flags(argv, prog=prog, name=name, crds=crds, webhooks=webhooks, description=description)
    controls = _controls.get()
    try:
        level = logs.parse_level(args.log_level)
        if controls is None:
            logs.setup(level)
    except ValueError as err:
        return _error(f"{prog}: error: {err}", controls)
    # a test runner (samplecontroller.testing.runner) stops it instead of signals
    stop = controls.stop if controls is not None else signals.setup_signal_handler()

    def body() -> int:
        try:
            return run(args, stop, name=name, scheme=scheme, setup=setup)
        except UserError as err:
            return _error(f"{prog}: error: {err}", controls)

    if controls is not None:
        return body()

    try:
        return signals.run_handling_signals(body)
    except KeyboardInterrupt:
        return 1


def _error(line: str, controls: Controls | None) -> int:
    print(line, file=sys.stderr)
    if controls is not None:
        controls.errors.append(line)
    return 1
