"""Run the memcached-operator operator: ``python -m memcachedop [--local] [--kubeconfig PATH] ...`` (``--help``).

``make run`` is ``python -m memcachedop --local --port 6443``: the embedded API server with the
CRDs of config/crd/bases, its kubeconfig at .local/kubeconfig, and the controllers on it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from samplecontroller.runtime import cmd

from memcachedop.controllers import setup
from memcachedop.scheme import SCHEME

NAME = "memcached-operator"
"""Who the operator writes as (field manager, Event source) and its leader election Lease's prefix."""


def main(argv: Sequence[str] | None = None) -> int:
    return cmd.main(argv, prog="python -m memcachedop", name=NAME, scheme=SCHEME, setup=setup,
                    crds=[Path("config/crd/bases")], description="The memcached-operator operator.")


if __name__ == "__main__":
    sys.exit(main())
