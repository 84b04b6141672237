"""Conversion between the versions of Backup: v1 is the hub, v2 converts through it.

The API server calls the operator's ``/convert`` webhook (config/crd/patches/webhook_in_backups.yaml)
whenever a Backup is read or written in a version other than the one it is stored in. Each
spoke version maps its fields to and from the hub here; when a version's schema changes (a
field renamed, split or moved), this is where the mapping goes. Keep ``metadata`` as it is: the
API server rejects a conversion that changes an object's name, namespace or UID.
"""

from __future__ import annotations

import msgspec
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook import webhook_managed_by

from backupop.generated.apis.ops import v1, v2


class BackupV2Conversion:
    """Backup v2 to and from v1 (the hub)."""

    spoke = v2.Backup
    hub = v1.Backup

    def convert_to(self, src: v2.Backup) -> v1.Backup:
        spec = src.spec if src.spec is msgspec.UNSET else v1.BackupSpec(message=src.spec.text)
        status = src.status if src.status is msgspec.UNSET else v1.BackupStatus(
            observed_generation=src.status.observed_generation, conditions=src.status.conditions)
        return v1.Backup(metadata=src.metadata, spec=spec, status=status)

    def convert_from(self, hub: v1.Backup) -> v2.Backup:
        spec = hub.spec if hub.spec is msgspec.UNSET else v2.BackupSpec(text=hub.spec.message)
        status = hub.status if hub.status is msgspec.UNSET else v2.BackupStatus(
            observed_generation=hub.status.observed_generation, conditions=hub.status.conditions)
        return v2.Backup(metadata=hub.metadata, spec=spec, status=status)


def setup(mgr: Manager) -> None:
    """Serve the conversions of Backup at /convert on the Manager's webhook server."""
    webhook_managed_by(mgr).for_(v1.Backup).with_conversion(
        BackupV2Conversion(),
    ).complete()
