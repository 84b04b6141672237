"""The namespace controller runs one pass at a time per terminating namespace, however many
events its content produces (each pass scans every namespaced resource)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.controllers.namespace import NamespaceController
from tests.apiserver.conftest import Raw


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LocalAPIServer, list[float]]]:
    passes: list[float] = []
    original = NamespaceController.finish

    def finish(self: NamespaceController, name: str) -> None:
        passes.append(time.monotonic())
        original(self, name)

    monkeypatch.setattr(NamespaceController, "finish", finish)
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as server:
        yield server, passes


def test_content_events_do_not_multiply_namespace_passes(counted: tuple[LocalAPIServer, list[float]]) -> None:
    server, passes = counted
    raw = Raw(server)
    raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "busy"}})
    for i in range(60):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}
        assert raw.call("POST", "/api/v1/namespaces/busy/configmaps", cm)[0] == 201
    held = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    assert raw.call("POST", "/api/v1/namespaces/busy/configmaps", held)[0] == 201
    assert raw.call("DELETE", "/api/v1/namespaces/busy")[0] == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the 60 deletions happen; "held" stays behind its finalizer
        _, _, items = raw.call("GET", "/api/v1/namespaces/busy/configmaps")
        if [o["metadata"]["name"] for o in items["items"] if o["metadata"]["name"] != "kube-root-ca.crt"] == ["held"]:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the namespace's content was not deleted: {items['items']}")
    time.sleep(0.6)  # let the passes those events asked for run
    start = time.monotonic()
    time.sleep(1.5)
    recent = [t for t in passes if t >= start]
    # one retry chain (a pass every 0.5 s while content remains), not one per event
    assert len(recent) <= 5, f"{len(recent)} namespace passes in 1.5 s ({len(passes)} in all)"
    raw.call("PATCH", "/api/v1/namespaces/busy/configmaps/held", {"metadata": {"finalizers": None}},
             ctype="application/merge-patch+json")
    deadline = time.monotonic() + 30
    while raw.call("GET", "/api/v1/namespaces/busy")[0] != 404:
        assert time.monotonic() < deadline, "the namespace was not removed once its content was gone"
        time.sleep(0.05)
