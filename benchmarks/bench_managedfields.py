"""Microbenchmark of ``update_managed_fields``: the managedFields bookkeeping of one update (prints a table; not a test).

In-process, no HTTP. The objects are made by the embedded API server's ``Core`` (in-memory store) as the
end-to-end benchmark makes them: a Foo created by ``kubectl-client-side-apply``, its Deployment created by
``sample-controller`` (as ``foo.new_deployment``), then the server's Deployment simulator's writes as
``kube-controller-manager`` (ReplicaSet, revision annotation, status) and a Foo status write. Each case
times ``update_managed_fields(old, new, ..., in_place=True)`` on a fresh copy of ``new`` per call:

- ``deployment status``: the simulator's status write (``status`` subresource, conditions' times changed)
- ``deployment annotation``: the simulator's revision annotation (``metadata.annotations`` only)
- ``foo status``: the Foo controller's ``status.availableReplicas`` (``status`` subresource, CRD schema)
- ``deployment image``: ``spec.template.spec.containers[name="nginx"].image`` changed by ``kubectl-set``

``--simulate N`` also times, in-process, the Deployment simulator bringing N new Deployments to a finished
rollout through ``Core`` (a ReplicaSet created, scaled and its status written, the Deployment's revision
annotation and status: every write's managedFields included), per implementation: the share of a write
that the bookkeeping is.

``--compare DIR`` times also the ``fieldmanager`` module of another checkout (e.g. ``git archive main | tar
-x -C DIR``), interleaved round by round with this one under the same machine load (``uptime`` is printed).
Usage: ``.venv/bin/python benchmarks/bench_managedfields.py [--calls 2000] [--rounds 5] [--simulate N]
[--compare DIR]``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from samplecontroller.apimachinery import fieldmanager  # noqa: E402
from samplecontroller.apiserver import managedfields as server_managedfields  # noqa: E402
from samplecontroller.apiserver.controllers.deployments import DeploymentSimulator  # noqa: E402
from samplecontroller.apiserver.core import Core  # noqa: E402
from samplecontroller.apiserver.restmapper import RESTMapper  # noqa: E402
from samplecontroller.apiserver.storage import Store  # noqa: E402

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"
Case = tuple[str, dict[str, Any], dict[str, Any], str, str, str | None, dict[str, Any] | None]


def make_cases() -> list[Case]:
    """(name, old, new, manager, subresource, definition name, schema) of every case."""
    core = Core(Store(None), RESTMapper())
    crd = yaml.safe_load((ROOT / "crds" / "foo.yaml").read_text())
    core.mapper.set_crd(crd)
    core.crds[crd["metadata"]["name"]] = crd
    foos = core.mapper.get("samplecontroller.k8s.io", "v1alpha1", "foos")
    deployments = core.mapper.get("apps", "v1", "deployments")
    namespaces = core.mapper.get("", "v1", "namespaces")
    assert foos is not None and deployments is not None and namespaces is not None
    core.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, manager="m")
    foo, _ = core.create(foos, "default", {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                           "metadata": {"name": "example-foo"},
                                           "spec": {"deploymentName": "example-foo", "replicas": 1}},
                         manager="kubectl-client-side-apply")
    labels = {"app": "nginx", "controller": "example-foo"}
    owner = {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "example-foo",
             "uid": foo["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    core.create(deployments, "default", {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "example-foo", "ownerReferences": [owner]},
        "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                 "template": {"metadata": {"labels": dict(labels)},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}},
        manager="sample-controller")
    DeploymentSimulator(core, 0.0).simulate("default", "example-foo")
    foo_status = copy.deepcopy(core.get(foos, "default", "example-foo"))
    foo_status["status"] = {"availableReplicas": 1}
    core.update(foos, "default", "example-foo", foo_status, subresource="status", manager="sample-controller")
    deployment = core.get(deployments, "default", "example-foo")
    foo = core.get(foos, "default", "example-foo")
    schema = core.version_schema(foos)

    status = copy.deepcopy(deployment)
    for condition in status["status"]["conditions"]:
        condition["lastUpdateTime"] = "2030-01-01T00:00:00Z"
    annotation = copy.deepcopy(deployment)
    annotation["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2"
    foo_new = copy.deepcopy(foo)
    foo_new["status"]["availableReplicas"] = 2
    image = copy.deepcopy(deployment)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    return [
        ("deployment status", deployment, status, "kube-controller-manager", "status", DEPLOYMENT, None),
        ("deployment annotation", deployment, annotation, "kube-controller-manager", "", DEPLOYMENT, None),
        ("foo status", foo, foo_new, "sample-controller", "status", None, schema),
        ("deployment image", deployment, image, "kubectl-set", "", DEPLOYMENT, None),
    ]


def time_simulation(update: Callable[..., dict[str, Any]], count: int) -> float:
    """CPU milliseconds per Deployment of the simulator's writes for ``count`` new Deployments, with
    ``update`` as the server's ``update_managed_fields``."""
    core = Core(Store(None), RESTMapper())
    deployments = core.mapper.get("apps", "v1", "deployments")
    namespaces = core.mapper.get("", "v1", "namespaces")
    assert deployments is not None and namespaces is not None
    core.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, manager="m")
    labels = {"app": "nginx"}
    for i in range(count):
        core.create(deployments, "default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}", "labels": dict(labels)},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:latest",
                                                           "ports": [{"containerPort": 80}]}]}}}},
            manager="sample-controller")
    simulator = DeploymentSimulator(core, 0.0)
    with mock.patch.object(server_managedfields, "update_managed_fields", update):
        start = time.process_time()
        for i in range(count):
            simulator.simulate("default", f"d{i}")
        return (time.process_time() - start) / count * 1e3


def load_other(directory: str) -> ModuleType:
    """The ``fieldmanager`` module of the checkout in ``directory`` (its imports resolve to this checkout's package)."""
    path = Path(directory) / "samplecontroller" / "apimachinery" / "fieldmanager.py"
    spec = importlib.util.spec_from_file_location("fieldmanager_compare", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_case(update: Callable[..., dict[str, Any]], case: Case, calls: int) -> float:
    """Microseconds per call of ``update`` on ``case`` (copies of ``new`` made outside the timing)."""
    _, old, new, manager, subresource, definition, schema = case
    copies = [copy.deepcopy(new) for _ in range(calls)]
    start = time.perf_counter()
    for fresh in copies:
        update(old, fresh, manager, "Update", subresource, definition, schema, in_place=True)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--simulate", type=int, default=0, metavar="N", help="also time the simulator on N Deployments")
    parser.add_argument("--compare", metavar="DIR", help="another checkout whose fieldmanager to time alongside")
    args = parser.parse_args()
    cases = make_cases()
    implementations: list[tuple[str, Callable[..., dict[str, Any]]]] = [("this", fieldmanager.update_managed_fields)]
    if args.compare:
        other = load_other(args.compare)
        implementations.append((args.compare, other.update_managed_fields))
        clocks = fieldmanager._now, other._now
        fieldmanager._now = other._now = lambda: "2030-01-01T00:00:00Z"  # type: ignore[attr-defined]
        try:
            for case in cases:  # the same managedFields, byte for byte
                _, old, new, manager, subresource, definition, schema = case
                ours = fieldmanager.update_managed_fields(old, new, manager, "Update", subresource, definition, schema)
                theirs = other.update_managed_fields(old, new, manager, "Update", subresource, definition, schema)
                if json.dumps(ours) != json.dumps(theirs):
                    raise SystemExit(f"{case[0]}: the two implementations disagree")
        finally:
            fieldmanager._now, other._now = clocks  # type: ignore[attr-defined]
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        for case in cases:
            for label, update in implementations:
                took = time_case(update, case, args.calls)
                key = (case[0], label)
                best[key] = min(best.get(key, took), took)
    simulated: dict[str, float] = {}
    for _ in range(args.rounds if args.simulate else 0):
        for label, update in implementations:
            took = time_simulation(update, args.simulate)
            simulated[label] = min(simulated.get(label, took), took)
    print(f"update_managed_fields, best of {args.rounds} rounds of {args.calls} calls; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'case':<24}" + "".join(f"{label[-24:]:>26}" for label, _ in implementations)
    if len(implementations) > 1:
        header += f"{'ratio':>8}"
    print(header)
    for case in cases:
        row = f"{case[0]:<24}" + "".join(f"{best[(case[0], label)]:>23.1f} us" for label, _ in implementations)
        if len(implementations) > 1:
            row += f"{best[(case[0], implementations[1][0])] / best[(case[0], 'this')]:>7.1f}x"
        print(row)
    if simulated:
        row = f"{'simulator, per Deployment':<24}" + "".join(f"{simulated[label]:>23.2f} ms" for label, _ in implementations)
        if len(implementations) > 1:
            row += f"{simulated[implementations[1][0]] / simulated['this']:>7.2f}x"
        print(row)


if __name__ == "__main__":
    main()
