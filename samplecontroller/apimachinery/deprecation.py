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
    missing module attribute.

    A new name ``module`` only imports (a built-in type: ``EnvVar`` for 0.1.0's
    ``...ContainersItemEnvItem``) is named with the module that defines it, the one to import it from
    (``module`` does not export it: mypy --strict refuses importing it from there)."""
    if name in deprecated:
        new, until = deprecated[name]
        value = namespace[new]
        where = getattr(value, "__module__", None) if isinstance(value, type) else None
        target = new if where in (None, module) else f"{where}.{value.__qualname__}"
        warnings.warn(f"{module}.{name} is deprecated and goes in samplecontroller {until}: use {target}",
                      DeprecationWarning, stacklevel=3)
        return value
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
