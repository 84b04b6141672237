"""Optional dependencies (pyproject's extras) and the one-line error when one is missing.

The core install (``pip install samplecontroller``) runs the controller and the client-go /
controller-runtime machinery. A module that needs an extra calls ``require(extra, feature)``
before importing it, so a missing package fails at once with ``MissingExtraError`` whose message
is one line naming ``pip install 'samplecontroller[<extra>]'``, not a traceback deep inside.
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "MissingExtraError", "missing", "require"]

# Extra -> the top-level modules it provides (kept in step with pyproject.toml).
EXTRAS: dict[str, tuple[str, ...]] = {
    "apiserver": ("aiohttp", "multidict", "yarl", "cryptography", "cel_expr_python"),
    "webhook": ("aiohttp", "cryptography"),
    "codegen": ("jinja2", "datamodel_code_generator"),
    "async": ("aiohttp",),
}


class MissingExtraError(ImportError):
    """An extra's package is not importable; ``str()`` is the whole one-line explanation."""


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported (none: the extra is installed)."""
    return [module for module in EXTRAS[extra] if not _importable(module)]


def require(extra: str, feature: str) -> None:
    """Raise ``MissingExtraError`` unless every module of ``extra`` is importable.

    ``feature`` names what needs it (``samplecontroller.apiserver``, ``main.py --local`` ...).
    """
    absent = missing(extra)
    if absent:
        raise MissingExtraError(
            f"{feature} needs the {extra!r} extra ({', '.join(absent)} not installed): "
            f"pip install 'samplecontroller[{extra}]'", name=absent[0])
