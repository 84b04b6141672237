"""The embedded API server as a separate process for the benchmarks, so that the benchmark's own
client threads do not share the server's interpreter (and GIL)."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import urllib3
import yaml

ROOT = Path(__file__).resolve().parents[1]
FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
FOOS_WATCH = FOOS + "?watch=1"


class ServerProcess:
    """``python -m samplecontroller.apiserver`` in ``tmp``: ``url``, ``token``, ``kubeconfig_path``,
    ``ca_path`` and an ``ssl`` context that trusts it. ``root``: the checkout whose
    ``samplecontroller`` runs (default this one; another one, e.g. an unpacked ``git archive
    main``, to compare before and after in one run: ``python -m`` imports from its directory first)."""

    def __init__(self, tmp: Path, *extra_args: str, root: Path = ROOT) -> None:
        self.kubeconfig_path = tmp / "kubeconfig"
        self.proc = subprocess.Popen([sys.executable, "-m", "samplecontroller.apiserver", "--kubeconfig",
                                      str(self.kubeconfig_path), *extra_args],
                                     stdout=subprocess.PIPE, text=True, cwd=root)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if len(line) < 2 or line[0] != "ready":
            raise RuntimeError(f"the API server did not start: {line}")
        self.url = line[1]
        cfg = yaml.safe_load(self.kubeconfig_path.read_text())
        self.token = cfg["users"][0]["user"]["token"]
        self.ca_path = tmp / "ca.crt"
        self.ca_path.write_bytes(base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]))
        self.ssl = ssl.create_default_context(cafile=str(self.ca_path))

    def stop(self) -> None:
        t0 = time.perf_counter()
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            print("server did not exit within 60 s of SIGTERM", file=sys.stderr)
        print(f"(server stopped {time.perf_counter() - t0:.1f} s after SIGTERM)", file=sys.stderr)


class JsonApi:
    """A pooled urllib3 client of a benchmark's API server: JSON ``post`` and streamed ``watch``."""

    def __init__(self, url: str, token: str, pool: urllib3.PoolManager, user_agent: str | None = None) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        if user_agent is not None:
            self.headers["User-Agent"] = user_agent
        self.pool = pool

    def post(self, path: str, body: dict[str, Any]) -> None:
        """POST ``body``; raises RuntimeError on a status of 300 or more."""
        r = self.pool.request("POST", self.url + path, body=json.dumps(body).encode(), headers=self.headers)
        if r.status >= 300:
            raise RuntimeError(f"POST {path}: {r.status} {r.data[:200]!r}")

    def get(self, path: str) -> Any:
        """GET ``path`` as JSON; raises RuntimeError on a status of 300 or more."""
        r = self.pool.request("GET", self.url + path, headers=self.headers)
        if r.status >= 300:
            raise RuntimeError(f"GET {path}: {r.status} {r.data[:200]!r}")
        return json.loads(r.data)

    def watch(self, path: str, on_event: Callable[[dict[str, Any], float], None],
              stop: threading.Event | None = None) -> threading.Thread:
        """Stream the watch ``path`` on a daemon thread, calling ``on_event(event, perf_counter())``
        for each event, until the stream ends or (checked after each chunk) ``stop`` is set."""
        def run() -> None:
            r = self.pool.request("GET", self.url + path, headers=self.headers, preload_content=False,
                                  timeout=urllib3.Timeout(connect=5, read=None))
            buf = b""
            for chunk in r.stream(65536):
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.strip():
                        on_event(json.loads(line), time.perf_counter())
                if stop is not None and stop.is_set():
                    break
            r.release_conn()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t
