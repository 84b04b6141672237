#!/usr/bin/env python3
"""Generate this repository's ``generated/`` from ``crds/``: ``samplecontroller-codegen`` with the
repository's defaults (paths relative to the repository, whatever the working directory).

    python hack/update_codegen.py [--crds DIR] [--output DIR] [--package NAME] [--verify]

See ``samplecontroller/codegen/generator.py`` for the pipeline and the exit statuses.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _without_venv(err: ModuleNotFoundError) -> int:
    """One line instead of a traceback when run by a Python that lacks the project's packages."""
    print(f"update_codegen: error: the Python package {err.name!r} is not installed in {sys.executable}; "
          "run `make codegen` (it sets up .venv), or `make venv` then `.venv/bin/python hack/update_codegen.py`",
          file=sys.stderr)
    return 1


try:
    from samplecontroller.codegen import Defaults
    from samplecontroller.codegen import main as codegen_main
except ModuleNotFoundError as _missing:
    sys.exit(_without_venv(_missing))

DEFAULTS = Defaults(prog="update_codegen", generator="hack/update_codegen.py", crds=ROOT / "crds",
                    output=ROOT / "generated", package="generated", regenerate="python hack/update_codegen.py")


def main(argv: list[str] | None = None) -> int:
    """hack/update_codegen.py's command line (see the module docstring)."""
    return codegen_main(argv, DEFAULTS)


if __name__ == "__main__":
    sys.exit(main())
