"""The admission webhooks of Backup v1: defaulting and validation.

The API server calls them on every create and update of a Backup in ops.example.com/v1
(config/webhook/manifests.yaml): first the defaulter, whose changes it keeps, then the
validator, which may reject the request. Replace the example rules with your kind's.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from samplecontroller.apimachinery import errors
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook import webhook_managed_by

from backupop.generated.apis.ops.v1 import Backup, BackupSpec

DEFAULT_MESSAGE = "hello"
"""What an empty ``spec.message`` becomes."""
MAX_MESSAGE_LENGTH = 64
"""The longest ``spec.message`` accepted."""


class BackupCustomDefaulter:
    """Fills in what a Backup leaves empty (controller-runtime's CustomDefaulter).

    ``default`` returns the defaulted copy (the models are frozen); the API server receives the
    difference as a JSON patch and stores the result.
    """

    def default(self, obj: Backup) -> Backup:
        spec = obj.spec if obj.spec is not msgspec.UNSET else BackupSpec()
        if not spec.message:
            spec = msgspec.structs.replace(spec, message=DEFAULT_MESSAGE)
        return msgspec.structs.replace(obj, spec=spec)


class BackupCustomValidator:
    """Rejects a Backup that breaks the rules below (controller-runtime's CustomValidator).

    Each method returns warnings (shown by kubectl) or raises: a ``StatusError`` is answered with
    its own code (``errors.new_invalid``: 422 Invalid, as the API server's own validation).
    """

    def validate_create(self, obj: Backup) -> Sequence[str]:
        return self._validate(obj)

    def validate_update(self, old: Backup, new: Backup) -> Sequence[str]:
        return self._validate(new)

    def validate_delete(self, obj: Backup) -> Sequence[str]:
        return []

    def _validate(self, obj: Backup) -> Sequence[str]:
        message = obj.spec.message if obj.spec is not msgspec.UNSET else msgspec.UNSET
        if message is not msgspec.UNSET and len(message) > MAX_MESSAGE_LENGTH:
            name = obj.metadata.name if obj.metadata.name is not msgspec.UNSET else ""
            raise errors.new_invalid("ops.example.com", "Backup", name, [
                ("spec.message", f"Too long: may not be more than {MAX_MESSAGE_LENGTH} characters")])
        return []


def setup(mgr: Manager) -> None:
    """Serve the webhooks of Backup v1 on the Manager's webhook server."""
    builder = webhook_managed_by(mgr).for_(Backup)
    builder.with_defaulter(BackupCustomDefaulter())
    builder.with_validator(BackupCustomValidator())
    builder.complete()
