"""The operator's controllers: ``setup(mgr, args)`` registers each one with the Manager.

``samplecontroller create api`` rewrites the lines between the ``+samplecontroller:scaffold``
markers (from the PROJECT file); edit anything outside them.
"""

from __future__ import annotations

import argparse

from samplecontroller.runtime.manager import Manager

# +samplecontroller:scaffold:imports:begin
from backupop.controllers import backup

# +samplecontroller:scaffold:imports:end


def setup(mgr: Manager, args: argparse.Namespace) -> None:
    """Register every controller with ``mgr`` (``args``: the command line flags)."""
    # +samplecontroller:scaffold:setup:begin
    backup.setup(mgr, args)
    # +samplecontroller:scaffold:setup:end
