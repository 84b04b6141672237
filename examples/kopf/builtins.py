"""kopf's 10-builtins: a pod killer per Pod (outside kube-*), cancelled when the pod
goes; it deletes its own object (its finalizer holds the pod until it has stopped)."""
import asyncio

from samplecontroller.kubernetes.apis.core.v1 import Pod
from samplecontroller.runtime import daemon
from samplecontroller.runtime.manager import Manager

TIMEOUT = 30.0  # (the test shortens it)


def setup(mgr: Manager) -> None:
    async def pod_killer(d: daemon.Context) -> None:
        try:
            d.logger.info(f"=== Pod killing happens in {TIMEOUT}s.")
            await asyncio.sleep(TIMEOUT)
            d.logger.info("=== Pod killing happens NOW!")
            await asyncio.to_thread(mgr.get_client().delete, d.object)
        except asyncio.CancelledError:
            d.logger.info("=== Pod killing is cancelled!")
            raise

    daemon.add_daemon(mgr, Pod, pod_killer, finalizer="kopf.dev/pod-killer",
                      when=lambda pod: not pod.metadata.namespace.startswith("kube-"),
                      cancellation_timeout=5)
