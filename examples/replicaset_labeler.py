#!/usr/bin/env python3
"""The classic builtins example: label every ReplicaSet.

Reconciles ReplicaSets on ReplicaSet events and on events of the Pods they own
(``for_(ReplicaSet).owns(Pod)``), and makes sure each ReplicaSet carries the label
``hello=world`` (a merge patch of that one label, so other writers' changes are kept).

    python examples/replicaset_labeler.py --kubeconfig .local/kubeconfig
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samplecontroller.apimachinery import errors, meta
from samplecontroller.kubernetes.apis.apps.v1 import ReplicaSet
from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.logs import get_logger
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.client import Client, RawPatch
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result

log = get_logger("replicaset-labeler")

LABEL_KEY, LABEL_VALUE = "hello", "world"


class ReplicaSetReconciler:
    def __init__(self, client: Client) -> None:
        self.client = client

    def reconcile(self, request: Request) -> Result:
        try:
            rs = self.client.get(ReplicaSet, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()
        pods = [p for p in self.client.list(Pod, namespace=request.namespace)
                if (ref := meta.get_controller_of(p)) is not None and ref.uid == meta.get_uid(rs)]
        log.info("Reconciling ReplicaSet", replicaset=str(request), pods=len(pods))
        if meta.get_labels(rs).get(LABEL_KEY) == LABEL_VALUE:
            return Result()
        self.client.patch(rs, RawPatch("application/merge-patch+json",
                                       {"metadata": {"labels": {LABEL_KEY: LABEL_VALUE}}}))
        return Result()


def setup(mgr: Manager) -> None:
    controller_managed_by(mgr).for_(ReplicaSet).owns(Pod).complete(ReplicaSetReconciler(mgr.get_client()))


def run(rest: Any, stop: threading.Event, namespace: str = "") -> None:
    mgr = Manager(rest, Options(namespaces=(namespace,) if namespace else (), field_owner="replicaset-labeler"),
                  scheme=SCHEME)
    setup(mgr)
    mgr.start(stop)


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
        print(f"replicaset_labeler.py: error: {err}", file=sys.stderr)
        return 1
    run(client, signals.setup_signal_handler(), args.namespace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
