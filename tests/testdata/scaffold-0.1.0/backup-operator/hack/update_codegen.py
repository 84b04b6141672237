#!/usr/bin/env python3
"""Regenerate backupop/generated from the CRDs in config/crd/bases (``make codegen``).

    python hack/update_codegen.py [--verify]

``--verify`` (part of ``make test``) exits 1 listing the stale files when a CRD changed since.
"""

from __future__ import annotations

import sys
from pathlib import Path

from samplecontroller.codegen import Defaults, main

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = Defaults(prog="update_codegen", generator="hack/update_codegen.py", crds=ROOT / "config" / "crd" / "bases",
                    output=ROOT / "backupop" / "generated", package="backupop.generated",
                    regenerate="make codegen")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], DEFAULTS))
