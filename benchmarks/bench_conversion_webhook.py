"""Benchmark: the conversion webhook's side of a CRD conversion (runtime.webhook.conversion).

What the Manager's ``/convert`` handler costs per object, without the API server's share
(that is the embedded server's benchmark): the Widget kind of tests/runtime/widgets.py (three
versions, v1 the hub) converted

- ``in-process``: ``ConversionWebhook.serve(body)`` for one ConversionReview of N objects
  (parse the review, decode each object into its version's model, spoke -> hub -> spoke, encode);
  v1beta1 -> v1 goes through one conversion, v1beta1 -> v1alpha1 through two;
- ``https``: the same review POSTed to the webhook ``Server`` over TLS (keep-alive connection),
  for N objects in one review and for N reviews of one object (what a get per object costs).

    python benchmarks/bench_conversion_webhook.py [--objects 1000] [--repeat 3]

Not a test: machines are noisy, so numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import json
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from samplecontroller.runtime.conversion import Converter, hub  # noqa: E402
from samplecontroller.runtime.webhook import CONVERT_PATH, ConversionWebhook, Server  # noqa: E402
from samplecontroller.runtime.webhook.certs import write_self_signed  # noqa: E402
from tests.runtime.widgets import (  # noqa: E402
    GROUP,
    WidgetV1,
    WidgetV1alpha1Conversion,
    WidgetV1beta1Conversion,
    scheme,
)


def widget(i: int) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "Widget",
            "metadata": {"name": f"w-{i:05d}", "namespace": "default", "uid": f"6a3c1f7e-0000-4000-8000-{i:012d}",
                         "resourceVersion": str(1000 + i), "generation": 2, "labels": {"app": "demo"},
                         "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"sizeCm": i}, "status": {"observedGeneration": 2}}


def review(objects: list[dict[str, Any]], desired: str) -> bytes:
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                       "request": {"uid": "bench", "desiredAPIVersion": desired, "objects": objects}}).encode()


def best(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.objects
    hook = ConversionWebhook(Converter(scheme()).register(
        hub(WidgetV1), WidgetV1beta1Conversion(), WidgetV1alpha1Conversion()))
    objects = [widget(i) for i in range(n)]
    rows: list[tuple[str, float, int]] = []
    for desired, label in ((f"{GROUP}/v1", "v1beta1 -> v1 (to the hub)"),
                           (f"{GROUP}/v1alpha1", "v1beta1 -> v1alpha1 (through the hub)")):
        body = review(objects, desired)
        status, _ = hook.serve(body)
        assert status == 200
        rows.append((f"in-process, one review, {label}", best(args.repeat, functools.partial(hook.serve, body)), n))

    with tempfile.TemporaryDirectory() as certs:
        ca = write_self_signed(certs)
        server = Server(host="127.0.0.1", port=0, cert_dir=certs)
        server.register(CONVERT_PATH, hook)
        stop = threading.Event()
        thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
        thread.start()
        assert server.started.wait(10)
        conn = http.client.HTTPSConnection("127.0.0.1", server.bound_port,
                                           context=ssl.create_default_context(cadata=ca.decode()))

        def post(body: bytes) -> None:
            conn.request("POST", CONVERT_PATH, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200

        all_in_one = review(objects, f"{GROUP}/v1")
        rows.append(("https, one review of N objects, v1beta1 -> v1", best(args.repeat, lambda: post(all_in_one)), n))
        singles = [review([o], f"{GROUP}/v1") for o in objects]

        def post_each() -> None:
            for body in singles:
                post(body)

        rows.append(("https, N reviews of one object, v1beta1 -> v1", best(args.repeat, post_each), n))
        conn.close()
        stop.set()
        thread.join(10)

    print(f"{'conversion webhook':62} {'total':>10} {'per object':>12} {'objects/s':>11}")
    for label, seconds, count in rows:
        print(f"{label:62} {seconds * 1000:8.1f}ms {seconds / count * 1e6:10.1f}µs {count / seconds:11,.0f}")


if __name__ == "__main__":
    main()
