"""Run the backup-operator operator: ``python -m backupop [--local] [--kubeconfig PATH] ...`` (``--help``).

``make run`` is ``python -m backupop --local --port 6443``: the embedded API server with the
CRDs of config/crd/bases, its kubeconfig at .local/kubeconfig, and the controllers on it. With
webhooks (config/webhook, config/crd/patches), the embedded API server calls them on the
Manager's webhook server (``--webhook-port``, a self-signed certificate in .local/serving-certs).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from samplecontroller.runtime import cmd
from samplecontroller.runtime.manager import Manager

from backupop import controllers, webhooks
from backupop.scheme import SCHEME

NAME = "backup-operator"
"""Who the operator writes as (field manager, Event source) and its leader election Lease's prefix."""


def setup(mgr: Manager, args: argparse.Namespace) -> None:
    """Register the controllers and the webhooks with ``mgr``."""
    controllers.setup(mgr, args)
    webhooks.setup(mgr)


def main(argv: Sequence[str] | None = None) -> int:
    return cmd.main(argv, prog="python -m backupop", name=NAME, scheme=SCHEME, setup=setup,
                    crds=[Path("config/crd/bases")], webhooks=[Path("config/webhook"), Path("config/crd/patches")],
                    description="The backup-operator operator.")


if __name__ == "__main__":
    sys.exit(main())
