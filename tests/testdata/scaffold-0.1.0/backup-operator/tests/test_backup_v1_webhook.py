"""The Backup v1 webhooks: the handlers alone, then through the embedded API server
(tests/conftest.py serves them where the API server calls them)."""

from __future__ import annotations

import msgspec
import pytest
from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta

from backupop.generated.apis.ops.v1 import Backup, BackupSpec
from backupop.generated.clientset import Clientset
from backupop.webhooks.backup_v1 import (
    DEFAULT_MESSAGE,
    MAX_MESSAGE_LENGTH,
    BackupCustomDefaulter,
    BackupCustomValidator,
)


def backup(name: str, message: str | None = None) -> Backup:
    spec = BackupSpec() if message is None else BackupSpec(message=message)
    return Backup(metadata=ObjectMeta(name=name), spec=spec)


def test_the_defaulter_fills_in_an_empty_message() -> None:
    defaulted = BackupCustomDefaulter().default(backup("a"))
    assert defaulted.spec is not msgspec.UNSET and defaulted.spec.message == DEFAULT_MESSAGE
    kept = BackupCustomDefaulter().default(backup("b", "mine"))
    assert kept.spec is not msgspec.UNSET and kept.spec.message == "mine"


def test_the_validator_rejects_a_long_message() -> None:
    validator = BackupCustomValidator()
    assert list(validator.validate_create(backup("a", "fine"))) == []
    with pytest.raises(errors.StatusError) as caught:
        validator.validate_update(backup("a", "fine"), backup("a", "x" * (MAX_MESSAGE_LENGTH + 1)))
    assert caught.value.code == 422 and "spec.message: Too long" in str(caught.value)


def test_the_api_server_calls_the_webhooks(clientset: Clientset, namespace: str) -> None:
    backups = clientset.ops_v1().backups(namespace)
    prefix = "webhook"
    created = backups.create(backup(f"{prefix}-defaulted"))
    assert created.spec is not msgspec.UNSET and created.spec.message == DEFAULT_MESSAGE
    with pytest.raises(errors.StatusError) as caught:
        backups.create(backup(f"{prefix}-invalid", "x" * (MAX_MESSAGE_LENGTH + 1)))
    assert caught.value.code == 422 and "spec.message: Too long" in str(caught.value)
    accepted = backups.create(backup(f"{prefix}-valid", "short"))
    assert accepted.spec is not msgspec.UNSET and accepted.spec.message == "short"
