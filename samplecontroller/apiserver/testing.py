"""pytest fixtures for suites that need a real API server (registered by tests/conftest.py).

- ``apiserver`` (session): one shared ``LocalAPIServer`` for the whole run. Tests must use
  their own namespaces/names; the CRDs in ``crds/`` are installed.
- ``fresh_apiserver`` (function): a new, empty server per test (no CRDs installed).
- ``kubeconfig``: the shared server's kubeconfig path.
- ``kubectl``: ``kubectl(*args, binary=None, stdin=None, check=False, server=None)`` runs kubectl
  (default ``/usr/bin/kubectl``) with a private HOME and cache dir against the shared server (or
  ``server``) and returns the ``subprocess.CompletedProcess[str]``. Skips when kubectl is
  missing, fails instead when ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from samplecontroller.apimachinery import k8syaml
from samplecontroller.apiserver.server import LocalAPIServer

__all__ = ["KubectlRunner", "apiserver", "find_kubectl", "fresh_apiserver", "install_crds", "kubeconfig", "kubectl"]

ROOT = Path(__file__).resolve().parents[2]


def find_kubectl(binary: str | None = None) -> str | None:
    """The kubectl binary to use: ``binary`` if it exists, else ``/usr/bin/kubectl`` / PATH."""
    if binary:
        return binary if os.path.exists(binary) else shutil.which(binary)
    return shutil.which("kubectl") or ("/usr/bin/kubectl" if os.path.exists("/usr/bin/kubectl") else None)


def require_kubectl(binary: str | None = None) -> str:
    found = find_kubectl(binary)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"kubectl ({binary or 'kubectl'}) is required under CI=true but was not found")
        pytest.skip(f"kubectl ({binary or 'kubectl'}) not found")
    return found


def install_crds(server: LocalAPIServer, crds_dir: Path | None = None) -> None:
    """Create every CRD in ``crds_dir`` (default the repository's ``crds/``) directly on the server."""
    from samplecontroller.apiserver.core import CRD_KEY

    directory = crds_dir or ROOT / "crds"
    docs: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.y*ml")):
        docs.extend(d for d in k8syaml.load_all(path.read_text()) if isinstance(d, dict))

    def create(core: Any) -> None:
        res = core.mapper.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        for doc in docs:
            name = (doc.get("metadata") or {}).get("name", "")
            if core.store.get(CRD_KEY, "", name) is None:
                core.create(res, "", doc, manager="test-setup")

    server.call(create)


class KubectlRunner(Protocol):
    def __call__(self, *args: str, binary: str | None = None, stdin: str | None = None, check: bool = False,
                 server: LocalAPIServer | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]: ...


def make_kubectl(home: Path, default_server: LocalAPIServer) -> KubectlRunner:
    """A kubectl runner with a private HOME/cache under ``home`` (one cache per server and binary)."""

    def run(*args: str, binary: str | None = None, stdin: str | None = None, check: bool = False,
            server: LocalAPIServer | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        exe = require_kubectl(binary)
        target = server or default_server
        cache = home / f"cache-{target.port}-{Path(exe).name}"
        env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(target.kubeconfig_path)}
        cmd = [exe, "--cache-dir", str(cache), "--kubeconfig", str(target.kubeconfig_path), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, input=stdin, timeout=timeout, cwd=ROOT)
        if check and proc.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    return run


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAPIServer]:
    tmp = tmp_path_factory.mktemp("shared-apiserver")
    with LocalAPIServer(kubeconfig_path=tmp / "kubeconfig") as server:
        install_crds(server)
        yield server


@pytest.fixture
def fresh_apiserver(tmp_path: Path) -> Iterator[LocalAPIServer]:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as server:
        yield server


@pytest.fixture(scope="session")
def kubeconfig(apiserver: LocalAPIServer) -> Path:
    return apiserver.kubeconfig_path


@pytest.fixture(scope="session")
def kubectl(apiserver: LocalAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Any]:
    return make_kubectl(tmp_path_factory.mktemp("kubectl-home"), apiserver)
