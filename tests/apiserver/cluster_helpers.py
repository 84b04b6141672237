"""What the test_cluster_* modules share."""

from __future__ import annotations

import itertools

from tests.apiserver.conftest import Raw

__all__ = ["new_namespace"]

_ns = itertools.count()


def new_namespace(raw: Raw) -> str:
    """Create a namespace nobody else uses (``cluster-t<n>``) and return its name."""
    name = f"cluster-t{next(_ns)}"
    code, _, body = raw.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": name}})
    assert code == 201, body
    return name
