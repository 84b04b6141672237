"""Soak benchmark: the embedded API server's memory under a steady write rate (issue 43 item 6;
prints a table, not a test).

The server runs as its own process (``python -m samplecontroller.apiserver``, HTTPS, in memory,
its default flags). ``--rate`` times a second a client thread creates a ConfigMap holding
``--object-kib`` KiB of data, patches it and deletes it (three writes); one watch of the
ConfigMaps reads every event, as an informer would. The server's RSS (psutil) is printed every
``--every`` seconds for ``--minutes`` minutes, then its growth in MiB per minute over the second
half of the run (a flat soak: close to 0).

    python benchmarks/bench_soak_steady.py [--minutes 10] [--rate 5] [--object-kib 8] [--root DIR]

``--root``: the checkout whose ``samplecontroller`` the server runs (default this one; e.g. an
unpacked ``git archive`` of an older commit, to measure before and after on one machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import urllib3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402

NS = "soak"
CMS = f"/api/v1/namespaces/{NS}/configmaps"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=5.0, help="create-patch-delete cycles a second (default 5)")
    parser.add_argument("--object-kib", type=int, default=8, help="data in each ConfigMap, KiB (default 8)")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between RSS samples (default 30)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout the server runs")
    args = parser.parse_args()
    rows: list[tuple[float, int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), root=args.root)
        proc = psutil.Process(server.proc.pid)
        stop = threading.Event()
        done = [0]
        try:
            pool = urllib3.PoolManager(ssl_context=server.ssl, maxsize=4)
            headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}

            def call(method: str, path: str, body: object, ctype: str = "application/json") -> None:
                r = pool.request(method, server.url + path, body=json.dumps(body).encode() if body is not None else None,
                                 headers={**headers, "Content-Type": ctype})
                if r.status >= 300:
                    raise RuntimeError(f"{method} {path}: {r.status} {r.data[:200]!r}")

            call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
            data = "x" * (args.object_kib * 1024)

            def writer() -> None:
                started, i = time.monotonic(), 0
                while not stop.is_set():
                    name = f"cm-{i}"
                    call("POST", CMS, {"metadata": {"name": name}, "data": {"v": data}})
                    call("PATCH", f"{CMS}/{name}", {"data": {"w": str(i)}}, "application/merge-patch+json")
                    call("DELETE", f"{CMS}/{name}", None)
                    i += 1
                    done[0] = i
                    time.sleep(max(0.0, started + i / args.rate - time.monotonic()))

            def watcher() -> None:
                while not stop.is_set():
                    r = pool.request("GET", f"{server.url}{CMS}?watch=1&timeoutSeconds=60", headers=headers,
                                     preload_content=False, timeout=urllib3.Timeout(connect=5, read=None))
                    for _ in r.stream(65536):
                        if stop.is_set():
                            break
                    r.release_conn()

            threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=watcher, daemon=True)]
            for t in threads:
                t.start()
            t0 = time.monotonic()
            while time.monotonic() - t0 < args.minutes * 60:
                time.sleep(args.every)
                rows.append(((time.monotonic() - t0) / 60, done[0], proc.memory_info().rss / 2**20))
                print(f"{rows[-1][0]:6.1f} min {rows[-1][1]:>8} cycles {rows[-1][2]:8.1f} MiB", file=sys.stderr)
            stop.set()
        finally:
            server.stop()
    print(f"{'minute':>6} {'cycles':>8} {'server RSS MiB':>15}")
    for minute, cycles, rss in rows:
        print(f"{minute:>6.1f} {cycles:>8} {rss:>15.1f}")
    half = [r for r in rows if r[0] >= rows[-1][0] / 2]
    if len(half) >= 2 and half[-1][0] > half[0][0]:
        slope = (half[-1][2] - half[0][2]) / (half[-1][0] - half[0][0])
        print(f"second half: {half[0][2]:.1f} -> {half[-1][2]:.1f} MiB, {slope:+.2f} MiB/min "
              f"({rows[-1][1] / (rows[-1][0] * 60):.1f} cycles/s achieved)")


if __name__ == "__main__":
    main()
