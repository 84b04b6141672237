#!/usr/bin/env python3
"""Vendor the upstream Kubernetes OpenAPI definitions the library reads: the ``_definitions.json``
of the pinned ``kubernetes-validate`` package (``SCHEMA_VERSION`` of
``samplecontroller.apimachinery.openapi_schemas``), xz-compressed, as the package-data file
``samplecontroller/apimachinery/openapi_definitions.json.xz``.

    python hack/update_openapi_schemas.py [--verify]

Needs the ``schemas`` extra (``pip install -e '.[schemas]'``; ``.[dev]`` includes it): this script
is the only reader of kubernetes-validate. ``--verify`` writes nothing: exit 1 naming the stale
file when its decompressed bytes differ from the package's file, 0 when up to date. Any other
problem (package missing, version directory missing): one line, exit 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROG = "update_openapi_schemas"
TARGET_DIR = ROOT / "samplecontroller" / "apimachinery"
# Deterministic output: the same input gives the same bytes with one liblzma.
_PRESET = 9 | lzma.PRESET_EXTREME

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from samplecontroller.apimachinery.openapi_schemas import SCHEMA_VERSION, VENDORED_FILE  # noqa: E402


class ScriptError(Exception):
    """A problem with the environment: printed as one line, exit status 2."""


def upstream_file(version: str = SCHEMA_VERSION) -> Path:
    """``_definitions.json`` of ``version`` inside the installed kubernetes-validate package."""
    # find_spec locates the package without importing it (its import pulls in jsonschema).
    try:
        spec = importlib.util.find_spec("kubernetes_validate")
    except ImportError:
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ScriptError("the kubernetes-validate package is not installed in "
                          f"{sys.executable}: pip install -e '.[schemas]' (or `make venv`)")
    path = Path(locations[0]) / "kubernetes-json-schema" / version / "_definitions.json"
    if not path.is_file():
        raise ScriptError(f"{path} does not exist: the installed kubernetes-validate lacks {version}")
    return path


def is_current(target: Path, source: bytes) -> bool:
    """Whether ``target`` exists and decompresses to exactly ``source``."""
    try:
        return lzma.decompress(target.read_bytes()) == source
    except (OSError, lzma.LZMAError):
        return False


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--verify", action="store_true", help="check the vendored file, write nothing")
    args = parser.parse_args(argv)
    target = TARGET_DIR / VENDORED_FILE
    try:
        source = upstream_file().read_bytes()
    except ScriptError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    rel = target.relative_to(ROOT)
    if is_current(target, source):
        print(f"{PROG}: {rel} is up to date ({SCHEMA_VERSION})")
        return 0
    if args.verify:
        print(f"{PROG}: {rel} is stale: run `python hack/update_openapi_schemas.py`", file=sys.stderr)
        return 1
    target.write_bytes(lzma.compress(source, preset=_PRESET))
    print(f"{PROG}: wrote {rel} ({target.stat().st_size} bytes from {len(source)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
