"""kopf's 16-indexing: two indexes of pods, read whole by two probes and by a timer."""
import pprint
from typing import Any

from samplecontroller.client.types import MERGE_PATCH
from samplecontroller.client.unstructured import unstructured
from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.runtime import daemon
from samplecontroller.runtime.client import RawPatch
from samplecontroller.runtime.manager import Manager

KEX = unstructured("kopf.dev/v1", "KopfExample")


def setup(mgr: Manager, interval: float = 5.0) -> None:
    cache = mgr.get_cache()
    cache.index_field(Pod, "running", lambda pod: [str(pod.status.phase == "Running")])
    cache.index_field(Pod, "label", lambda pod: [f"{k}={v}" for k, v in (pod.metadata.labels or {}).items()])

    def is_running() -> dict[tuple[str, str], list[bool]]:
        # {('kube-system', 'traefik-...-...'): [True], ('kube-system', 'helm-install-...'): [False], ...}
        return {(pod.metadata.namespace or "", pod.metadata.name or ""): [running == "True"]
                for running, pods in cache.index(Pod, "running").items() for pod in pods}

    def by_label() -> dict[tuple[str, str], list[str]]:
        # {('app', 'traefik'): ['traefik-...-...'], ('job-name', 'helm-install-traefik'): [...], ...}
        return {(label.partition("=")[0], label.partition("=")[2]): [pod.metadata.name or "" for pod in pods]
                for label, pods in cache.index(Pod, "label").items()}

    mgr.add_probe("pod_count", lambda: len(is_running()))
    mgr.add_probe("pod_names", lambda: [name for _, name in is_running()])

    def intervalled(d: daemon.Context) -> Any:
        pprint.pprint(by_label())
        running = [f"{ns}::{name}" for (ns, name), [yes] in is_running().items()
                   if ns in ["kube-system", "default", d.request.namespace] and yes]
        mgr.get_client().status().patch(d.object, RawPatch(MERGE_PATCH, {"status": {"running-pods": running}}))

    daemon.add_timer(mgr, KEX, intervalled, interval=interval)
