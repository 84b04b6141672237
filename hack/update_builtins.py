#!/usr/bin/env python3
"""Generate ``samplecontroller/kubernetes`` (typed models, clientset, listers and informers of every
built-in API group/version) from the vendored OpenAPI definitions.

    python hack/update_builtins.py [--verify]

See ``samplecontroller/codegen/builtins.py``; ``make codegen`` runs it, ``make verify-codegen``
runs it with ``--verify``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    from samplecontroller.codegen import builtins
except ModuleNotFoundError as _missing:
    print(f"update_builtins: error: the Python package {_missing.name!r} is not installed in {sys.executable}; "
          "run `make codegen` (it sets up .venv)", file=sys.stderr)
    sys.exit(1)


def main(argv: list[str] | None = None) -> int:
    """hack/update_builtins.py's command line (see the module docstring)."""
    return builtins.main(argv, ROOT / "samplecontroller" / "kubernetes")


if __name__ == "__main__":
    sys.exit(main())
