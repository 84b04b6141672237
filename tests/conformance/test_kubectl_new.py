"""The conformance table (see conftest.py) with kubectl 1.31 to 1.33 and the /usr/bin/kubectl
dispatcher (which picks the kubectl matching the server's minor version), on one server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytestmark = pytest.mark.kubectl


@pytest.mark.parametrize("version", ["1.31", "1.32", "1.33", "dispatcher"])
def test_kubectl_conformance(version: str, conformance: Callable[[str], None]) -> None:
    conformance(version)
