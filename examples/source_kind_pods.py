#!/usr/bin/env python3
"""The Source walkthrough: a cache, a Kind source for Pods, handler Funcs, a named queue.

Each Pod event is logged and put on a named rate-limiting queue as an ``Item(event, name)``; once
the source has synced, a loop prints the items. Run it against a cluster or the embedded API
server, then create a Pod with kubectl and watch its events appear:

    python -m samplecontroller.apiserver &            # or any cluster
    python examples/source_kind_pods.py --kubeconfig .local/kubeconfig
    kubectl run demo --image=nginx
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samplecontroller.apimachinery import meta
from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.logs import get_logger
from samplecontroller.runtime import handler, source
from samplecontroller.runtime.cache import Cache, Options
from samplecontroller.runtime.event import CreateEvent, DeleteEvent, UpdateEvent
from samplecontroller.workqueue import RateLimitingQueue, default_controller_rate_limiter

log = get_logger("source-kind-pods")


class Item(NamedTuple):
    event: str
    name: str


def pod_handler() -> handler.Funcs:
    """Log each event and enqueue ``Item(event, namespace/name)``."""

    def key(obj: Any) -> str:
        return f"{meta.get_namespace(obj)}/{meta.get_name(obj)}"

    def create(e: CreateEvent, q: handler.Queue) -> None:
        log.info("Create", pod=key(e.object))
        q.add(Item("Create", key(e.object)))

    def update(e: UpdateEvent, q: handler.Queue) -> None:
        log.info("Update", pod=key(e.object_new))
        q.add(Item("Update", key(e.object_new)))

    def delete(e: DeleteEvent, q: handler.Queue) -> None:
        log.info("Delete", pod=key(e.object))
        q.add(Item("Delete", key(e.object)))

    return handler.Funcs(create=create, update=update, delete=delete)


def run(rest: Any, stop: threading.Event, out: Callable[[Item], None] = print, namespace: str = "",
        synced: threading.Event | None = None) -> None:
    """Start the cache and the source, wait for sync, then hand every item to ``out`` until ``stop``."""
    cache = Cache.for_rest_client(rest, Options(namespaces=(namespace,) if namespace else ()), scheme=SCHEME)
    queue: RateLimitingQueue[Item] = RateLimitingQueue(default_controller_rate_limiter(), name="pod-events")
    src = source.Kind(cache, Pod, pod_handler())
    threading.Thread(target=cache.start, args=(stop,), daemon=True).start()
    src.start(queue, stop)
    while not src.wait_for_sync(0.1):
        if stop.is_set():
            return
    log.info("Pod source synced; printing items", queue="pod-events")
    if synced is not None:
        synced.set()

    def shut_down_on_stop() -> None:
        stop.wait()
        queue.shut_down()

    threading.Thread(target=shut_down_on_stop, daemon=True).start()
    while True:
        got = queue.get()
        if got[1]:
            return
        item = got[0]
        try:
            out(item)
        finally:
            queue.forget(item)
            queue.done(item)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kubeconfig", default="")
    p.add_argument("--namespace", default="")
    args = p.parse_args(argv)
    from samplecontroller import logs, rest, signals

    logs.setup()
    try:
        client = rest.load_rest_client(kubeconfig=args.kubeconfig or None)
    except rest.ConfigError as err:
        print(f"source_kind_pods.py: error: {err}", file=sys.stderr)
        return 1
    run(client, signals.setup_signal_handler(), namespace=args.namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
