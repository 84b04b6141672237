"""Microbenchmark of the Deployment simulator's writes through ``Core`` (prints a table; not a test).

In-process, no HTTP, in-memory store, the cycle collector off while the simulator runs (a collection
would be charged to whichever write it interrupts). N Deployments are created as the end-to-end benchmark's controller creates them (one
container, owned by a Foo, labels ``app`` and ``controller``); then the simulator
(``controllers.deployments``) brings each to a finished rollout: the four writes kube-controller-manager
would make (the ReplicaSet's create, its status, the Deployment's revision annotation, its status). Printed:
CPU milliseconds per Deployment (best of ``--rounds``) and the share of each write.

``--compare DIR`` runs the same in a subprocess on the ``samplecontroller`` package of another checkout
(``git archive <commit> | tar -x -C DIR``), round by round alternating with this one, so that before and
after are measured under the same machine load (the load average is printed).

Usage: ``.venv/bin/python benchmarks/bench_simulator.py [--n 2000] [--rounds 3] [--compare DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

WRITES = ("ReplicaSet create", "ReplicaSet status", "Deployment annotation", "Deployment status")


def measure(n: int) -> dict[str, float]:
    """CPU ms per Deployment of the simulator over ``n`` new Deployments, in total and by write."""
    from samplecontroller.apiserver.controllers.deployments import DeploymentSimulator
    from samplecontroller.apiserver.core import Core
    from samplecontroller.apiserver.restmapper import RESTMapper
    from samplecontroller.apiserver.storage import Store

    core = Core(Store(None), RESTMapper())
    deployments = core.mapper.get("apps", "v1", "deployments")
    namespaces = core.mapper.get("", "v1", "namespaces")
    assert deployments is not None and namespaces is not None
    core.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, manager="m")
    for i in range(n):
        labels = {"app": "nginx", "controller": f"foo-{i}"}
        owner = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": f"foo-{i}",
                 "uid": f"uid-{i}", "controller": True, "blockOwnerDeletion": True}
        core.create(deployments, "default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"foo-{i}", "ownerReferences": [owner]},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}},
            manager="sample-controller")
    spent = dict.fromkeys(WRITES, 0.0)

    def timed(method: Callable[..., Any], name: Callable[..., str]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                key = name(*args, **kwargs)
                spent[key] = spent.get(key, 0.0) + time.process_time() - start
        return call

    def update_name(res: Any, *args: Any, subresource: str = "", **kwargs: Any) -> str:
        return f"{res.kind} {'status' if subresource == 'status' else 'annotation'}"

    core.create = timed(core.create, lambda *a, **k: "ReplicaSet create")  # type: ignore[method-assign]
    core.update = timed(core.update, update_name)  # type: ignore[method-assign]
    simulator = DeploymentSimulator(core, 0.0)
    gc.collect()
    gc.disable()  # a collection would be charged to whichever write it interrupts
    start = time.process_time()
    for i in range(n):
        simulator.simulate("default", f"foo-{i}")
    total = time.process_time() - start
    gc.enable()
    assert len(core.store.data.get("apps/replicasets") or {}) == n
    return {"total": total / n * 1e3, **{k: v / n * 1e3 for k, v in spent.items()}}


def run_other(directory: str, n: int) -> dict[str, float]:
    """``measure(n)`` on the checkout in ``directory``, in a subprocess (its package first on the path)."""
    code = (f"import sys, json; sys.path.insert(0, {directory!r}); sys.path.insert(1, {str(ROOT / 'benchmarks')!r}); "
            f"import samplecontroller; assert samplecontroller.__file__.startswith({directory!r}); "
            f"import bench_simulator; print(json.dumps(bench_simulator.measure({n})))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=directory)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="Deployments")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", metavar="DIR", help="another checkout to time alongside")
    args = parser.parse_args()
    labels = ["this"] + ([args.compare] if args.compare else [])
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for label in labels:
            result = run_other(str(ROOT), args.n) if label == "this" else run_other(label, args.n)
            if label not in best or result["total"] < best[label]["total"]:
                best[label] = result
    print(f"Deployment simulator through Core, {args.n} Deployments, best of {args.rounds} rounds; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"{'CPU ms per Deployment':<28}" + "".join(f"{label[-24:]:>26}" for label in labels))
    for key in ("total", *WRITES):
        print(f"{key:<28}" + "".join(f"{best[label].get(key, 0.0):>26.3f}" for label in labels))


if __name__ == "__main__":
    main()
