"""Index functions and the namespace index (client-go's tools/cache/index.go).

An index function maps an object to the list of values it is indexed under (zero, one or many);
an ``Indexer`` keeps, per index name, value -> set of keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samplecontroller.apimachinery import meta

IndexFunc = Callable[[Any], list[str]]
"""Maps an object to its index values; must be pure and must not call back into the store."""

Indexers = dict[str, IndexFunc]

NAMESPACE_INDEX = "namespace"


def meta_namespace_index_func(obj: Any) -> list[str]:
    """The namespace index: ``[namespace]`` ("" for cluster-scoped objects)."""
    return [meta.get_namespace(obj)]
