"""Group/version/kind of a model type: from a Scheme when given, else the model's own defaults.

The library never imports generated code: the application hands its Scheme in.
"""

from __future__ import annotations

from typing import Any

import msgspec

from samplecontroller.apimachinery import meta
from samplecontroller.client.scheme import Scheme


def gvk_for_type(model: type[Any], scheme: Scheme | None = None) -> tuple[str, str, str]:
    """(group, version, kind) of ``model``. ValueError names the type when it cannot be found."""
    if scheme is not None and scheme.recognizes(model):
        return tuple(scheme.gvk_for(model))  # type: ignore[return-value]
    if isinstance(model, type) and issubclass(model, msgspec.Struct):
        defaults = {f.name: f.default for f in msgspec.structs.fields(model)}
        api_version, kind = defaults.get("api_version"), defaults.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str) and kind:
            group, version = meta.group_version(api_version)
            return group, version, kind
    raise ValueError(f"{getattr(model, '__name__', model)!r} is not a registered API type")
