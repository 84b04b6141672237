"""A reflector ahead of the server (the server's data was restored from an older copy) gets "Too
large resource version" for its watch and its list at that version, and re-lists from scratch as
client-go does, so its cache matches the server again."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from generated.clientset import Clientset
from samplecontroller.apiserver import LocalAPIServer, write_kubeconfig
from samplecontroller.apiserver.testing import install_crds
from samplecontroller.cache import Reflector, new_store
from samplecontroller.rest import load_rest_client
from tests.reliability.procs import SwitchingProxy, wait_until


def foo(name: str) -> dict[str, Any]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": name},
            "spec": {"deploymentName": name, "replicas": 1}}


@pytest.mark.slow
def test_a_reflector_ahead_of_a_restored_server_relists(tmp_path: Path) -> None:
    data, backup = tmp_path / "data", tmp_path / "backup"
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc0") as s:
        install_crds(s, Path(__file__).resolve().parents[2] / "crds")
        Clientset(load_rest_client(kubeconfig=str(s.kubeconfig_path))).samplecontroller_v1alpha1().foos(
            "default").create(foo("kept"))
    shutil.copytree(data, backup)  # a consistent copy of a stopped server (same CA and token)
    errors: list[BaseException] = []
    stop = threading.Event()
    store = new_store()
    with LocalAPIServer(data_dir=data, kubeconfig_path=tmp_path / "kc1") as newer, \
            LocalAPIServer(data_dir=backup, kubeconfig_path=tmp_path / "kc2") as restored:
        assert newer.ca_path is not None
        proxy = SwitchingProxy(newer.port)
        write_kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{proxy.port}", newer.token, newer.ca_path.read_bytes())
        foos = Clientset(load_rest_client(kubeconfig=str(tmp_path / "kc"))).samplecontroller_v1alpha1().foos("default")
        reflector = Reflector(foos.lister_watcher(), store, name="foos",
                              watch_error_handler=lambda _name, err: errors.append(err))
        runner = threading.Thread(target=reflector.run, args=(stop,), daemon=True)
        try:
            runner.start()
            for name in ("lost-1", "lost-2"):
                foos.create(foo(name))
            wait_until(lambda: sorted(store.list_keys()) == ["default/kept", "default/lost-1", "default/lost-2"], 10,
                       "the reflector syncs")
            # the store can be synced by the list alone: the switch must not cut the watch while its
            # connection is still being opened (a TLS handshake cut short is no watch to resume)
            wait_until(lambda: newer.call(lambda core: len(core.store.watchers.get("samplecontroller.k8s.io/foos", ())))
                       == 1, 10, "the reflector watches")
            ahead = int(reflector.last_sync_resource_version())
            assert restored.call(lambda core: core.store.rev) < ahead
            proxy.switch(restored.port)  # the watch is cut and re-opened, at once, on the restored server
            wait_until(lambda: store.list_keys() == ["default/kept"], 20, "the reflector re-lists")
            assert int(reflector.last_sync_resource_version()) <= restored.call(lambda core: core.store.rev)
            too_large = [e for e in errors if "Too large resource version" in str(e)]
            assert too_large, [str(e) for e in errors]
        finally:
            stop.set()
            runner.join(10)
            proxy.close()
