"""The operator's webhooks: ``setup(mgr)`` registers each one with the Manager's webhook server.

``samplecontroller create webhook`` rewrites the lines between the ``+samplecontroller:scaffold``
markers (from the PROJECT file); edit anything outside them.
"""

from __future__ import annotations

from samplecontroller.runtime.manager import Manager

# +samplecontroller:scaffold:imports:begin
from backupop.webhooks import backup_conversion, backup_v1

# +samplecontroller:scaffold:imports:end


def setup(mgr: Manager) -> None:
    """Register every webhook with ``mgr`` (served when at least one is registered)."""
    # +samplecontroller:scaffold:setup:begin
    backup_conversion.setup(mgr)
    backup_v1.setup(mgr)
    # +samplecontroller:scaffold:setup:end
