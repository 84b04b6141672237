"""Fixtures for the runtime layer's tests: a recording queue and a controller driver."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from tests.live import ns, rest

__all__ = ["ListQueue", "list_queue", "ns", "rest"]


class ListQueue:
    """Records what handlers add (keeps order and duplicates, unlike a real queue)."""

    def __init__(self) -> None:
        self.items: list[Hashable] = []

    def add(self, item: Any) -> None:
        self.items.append(item)


@pytest.fixture
def list_queue() -> ListQueue:
    return ListQueue()
