"""The conversions of Backup: each spoke to the hub and back, then through the embedded API server
(tests/conftest.py serves /convert where the API server calls it)."""

from __future__ import annotations

from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

from backupop.generated.apis.ops import v1, v2
from backupop.generated.clientset import Clientset
from backupop.webhooks.backup_conversion import BackupV2Conversion


def test_v2_converts_to_v1_and_back() -> None:
    conversion = BackupV2Conversion()
    metadata = ObjectMeta(name="a", labels={"app": "demo"})
    original = v2.Backup(metadata=metadata, spec=v2.BackupSpec(text="hello"))
    hub = conversion.convert_to(original)
    assert hub.metadata == original.metadata and hub.spec == v1.BackupSpec(message="hello")
    assert conversion.convert_from(hub) == original




def test_the_api_server_converts_between_v2_and_v1(clientset: Clientset, namespace: str) -> None:
    v1_client = clientset.ops_v1().backups(namespace)
    v2_client = clientset.ops_v2().backups(namespace)
    suffix = ""

    spec = v1.BackupSpec(message="written as v1")
    v1_client.create(v1.Backup(metadata=ObjectMeta(name="from-v1" + suffix), spec=spec))
    as_v2 = v2_client.get("from-v1" + suffix)
    assert as_v2.api_version == "ops.example.com/v2"
    assert as_v2.spec == v2.BackupSpec(text="written as v1")

    v2_spec = v2.BackupSpec(text="written as v2")
    v2_client.create(v2.Backup(metadata=ObjectMeta(name="from-v2" + suffix), spec=v2_spec))
    as_v1 = v1_client.get("from-v2" + suffix)
    assert as_v1.api_version == "ops.example.com/v1"
    assert as_v1.spec == v1.BackupSpec(message="written as v2")
