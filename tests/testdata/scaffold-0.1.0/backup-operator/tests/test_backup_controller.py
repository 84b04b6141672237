"""Unit tests of the Backup reconciler on the fake client (``runtime.client.fake.ClientBuilder``: an
in-memory tracker with the server's status subresource and resourceVersion semantics; no server)."""

from __future__ import annotations

import msgspec
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.record import FakeRecorder
from samplecontroller.runtime.client import Client
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.reconcile import Request, Result

from backupop.controllers.backup import CONDITION_READY, PAUSE, REASON_RECONCILED, BackupReconciler, ready_status
from backupop.generated.apis.ops.v1 import Backup, BackupSpec
from backupop.scheme import SCHEME

NAMESPACE = "default"


def new_backup(generation: int = 1) -> Backup:
    metadata = ObjectMeta(name="sample", namespace=NAMESPACE, generation=generation)
    return Backup(metadata=metadata, spec=BackupSpec(message="hello"))


def reconciler_for(*objects: Backup) -> tuple[BackupReconciler, Client, FakeRecorder]:
    """The reconciler on a fake client holding ``objects``, and its recorder."""
    client = ClientBuilder().with_scheme(SCHEME).with_objects(*objects).with_status_subresource(Backup).build()
    recorder = FakeRecorder(10)
    return BackupReconciler(client, recorder), client, recorder


def test_sets_observed_generation_and_ready() -> None:
    reconciler, client, recorder = reconciler_for(new_backup(generation=3))
    assert reconciler.reconcile(Request(NAMESPACE, "sample")) == Result()
    got = client.get(Backup, NAMESPACE, "sample")
    assert got.status is not msgspec.UNSET and got.status.observed_generation == 3
    conditions = got.status.conditions if got.status.conditions is not msgspec.UNSET else ()
    assert [(c.type, c.status, c.reason) for c in conditions] == [(CONDITION_READY, "True", REASON_RECONCILED)]
    assert conditions[0].observed_generation == 3 and conditions[0].last_transition_time
    assert recorder.drain() == [f"Normal {REASON_RECONCILED} Backup is ready (generation 3)"]


def test_an_up_to_date_status_is_not_written_again() -> None:
    ready = msgspec.structs.replace(new_backup(), status=ready_status(new_backup()))
    reconciler, client, recorder = reconciler_for(ready)
    before = client.get(Backup, NAMESPACE, "sample").metadata.resource_version
    reconciler.reconcile(Request(NAMESPACE, "sample"))
    assert client.get(Backup, NAMESPACE, "sample").metadata.resource_version == before
    assert recorder.drain() == []


def test_a_deleted_object_is_done() -> None:
    reconciler, _, recorder = reconciler_for()
    assert reconciler.reconcile(Request(NAMESPACE, "gone")) == Result()
    assert recorder.drain() == []


def test_a_paused_backup_is_left_alone() -> None:
    paused = msgspec.structs.replace(new_backup(), spec=BackupSpec(message=PAUSE))
    reconciler, client, recorder = reconciler_for(paused)
    assert reconciler.reconcile(Request(NAMESPACE, "sample")) == Result()
    assert client.get(Backup, NAMESPACE, "sample").status is msgspec.UNSET
    assert recorder.drain() == []
