"""Service node port allocation (kube-apiserver's pkg/registry/core/service/portallocator):
``PortRange`` (default ``--service-node-port-range`` 30000-32767) checks requested ports and picks
free ones, the upper (dynamic) band first as upstream does since node port static subranges
(GA in 1.29). Stateless like ``ipallocator``: ``taken`` is what the stored Services hold.
"""

from __future__ import annotations

import random
from collections.abc import Collection

from samplecontroller.apiserver.ipallocator import AllocationError, next_free, range_offset

__all__ = ["DEFAULT_NODE_PORT_RANGE", "PortRange"]

DEFAULT_NODE_PORT_RANGE = (30000, 32767)


class PortRange:
    """The node ports ``base`` .. ``base + size - 1``."""

    def __init__(self, first: int = DEFAULT_NODE_PORT_RANGE[0], last: int = DEFAULT_NODE_PORT_RANGE[1]) -> None:
        self.base = first
        self.size = last - first + 1
        self.offset = range_offset(self.size, divisor=32, high=128)

    def __str__(self) -> str:
        return f"{self.base}-{self.base + self.size - 1}"

    def allocate(self, port: int, taken: Collection[int]) -> int:
        """``port`` if it is in the range and free; else AllocationError with upstream's message."""
        if not self.base <= port < self.base + self.size:
            raise AllocationError(f"provided port is not in the valid range. The range of valid ports is {self}")
        if port in taken:
            raise AllocationError("provided port is already allocated")
        return port

    def allocate_next(self, taken: Collection[int], rng: random.Random | None = None) -> int:
        """A free port; AllocationError ``range is full`` when there is none."""
        index = next_free(self.size, self.offset, lambda i: self.base + i in taken, rng)
        if index is None:
            raise AllocationError("range is full")
        return self.base + index
