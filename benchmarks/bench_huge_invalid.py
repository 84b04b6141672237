"""A huge invalid request against the embedded API server (a process): how long it takes, how
big its answer is, and how long other clients' ``/readyz`` waits meanwhile (issue 28 item 4).

``python benchmarks/bench_huge_invalid.py [--keys 10000 20000 100000]`` prints one row per
ConfigMap size (label keys that are all invalid). Numbers are printed, never asserted; the
machine's load changes them (run it on a quiet machine to compare).
"""

from __future__ import annotations

import argparse
import http.client
import json
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from _apiserver_process import ServerProcess


def _conn(server: ServerProcess, timeout: float) -> http.client.HTTPSConnection:
    parsed = urllib.parse.urlparse(server.url)
    return http.client.HTTPSConnection(parsed.hostname or "127.0.0.1", parsed.port, context=server.ssl,
                                       timeout=timeout)


def run(server: ServerProcess, keys: int) -> tuple[int, float, int, list[float]]:
    body = json.dumps({"metadata": {"name": f"huge-{keys}",
                                    "labels": {f"bad key {i}!": "v" for i in range(keys)}}}).encode()
    latencies: list[float] = []
    finished = threading.Event()

    def probe() -> None:
        while not finished.is_set():
            conn = _conn(server, 600)
            started = time.monotonic()
            conn.request("GET", "/readyz", headers={"Authorization": f"Bearer {server.token}"})
            conn.getresponse().read()
            conn.close()
            latencies.append(time.monotonic() - started)
            time.sleep(0.05)

    prober = threading.Thread(target=probe)
    prober.start()
    conn = _conn(server, 600)
    started = time.monotonic()
    conn.request("POST", "/api/v1/namespaces/default/configmaps", body=body,
                 headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
    response = conn.getresponse()
    size = len(response.read())
    duration = time.monotonic() - started
    finished.set()
    prober.join()
    return len(body), duration, size, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, nargs="+", default=[10_000, 20_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp))
        try:
            print("| label keys | body | answer (422) | answer size | /readyz probes | /readyz p50 | /readyz max |")
            print("|---|---|---|---|---|---|---|")
            for keys in args.keys:
                body, duration, size, latencies = run(server, keys)
                ordered = sorted(latencies)
                print(f"| {keys:,} | {body / 1e6:.1f} MB | {duration:.2f} s | {size / 1e6:.1f} MB | {len(ordered)} | "
                      f"{ordered[len(ordered) // 2] * 1000:.0f} ms | {ordered[-1] * 1000:.0f} ms |")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
