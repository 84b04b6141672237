"""Deprecated names that keep working for a release and warn (the compatibility policy,
docs/reference/compatibility.md).

Generated models modules use ``alias`` from their module ``__getattr__`` for generated names a
newer generator renamed (``samplecontroller.codegen.compat``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["alias"]


def alias(module: str, namespace: Mapping[str, Any], deprecated: Mapping[str, tuple[str, str]], name: str) -> Any:
    """``namespace[new]`` for a deprecated ``name`` (``deprecated``: old -> (new, the release that removes
    it)), with a ``DeprecationWarning`` naming the new name; else ``AttributeError`` as for any
    missing module attribute."""
    if name in deprecated:
        new, until = deprecated[name]
        warnings.warn(f"{module}.{name} is deprecated and goes in samplecontroller {until}: use {new}",
                      DeprecationWarning, stacklevel=3)
        return namespace[new]
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
