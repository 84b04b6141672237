"""Helpers for tests against the embedded API server, and its pytest fixtures.

The fixtures (``apiserver``, ``fresh_apiserver``, ``kubeconfig``, ``kubectl``, ``namespace``,
``rest_client``, ``clientset``) live in ``samplecontroller.testing.pytest_plugin``, which pytest
loads by itself (the ``samplecontroller`` pytest11 entry point); they are re-exported here for
conftest files that import them. The shared ``apiserver`` installs the CRDs of the
``samplecontroller_crds`` ini option (this repository: ``crds/``), never a directory guessed from
where the package is installed.

- ``install_crds(server, crds_dir)``: create every CRD in ``crds_dir`` on ``server``.
- ``finish_pod(server, namespace, name, succeeded=True, exit_code=None)``: what a kubelet reports
  when a Pod's containers end: phase Succeeded or Failed, each container terminated (exit code 0,
  or ``exit_code``/1), ``status.observedGeneration`` the Pod's generation (a 1.35 kubelet's). The
  Job simulator (``simulate_jobs=True``) counts it.
- ``make_kubectl(home, server, cwd=None)``: ``kubectl(*args, binary=None, stdin=None, check=False,
  server=None)`` runs kubectl (default ``/usr/bin/kubectl``) with a private HOME and cache dir
  against ``server`` (or the one given) and returns the ``subprocess.CompletedProcess[str]``.
  Skips when kubectl is missing, fails instead when ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Protocol

import pytest

from samplecontroller.apiserver.core import Core
from samplecontroller.apiserver.objects import copy_json, now_rfc3339
from samplecontroller.apiserver.preload import create_crds, load_crds
from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.testing.pytest_plugin import (
    apiserver,
    clientset,
    fresh_apiserver,
    kubeconfig,
    kubectl,
    namespace,
    rest_client,
)

__all__ = ["KubectlRunner", "apiserver", "clientset", "find_kubectl", "finish_pod", "fresh_apiserver", "install_crds",
           "kubeconfig",
           "kubectl", "make_kubectl", "namespace", "require_kubectl", "rest_client"]


def find_kubectl(binary: str | None = None) -> str | None:
    """The kubectl binary to use: ``binary`` if it exists, else ``/usr/bin/kubectl`` / PATH."""
    if binary:
        return binary if os.path.exists(binary) else shutil.which(binary)
    return shutil.which("kubectl") or ("/usr/bin/kubectl" if os.path.exists("/usr/bin/kubectl") else None)


def require_kubectl(binary: str | None = None) -> str:
    """The kubectl binary (``find_kubectl``); skips the test without one (fails under ``CI=true``)."""
    found = find_kubectl(binary)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"kubectl ({binary or 'kubectl'}) is required under CI=true but was not found")
        pytest.skip(f"kubectl ({binary or 'kubectl'}) not found")
    return found


def install_crds(server: LocalAPIServer, crds_dir: str | Path) -> list[str]:
    """Create every CRD in ``crds_dir`` on ``server`` (those not there yet); their names.
    Raises ``preload.CRDError`` (one line) for a missing directory or a bad document."""
    docs = load_crds([crds_dir])
    return server.call(lambda core: create_crds(core, docs))


def finish_pod(server: LocalAPIServer, namespace: str, name: str, succeeded: bool = True,
               exit_code: int | None = None) -> dict[str, Any]:
    """Report Pod ``namespace/name``'s containers as ended, as its kubelet would (see the module
    docstring); returns the updated Pod. Raises ``APIError`` (404) for a missing Pod."""
    code = exit_code if exit_code is not None else (0 if succeeded else 1)

    def finish(core: Core) -> dict[str, Any]:
        pods = core.mapper.get("", "v1", "pods")
        assert pods is not None
        pod = copy_json(core.get(pods, namespace, name))
        now = now_rfc3339()
        containers = (pod.get("spec") or {}).get("containers") or ()
        status = pod.setdefault("status", {})
        status["phase"] = "Succeeded" if succeeded else "Failed"
        generation = (pod.get("metadata") or {}).get("generation")
        if isinstance(generation, int):
            status["observedGeneration"] = generation
        status["containerStatuses"] = [
            {"name": c.get("name", ""), "image": c.get("image", ""), "imageID": "", "ready": False, "restartCount": 0,
             "started": False, "state": {"terminated": {
                 "exitCode": code, "reason": "Completed" if code == 0 else "Error", "startedAt": now,
                 "finishedAt": now}}} for c in containers if isinstance(c, dict)]
        updated, _, _ = core.update(pods, namespace, name, pod, subresource="status", manager="kubelet")
        return updated

    return server.call(finish)


class KubectlRunner(Protocol):
    """``kubectl(*args, binary=None, stdin=None, check=False, server=None, timeout=60)``: the ``kubectl`` fixture."""

    def __call__(self, *args: str, binary: str | None = None, stdin: str | None = None, check: bool = False,
                 server: LocalAPIServer | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]: ...


def make_kubectl(home: Path, default_server: LocalAPIServer, cwd: Path | None = None) -> KubectlRunner:
    """A kubectl runner with a private HOME/cache under ``home`` (one cache per server and binary),
    run in ``cwd`` (default: the current directory)."""

    def run(*args: str, binary: str | None = None, stdin: str | None = None, check: bool = False,
            server: LocalAPIServer | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        exe = require_kubectl(binary)
        target = server or default_server
        cache = home / f"cache-{target.port}-{Path(exe).name}"
        env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(target.kubeconfig_path)}
        cmd = [exe, "--cache-dir", str(cache), "--kubeconfig", str(target.kubeconfig_path), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, input=stdin, timeout=timeout, cwd=cwd)
        if check and proc.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    return run
