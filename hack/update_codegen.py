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

from samplecontroller.codegen import Defaults  # noqa: E402
from samplecontroller.codegen import main as codegen_main  # noqa: E402

DEFAULTS = Defaults(prog="update_codegen", generator="hack/update_codegen.py", crds=ROOT / "crds",
                    output=ROOT / "generated", package="generated", regenerate="python hack/update_codegen.py")


def main(argv: list[str] | None = None) -> int:
    """hack/update_codegen.py's command line (see the module docstring)."""
    return codegen_main(argv, DEFAULTS)


if __name__ == "__main__":
    sys.exit(main())
