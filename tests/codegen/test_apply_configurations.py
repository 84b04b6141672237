"""Apply configurations (applyconfiguration-gen): every field optional, so a server-side apply sends only
what was set — against the embedded API server, with another manager owning the rest."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samplecontroller.apimachinery import objects
from samplecontroller.apimachinery.managedfields import extract
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.codegen import generator
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.clientset import Clientset as KubeClientset
from samplecontroller.rest import RESTClient, load_rest_client

CRDS = Path(__file__).resolve().parent / "testdata" / "corpus" / "typed-fields" / "crds"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("applycfg")
    assert generator.main(["--crds", str(CRDS), "--output", str(root / "applycfg_pkg"), "--package", "applycfg_pkg"]) == 0
    sys.path.insert(0, str(root))
    try:
        yield "applycfg_pkg"
    finally:
        sys.path.remove(str(root))


def test_every_field_is_optional(pkg: str) -> None:
    models = importlib.import_module(f"{pkg}.apis.ops.v1")
    configs = importlib.import_module(f"{pkg}.applyconfigurations.ops.v1")
    partial = models.Schedule(metadata=ObjectMeta(name="s"), spec=models.ScheduleSpec(replicas=5))
    assert b'"schedule":""' in objects.encode(partial)  # the model sends Go zero values it was not given
    config = configs.Schedule(metadata=ObjectMeta(name="s"), spec=configs.ScheduleSpec(replicas=5))
    assert objects.encode(config) == b'{"apiVersion":"ops.example.net/v1","kind":"Schedule","metadata":{"name":"s"},' \
                                     b'"spec":{"replicas":5}}'
    assert not hasattr(configs, "ScheduleList")


def test_apply_sends_only_what_was_set(pkg: str, apiserver: Any) -> None:
    install_crds(apiserver, CRDS)
    rest: RESTClient = load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))
    KubeClientset(rest).core_v1().namespaces().apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "applycfg"}}, field_manager="test")
    clientset = importlib.import_module(f"{pkg}.clientset").Clientset(rest)
    configs = importlib.import_module(f"{pkg}.applyconfigurations.ops.v1")
    schedules = clientset.ops_v1().schedules("applycfg")
    schedules.apply({"apiVersion": "ops.example.net/v1", "kind": "Schedule", "metadata": {"name": "nightly"},
                     "spec": {"schedule": "0 2 * * *", "paused": False, "replicas": 1, "ratio": 0.5, "tags": ["a"],
                              "labels": {}, "target": {"name": "db"}, "port": 80, "policy": "Allow",
                              "anything": {"x": 1}, "optionalNull": "n"}}, field_manager="owner")
    scale = configs.Schedule(metadata=ObjectMeta(name="nightly", namespace="applycfg"),
                             spec=configs.ScheduleSpec(replicas=5))
    live = schedules.apply(scale, field_manager="scaler", force=True)
    assert live.spec.replicas == 5 and live.spec.schedule == "0 2 * * *" and live.spec.target.name == "db"
    assert extract(live, "scaler")["spec"] == {"replicas": 5}  # the scaler owns replicas only
    assert extract(live, "owner")["spec"]["schedule"] == "0 2 * * *"
