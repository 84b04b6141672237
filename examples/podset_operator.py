#!/usr/bin/env python3
"""A ReplicaSet-like operator for the custom kind PodSet (crds/podset.yaml).

For each PodSet it keeps ``spec.replicas`` Pods (made from ``spec.template``, controlled by the
PodSet, labelled ``podset=<name>``) and writes ``status``: desired, current, podList, state
(``Running`` once every wanted Pod runs, else ``Pending``) and a message.

Never overshoots, even with several workers and bursts of events: the queue never gives one
PodSet to two workers at once, and ``Expectations`` (like the ReplicaSet controller's) remember
the Pods this operator created or deleted until the cache has seen it, so a reconcile working
from a slightly stale cache counts them correctly instead of creating or deleting again.

    python examples/podset_operator.py --kubeconfig .local/kubeconfig --workers 4
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generated import scheme as samplescheme
from generated.apis.workloads.v1alpha1 import PodSet, PodSetStatus
from samplecontroller.apimachinery import errors, meta, objects
from samplecontroller.client.scheme import Scheme
from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.kubernetes import scheme as kubescheme
from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.logs import get_logger
from samplecontroller.runtime import controller as rt_controller
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.client import Client, RawPatch, set_controller_reference
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result

log = get_logger("podset-operator")

# Pods (built-in) and PodSets (generated), as a kubebuilder main.go's scheme
SCHEME = Scheme()
kubescheme.add_to_scheme(SCHEME)
samplescheme.add_to_scheme(SCHEME)

LABEL = "podset"
EXPECTATIONS_TTL = 300.0  # as the ReplicaSet controller: forget unmet expectations after 5 min
DEFAULT_TEMPLATE: dict[str, Any] = {"spec": {"containers": [{"name": "busybox", "image": "busybox",
                                                             "command": ["sleep", "3600"]}]}}


class Expectations:
    """Pods created/deleted per PodSet that the cache has not reflected yet."""

    def __init__(self, ttl: float = EXPECTATIONS_TTL) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._adds: dict[Request, dict[str, float]] = {}
        self._dels: dict[Request, dict[str, float]] = {}

    def expect_create(self, key: Request, name: str) -> None:
        with self._lock:
            self._adds.setdefault(key, {})[name] = time.monotonic()

    def expect_delete(self, key: Request, name: str) -> None:
        with self._lock:
            self._dels.setdefault(key, {})[name] = time.monotonic()

    def observe(self, key: Request, cached: set[str]) -> tuple[set[str], set[str]]:
        """(created but not yet cached, deleted but still cached); forgets what the cache caught up with."""
        now = time.monotonic()
        with self._lock:
            adds = {n: t for n, t in self._adds.get(key, {}).items() if n not in cached and now - t < self.ttl}
            dels = {n: t for n, t in self._dels.get(key, {}).items() if n in cached and now - t < self.ttl}
            self._adds[key], self._dels[key] = adds, dels
            return set(adds), set(dels)

    def forget(self, key: Request) -> None:
        with self._lock:
            self._adds.pop(key, None)
            self._dels.pop(key, None)


def _phase(pod: Pod) -> str:
    status = pod.status
    phase = status.phase if status is not msgspec.UNSET else msgspec.UNSET
    return phase if isinstance(phase, str) else "Pending"


def _active(pod: Pod) -> bool:
    return meta.get_deletion_timestamp(pod) is None and _phase(pod) not in ("Succeeded", "Failed")


class PodSetReconciler:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.expectations = Expectations()

    def reconcile(self, request: Request) -> Result:
        try:
            podset = self.client.get(PodSet, request.namespace, request.name)
        except errors.NotFoundError:
            self.expectations.forget(request)
            return Result()
        if meta.get_deletion_timestamp(podset) is not None:
            return Result()
        desired = podset.spec.replicas if podset.spec is not msgspec.UNSET else msgspec.UNSET
        want = desired if isinstance(desired, int) and desired >= 0 else 1
        pods = self._owned_pods(podset)
        adds, dels = self.expectations.observe(request, {meta.get_name(p) for p in pods})
        live = sorted(meta.get_name(p) for p in pods if _active(p) and meta.get_name(p) not in dels)
        names = sorted(set(live) | adds)
        if len(names) < want:
            for _ in range(want - len(names)):
                created = self.client.create(self._new_pod(podset))
                self.expectations.expect_create(request, meta.get_name(created))
                names.append(meta.get_name(created))
        elif len(names) > want:
            # delete the newest-named extras that the cache knows about (never an unseen create)
            for name in [n for n in reversed(names) if n in live][: len(names) - want]:
                try:
                    self.client.delete(Pod(metadata=ObjectMeta(name=name, namespace=request.namespace)))
                except errors.NotFoundError:
                    pass
                self.expectations.expect_delete(request, name)
                names.remove(name)
        running = sum(1 for p in pods if meta.get_name(p) in names and _phase(p) == "Running")
        self._write_status(podset, want, sorted(names), running)
        return Result()

    def _owned_pods(self, podset: PodSet) -> list[Pod]:
        pods = self.client.list(Pod, namespace=meta.get_namespace(podset), label_selector={LABEL: meta.get_name(podset)})
        uid = meta.get_uid(podset)
        return [p for p in pods if (ref := meta.get_controller_of(p)) is not None and ref.uid == uid]

    def _new_pod(self, podset: PodSet) -> Pod:
        template = podset.spec.template if podset.spec is not msgspec.UNSET else msgspec.UNSET
        tpl: dict[str, Any] = dict(template) if isinstance(template, dict) and template else DEFAULT_TEMPLATE
        md = dict(tpl.get("metadata") or {})
        md["labels"] = {**(md.get("labels") or {}), LABEL: meta.get_name(podset)}
        md["generateName"] = f"{meta.get_name(podset)}-"
        md["namespace"] = meta.get_namespace(podset)
        md.pop("name", None)
        pod = objects.from_dict(Pod, {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": tpl.get("spec") or {}})
        return set_controller_reference(podset, pod)

    def _write_status(self, podset: PodSet, want: int, names: list[str], running: int) -> None:
        state = "Running" if running >= want else "Pending"
        message = f"{running}/{want} pods running" if want else "scaled to zero"
        status = PodSetStatus(desired=want, current=len(names), pod_list=tuple(names), state=state, message=message)
        if podset.status == status:
            return
        # a merge patch of the status this operator owns, without a resourceVersion: it is computed
        # from the Pods, so a stale cached PodSet must not make it conflict (a PUT would)
        patch = RawPatch(MERGE_PATCH, {"status": objects.to_dict(status)})
        try:
            self.client.status().patch(podset, patch)
        except errors.NotFoundError:
            pass  # deleted meanwhile: nothing to report


def setup(mgr: Manager, workers: int = 4) -> rt_controller.Controller:
    return (controller_managed_by(mgr).for_(PodSet).owns(Pod)
            .with_options(rt_controller.Options(max_concurrent_reconciles=workers))
            .complete(PodSetReconciler(mgr.get_client())))


def run(rest: Any, stop: threading.Event, namespace: str = "", workers: int = 4) -> None:
    mgr = Manager(rest, Options(namespaces=(namespace,) if namespace else (), field_owner="podset-operator"),
                  scheme=SCHEME)
    setup(mgr, workers)
    mgr.start(stop)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kubeconfig", default="")
    p.add_argument("--namespace", default="")
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args(argv)
    from samplecontroller import logs, rest, signals

    logs.setup()
    try:
        client = rest.load_rest_client(kubeconfig=args.kubeconfig or None)
    except rest.ConfigError as err:
        print(f"podset_operator.py: error: {err}", file=sys.stderr)
        return 1
    run(client, signals.setup_signal_handler(), args.namespace, args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
