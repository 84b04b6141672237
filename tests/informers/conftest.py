"""Fixtures for the informer factory tests: the scripted server of tests/cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cache.scripted import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    s.start()
    yield s
    s.stop()
