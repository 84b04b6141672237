"""The duplicate-children scenario of issue 26, shared by its test and ``benchmarks/bench_ryow.py``.

Parents are ConfigMaps labelled ``ryow-role=parent``; for each, an operator creates one child
ConfigMap with ``generateName``, controlled by the parent, and then marks the parent with an
annotation. The controller is ``for_`` the parents and ``owns`` the children, so the child's
ADDED event re-enqueues the parent, often before the cache has seen the parent's annotation.

Two operator shapes:
- ``AnnotateAfterCreate`` (what a kopf port does: kopf keeps its progress in an annotation):
  no annotation -> create a child, then merge-patch the annotation (no resourceVersion, so
  never a 409). A stale parent in the cache gives a second child.
- ``ListThenUpdate`` (a careful controller-runtime reconciler): no annotation -> list the
  parent's children in the cache, create one only when there is none, then ``update`` the
  parent (optimistic lock: a stale parent is a 409). Under bursts of parent updates by someone
  else the update conflicts, and the retry runs before the cache has the child: a second child.

``run_scenario`` drives one of them against the embedded API server and returns the counts.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import msgspec

from samplecontroller.apimachinery import errors
from samplecontroller.foo_reconciler import SCHEME
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Secret
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.runtime import builder, controller, predicate
from samplecontroller.runtime import client as rtclient
from samplecontroller.runtime.consistency import ReadYourWrites
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result
from samplecontroller.workqueue import ItemExponentialFailureRateLimiter

ROLE = "ryow-role"
PARENT = "parent"
CHILD_OF = "ryow-child-of"
DONE = "example.com/child-created"


@dataclass
class Counts:
    """What the reconcilers did (all threads; guarded by ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    creates: int = 0
    parent_writes: int = 0
    conflicts: int = 0
    reconciles: int = 0
    done_at: dict[str, float] = field(default_factory=dict)

    def add(self, **deltas: int) -> None:
        with self.lock:
            for k, v in deltas.items():
                setattr(self, k, getattr(self, k) + v)


def _annotated(obj: ConfigMap) -> ConfigMap:
    annotations = {**(obj.metadata.annotations or {}), DONE: "true"}
    return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, annotations=annotations))


def _child(parent: ConfigMap, kind: type[ConfigMap] | type[Secret]) -> ConfigMap | Secret:
    name = parent.metadata.name or ""
    md = ObjectMeta(generate_name=f"{name}-", namespace=parent.metadata.namespace, labels={CHILD_OF: name})
    child = kind(metadata=md, data={"parent": name} if kind is ConfigMap else {"parent": "cGFyZW50"})
    return rtclient.set_controller_reference(parent, child, SCHEME)


class _Base:
    def __init__(self, c: rtclient.Client, counts: Counts, child: type[ConfigMap] | type[Secret] = ConfigMap) -> None:
        self.client = c
        self.counts = counts
        self.child = child

    def reconcile(self, request: Request) -> Result:
        self.counts.add(reconciles=1)
        try:
            parent = self.client.get(ConfigMap, request.namespace, request.name)
        except errors.NotFoundError:
            return Result()
        if DONE in (parent.metadata.annotations or {}):
            return Result()
        try:
            self.handle(parent)
        except errors.ConflictError:
            self.counts.add(conflicts=1)
            raise
        with self.counts.lock:
            self.counts.done_at.setdefault(request.name, time.monotonic())
        return Result()

    def handle(self, parent: ConfigMap) -> None:
        raise NotImplementedError


class AnnotateAfterCreate(_Base):
    """Create a child, then merge-patch the parent's annotation (see the module docstring)."""

    def handle(self, parent: ConfigMap) -> None:
        self.client.create(_child(parent, self.child))
        self.counts.add(creates=1)
        self.client.patch(_annotated(parent), rtclient.MergeFrom(parent))
        self.counts.add(parent_writes=1)


class ListThenUpdate(_Base):
    """Create a child unless the cache shows one, then update the parent (see the module docstring)."""

    def handle(self, parent: ConfigMap) -> None:
        ns, name = parent.metadata.namespace or "", parent.metadata.name or ""
        mine = [c for c in self.client.list(self.child, namespace=ns, label_selector={CHILD_OF: name})
                if any(r.uid == parent.metadata.uid for r in c.metadata.owner_references or ())]
        if not mine:
            self.client.create(_child(parent, self.child))
            self.counts.add(creates=1)
        self.client.update(_annotated(parent))
        self.counts.add(parent_writes=1)


@dataclass
class Outcome:
    """One run: children per parent (live from the API server) and what the reconcilers did."""

    parents: int
    children: Counter[str]
    counts: Counts
    latencies: list[float]
    seconds: float

    @property
    def duplicates(self) -> int:
        return sum(n - 1 for n in self.children.values() if n > 1)

    @property
    def missing(self) -> int:
        return self.parents - len(self.children)

    @property
    def extra_writes(self) -> int:
        """Writes beyond the two each parent needs (one child, one annotation)."""
        return self.counts.creates + self.counts.parent_writes - 2 * self.parents

    def latency(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[int(q * 100) - 1] \
            if len(self.latencies) > 1 else self.latencies[0]


def run_scenario(rest: Any, ns: str, operator: type[_Base], *, parents: int = 30, bursts: int = 3,
                 read_your_writes: bool = True, workers: int = 2, timeout: float = 60.0,
                 ryow_timeout: float = 10.0, child: type[ConfigMap] | type[Secret] = ConfigMap) -> Outcome:
    """Start a manager in ``ns`` running ``operator``, create ``parents`` parents and, for each,
    ``bursts`` data patches by another writer right after; wait until every parent is marked
    and the controller is idle; count the children through the API server."""
    kube = Clientset(rest).core_v1().configmaps(ns)
    mgr = Manager(rest, scheme=SCHEME, options=Options(
        namespaces=(ns,), read_your_writes=ReadYourWrites(enabled=read_your_writes, timeout=ryow_timeout)))
    counts = Counts()
    rec = operator(mgr.get_client(), counts, child)
    ctrl = (builder.controller_managed_by(mgr)
            .for_(ConfigMap, predicate.LabelSelectorPredicate(f"{ROLE}={PARENT}"))
            .owns(child)
            .named(f"children-{ns}")
            .with_options(controller.Options(max_concurrent_reconciles=workers,
                                             rate_limiter=ItemExponentialFailureRateLimiter(0.005, 1.0)))
            .complete(rec))
    stop = threading.Event()
    runner = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    runner.start()
    created: dict[str, float] = {}
    try:
        if not mgr.elected().wait(30):
            raise AssertionError("manager did not start")
        started = time.monotonic()
        names = [f"p{i}" for i in range(parents)]

        def make(name: str) -> None:
            created[name] = time.monotonic()
            kube.create(ConfigMap(metadata=ObjectMeta(name=name, namespace=ns, labels={ROLE: PARENT}),
                                  data={"n": "0"}))
            for b in range(bursts):
                kube.patch(name, {"data": {"n": str(b + 1)}})

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(make, names))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            marked = [c for c in kube.list(label_selector=f"{ROLE}={PARENT}").items
                      if DONE in (c.metadata.annotations or {})]
            if len(marked) == parents and _cache_marked(mgr, ns, parents) and _idle(ctrl):
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"not every parent was marked within {timeout:g}s")
        seconds = time.monotonic() - started
        live = Clientset(rest).core_v1().secrets(ns) if child is Secret else kube
        children = Counter(str((c.metadata.labels or {})[CHILD_OF])
                           for c in live.list(label_selector=CHILD_OF).items)
    finally:
        stop.set()
        runner.join(30)
    with counts.lock:
        latencies = [counts.done_at[n] - created[n] for n in counts.done_at if n in created]
    return Outcome(parents, children, counts, latencies, seconds)


def _cache_marked(mgr: Manager, ns: str, parents: int) -> bool:
    """The manager's cache shows every parent marked: later reconciles cannot create a child."""
    cached = mgr.get_cache().list(ConfigMap, namespace=ns, label_selector={ROLE: PARENT})
    return sum(DONE in (c.metadata.annotations or {}) for c in cached) == parents


def _idle(ctrl: controller.Controller) -> bool:
    """Nothing queued or in progress, twice in a row 0.2 s apart (late events have landed)."""
    for _ in range(2):
        if ctrl.queue.len() or ctrl.metrics.active_workers.labels(ctrl.name)._value.get():
            return False
        time.sleep(0.2)
    return True
