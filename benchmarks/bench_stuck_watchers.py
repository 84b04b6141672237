"""Benchmark: the embedded API server's memory under watches whose clients never read (issue 43
item 3; prints a table, not a test).

The server runs as its own process (``python -m samplecontroller.apiserver``, HTTPS, in memory).
A collection of ConfigMaps of ``--mib`` MiB (default 16) is created; then stuck watchers are
opened in steps (default 20, then 40): each is a TLS connection with a small receive buffer that
sends one ``GET ...configmaps?watch=1`` (every object is an initial ADDED event) and never reads.
The server's RSS (psutil) is printed once it settles after each step, then after every stuck
client has closed its connection.

    python benchmarks/bench_stuck_watchers.py [--mib 16] [--steps 20,40] [--root DIR]

``--root``: the checkout whose ``samplecontroller`` the server runs (default this one; e.g. an
unpacked ``git archive`` of an older commit to measure before and after on one machine).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import urllib3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _apiserver_process import ServerProcess  # noqa: E402

NS = "stuck"
OBJECT_BYTES = 16 * 1024


def settled_rss(proc: psutil.Process, quiet: float = 3.0, limit: float = 90.0) -> float:
    """The process's RSS in MiB once it changed by less than 1 MiB over ``quiet`` seconds."""
    started = time.monotonic()
    samples: list[tuple[float, float]] = []
    while True:
        now, rss = time.monotonic(), proc.memory_info().rss / 2**20
        samples.append((now, rss))
        window = [r for t, r in samples if now - t <= quiet]
        if (now - started >= quiet and max(window) - min(window) < 1.0) or now - started > limit:
            return rss
        time.sleep(0.25)


def stuck_watch(server: ServerProcess) -> socket.socket:
    """A TLS connection that asks for a watch of the collection and never reads its answer."""
    host, port = server.url.removeprefix("https://").rsplit(":", 1)
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    plain.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    plain.connect((host, int(port)))
    sock = server.ssl.wrap_socket(plain, server_hostname=host)
    sock.sendall(f"GET /api/v1/namespaces/{NS}/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {server.token}\r\n\r\n".encode())
    return sock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mib", type=int, default=16, help="size of the watched collection (default 16)")
    parser.add_argument("--steps", default="20,40", help="stuck watchers after each step (default 20,40)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout the server runs")
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp), root=args.root)
        proc = psutil.Process(server.proc.pid)
        try:
            rows.append(("started", settled_rss(proc)))
            pool = urllib3.PoolManager(ssl_context=server.ssl, maxsize=8)
            headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}

            def post(path: str, body: object) -> None:
                r = pool.request("POST", server.url + path, body=json.dumps(body).encode(), headers=headers)
                if r.status >= 300:
                    raise RuntimeError(f"POST {path}: {r.status} {r.data[:200]!r}")

            post("/api/v1/namespaces", {"metadata": {"name": NS}})
            count = args.mib * 2**20 // OBJECT_BYTES
            with ThreadPoolExecutor(8) as workers:
                list(workers.map(lambda i: post(f"/api/v1/namespaces/{NS}/configmaps", {
                    "metadata": {"name": f"cm-{i:05d}"}, "data": {"v": "x" * (OBJECT_BYTES - 200)}}), range(count)))
            rows.append((f"{count} ConfigMaps ({args.mib} MiB)", settled_rss(proc)))
            socks: list[socket.socket] = []
            for target in steps:
                while len(socks) < target:
                    socks.append(stuck_watch(server))
                rows.append((f"{target} stuck watchers", settled_rss(proc)))
            for sock in socks:
                sock.close()
            rows.append(("all closed", settled_rss(proc)))
        finally:
            server.stop()
    print(f"{'phase':<28} {'server RSS MiB':>15}")
    for phase, rss in rows:
        print(f"{phase:<28} {rss:>15.1f}")


if __name__ == "__main__":
    main()
