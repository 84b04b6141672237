"""The toolkit's version, from one place: ``[project] version`` in pyproject.toml.

An installed toolkit (a wheel, or an editable install of a checkout) reads it from its
distribution's metadata; a source tree on ``sys.path`` without an install reads pyproject.toml.
Versions follow semantic versioning and the compatibility policy of the documentation
(docs/reference/compatibility.md).
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

__all__ = ["__version__", "version"]

DIST = "samplecontroller"
_PROJECT_VERSION = re.compile(r'^version\s*=\s*"([^"]+)"', re.MULTILINE)


def version() -> str:
    """The running toolkit's version (``"0+unknown"`` when neither metadata nor a pyproject.toml has one)."""
    source_tree = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        text = source_tree.read_text()
    except OSError:
        text = ""
    if f'name = "{DIST}"' in text:  # a checkout: its pyproject.toml, even when the install is older
        found = _PROJECT_VERSION.search(text)
        if found:
            return found.group(1)
    try:
        return importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = version()
