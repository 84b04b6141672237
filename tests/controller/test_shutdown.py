"""Shutdown of the classic controller: only the items in progress finish, and the shutdown timeout
bounds the whole shutdown (not (1 + workers) x timeout, not the whole backlog).

The sync handler is controlled by the test (it blocks until released), so nothing depends on how
fast the machine is; the only real-clock check is a generous upper bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from generated.clientset.fake import Clientset as FakeClientset
from generated.informers import SharedInformerFactory
from samplecontroller.controller import Controller, ObjectName
from samplecontroller.kubernetes.clientset.fake import Clientset as FakeKubeClientset
from samplecontroller.kubernetes.informers import SharedInformerFactory as KubeInformerFactory
from samplecontroller.record import FakeRecorder


class HeldController(Controller):
    """A Controller whose sync handler records the key, then blocks until ``release`` is set."""

    def __init__(self, kube_factory: KubeInformerFactory, factory: SharedInformerFactory) -> None:
        super().__init__(kube_factory.clientset, factory.clientset, kube_factory.apps.v1.deployments,
                         factory.samplecontroller.v1alpha1.foos, FakeRecorder(100))
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.lock = threading.Lock()
        self.processed: list[ObjectName] = []

    def sync_handler(self, key: ObjectName) -> None:
        with self.lock:
            self.processed.append(key)
        self.entered.release()
        self.release.wait(60)


@pytest.fixture
def held() -> Iterator[tuple[HeldController, threading.Event]]:
    kube_factory, factory = KubeInformerFactory(FakeKubeClientset(), 0), SharedInformerFactory(FakeClientset(), 0)
    controller = HeldController(kube_factory, factory)
    stop = threading.Event()
    kube_factory.start(stop)
    factory.start(stop)
    yield controller, stop
    controller.release.set()
    stop.set()
    kube_factory.shutdown()
    factory.shutdown()


def start(controller: Controller, stop: threading.Event, workers: int, timeout: float) -> threading.Thread:
    t = threading.Thread(target=controller.run, args=(workers, stop), kwargs={"shutdown_timeout": timeout},
                         daemon=True)
    t.start()
    return t


def wait_until(predicate: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_only_items_in_progress_finish_and_the_backlog_is_not_processed(
        held: tuple[HeldController, threading.Event]) -> None:
    controller, stop = held
    backlog = [ObjectName("default", f"foo-{i}") for i in range(20)]
    for key in backlog:
        controller.workqueue.add(key)
    runner = start(controller, stop, workers=2, timeout=60.0)
    for _ in range(2):
        assert controller.entered.acquire(timeout=10), "the workers did not pick up the first items"
    stop.set()
    wait_until(controller.workqueue.shutting_down, "the queue to shut down")
    assert runner.is_alive(), "run returned while items were still in progress"
    controller.release.set()
    runner.join(30)
    assert not runner.is_alive(), "run did not return once the items in progress finished"
    assert sorted(controller.processed) == sorted(backlog[:2]), "items still waiting were handed out at shutdown"


def test_the_timeout_bounds_the_whole_shutdown(held: tuple[HeldController, threading.Event]) -> None:
    """20 workers stuck in their handlers, timeout 0.25 s: the old code took 21 x 0.25 s."""
    controller, stop = held
    workers = 20
    for i in range(workers + 10):
        controller.workqueue.add(ObjectName("default", f"foo-{i}"))
    runner = start(controller, stop, workers=workers, timeout=0.25)
    for _ in range(workers):
        assert controller.entered.acquire(timeout=10), "the workers did not pick up the items"
    stop.set()
    runner.join(4.0)  # generous: 16 x the timeout, below the old 5.25 s
    assert not runner.is_alive(), "the shutdown took much longer than --shutdown-timeout"
    assert len(controller.processed) == workers
