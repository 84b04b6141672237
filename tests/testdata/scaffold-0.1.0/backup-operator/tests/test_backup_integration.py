"""The Backup controller against the embedded API server (the samplecontroller pytest plugin's
``apiserver`` has config/crd/bases installed): a new Backup becomes Ready, with its
observedGeneration and a Reconciled Event; a spec change is observed again."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import msgspec
import pytest
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import cmd

from backupop.__main__ import NAME
from backupop.controllers import backup
from backupop.generated.apis.ops.v1 import Backup, BackupSpec
from backupop.generated.clientset import Clientset
from backupop.scheme import SCHEME

T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll ``probe`` until it returns something other than None (a deadline, not a timing assert)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def running(rest_client: RESTClient, namespace: str) -> Iterator[None]:
    """The Backup controller under a Manager watching this test's namespace."""
    args = cmd.parse_flags(["--namespace", namespace], name=NAME)
    mgr = cmd.new_manager(rest_client, args, name=NAME, scheme=SCHEME)
    backup.setup(mgr, args)
    stop = threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(30)


def ready(obj: Backup) -> Backup | None:
    """``obj`` when its status says Ready for its current generation."""
    if obj.status is msgspec.UNSET or obj.status.observed_generation != obj.metadata.generation:
        return None
    conditions = obj.status.conditions if obj.status.conditions is not msgspec.UNSET else ()
    return obj if any(c.type == "Ready" and c.status == "True" for c in conditions) else None


@pytest.mark.usefixtures("running")
def test_a_new_backup_becomes_ready(clientset: Clientset, rest_client: RESTClient, namespace: str) -> None:
    backups = clientset.ops_v1().backups(namespace)
    name = "sample"
    events_namespace = namespace
    backups.create(Backup(metadata=ObjectMeta(name=name), spec=BackupSpec(message="hello")))
    first = wait_for("the Backup to become Ready", lambda: ready(backups.get(name)))
    assert first.status is not msgspec.UNSET and first.status.observed_generation == 1

    def reconciled_event() -> str | None:
        events = json.loads(rest_client.request("GET", f"/api/v1/namespaces/{events_namespace}/events",
                                                query={"fieldSelector": f"involvedObject.name={name}"}))
        return next((str(e["message"]) for e in events["items"] if e["reason"] == "Reconciled"), None)

    assert "is ready" in wait_for("the Reconciled Event", reconciled_event)

    backups.patch(name, {"spec": {"message": "changed"}})
    second = wait_for("the new generation to be observed",
                      lambda: (obj if (obj := ready(backups.get(name))) and obj.metadata.generation == 2 else None))
    assert second.status is not msgspec.UNSET and second.status.observed_generation == 2
