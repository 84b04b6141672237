"""A development API server for an operator's ``--local`` run (``make run``).

``serve_local(directory, crds, port=...)`` starts the embedded API server with its data, TLS
material and token under ``directory`` (so objects and ``directory/kubeconfig`` survive a restart
on the same port), creates or updates the CRDs of ``crds`` (directories of YAML), and stops it on
exit. Deployments get a simulated status (``availableReplicas`` follows ``spec.replicas``): no
pods run. Every problem (a port in use, a bad CRD, another process using ``directory``) is a
``LocalServerError`` whose message is one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from samplecontroller.apiserver.preload import CRDError, create_crds, load_crds
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.apiserver.version import EmulationVersionError

__all__ = ["LocalServerError", "serve_local"]


class LocalServerError(Exception):
    """The local API server cannot start or take the CRDs; ``str()`` is one line."""


@contextlib.contextmanager
def serve_local(directory: str | Path, crds: Sequence[str | Path] = (), *, port: int = 0,
                simulate_deployments: bool = True,
                patch_crds: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                emulated_version: str | None = None,
                prepare: Callable[[LocalAPIServer], None] | None = None) -> Iterator[LocalAPIServer]:
    """The running server, its CRDs served; ``server.kubeconfig_path`` is ``directory/kubeconfig``.
    ``patch_crds`` changes the CRD documents before they are installed (conversion webhooks);
    ``emulated_version`` (``"1.34"``) is kube-apiserver's ``--emulated-version``; ``prepare`` runs
    once the CRDs are served (installing webhook configurations, say). ``directory/kubeconfig``
    appears only then (written whole, at once): a client that finds it finds the server ready, CRDs
    and what ``prepare`` did included (one from an earlier run is removed first)."""
    try:
        docs = load_crds(crds)
        if patch_crds is not None:
            docs = patch_crds(docs)
    except CRDError as err:
        raise LocalServerError(str(err)) from None
    root = Path(directory)
    published = root / "kubeconfig"
    try:
        server = LocalAPIServer(data_dir=root / "data", simulate_deployments=simulate_deployments,
                                kubeconfig_path=root / "starting" / "kubeconfig", port=port,
                                emulated_version=emulated_version)
    except EmulationVersionError as err:
        raise LocalServerError(f"--emulated-version: {err}") from None
    root.mkdir(parents=True, exist_ok=True)
    published.unlink(missing_ok=True)
    try:
        server.start()
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise LocalServerError(f"cannot start the embedded API server: port {port} is in use "
                                   "(pass another port, or 0 for any free port)") from None
        raise LocalServerError(f"cannot start the embedded API server: {err.strerror or err}") from None
    except RuntimeError as err:
        raise LocalServerError(f"cannot start the embedded API server: {err}") from None
    try:
        try:
            server.call(lambda core: create_crds(core, docs, replace=True))
        except CRDError as err:
            raise LocalServerError(str(err)) from None
        if prepare is not None:
            prepare(server)
        starting = root / "kubeconfig.starting"
        starting.write_bytes(server.kubeconfig_path.read_bytes())
        starting.chmod(0o600)
        os.replace(starting, published)
        server.kubeconfig_path = published
        yield server
    finally:
        server.stop()
