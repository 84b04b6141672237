"""The embedded API server as a separate process for the benchmarks, so that the benchmark's own
client threads do not share the server's interpreter (and GIL)."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


class ServerProcess:
    """``python -m samplecontroller.apiserver`` in ``tmp``: ``url``, ``token``, ``kubeconfig_path``,
    ``ca_path`` and an ``ssl`` context that trusts it."""

    def __init__(self, tmp: Path, *extra_args: str) -> None:
        self.kubeconfig_path = tmp / "kubeconfig"
        self.proc = subprocess.Popen([sys.executable, "-m", "samplecontroller.apiserver", "--kubeconfig",
                                      str(self.kubeconfig_path), *extra_args],
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
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
