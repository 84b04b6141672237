"""The conformance table (see conftest.py) with kubectl 1.27 to 1.30, on one server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytestmark = pytest.mark.kubectl


@pytest.mark.parametrize("version", ["1.27", "1.28", "1.29", "1.30"])
def test_kubectl_conformance(version: str, conformance: Callable[[str], None]) -> None:
    conformance(version)
