"""Service cluster IP allocation from the service CIDR (kube-apiserver's
pkg/registry/core/service/ipallocator).

``CIDRRange(cidr)`` numbers the usable addresses of a CIDR (an IPv4 range leaves out the
network and broadcast addresses, an IPv6 one the network address; at most 65536 are used, as
upstream's bitmap caps large IPv6 ranges). ``allocate(ip, taken)`` checks a requested address and
``allocate_next(taken)`` picks a free one the way upstream's allocator does since the static
subrange feature (GA in 1.26): a random free address in the upper, dynamic part of the range
first, then the lower part (``range_offset``), so addresses users pick by hand from the low end
rarely collide with allocated ones.

The allocators are stateless: ``taken`` is what the stored objects hold, so an address is
released as soon as the object holding it is gone (also across restarts). Failures are
``AllocationError``s carrying upstream's messages.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable, Collection

__all__ = ["DEFAULT_SERVICE_CIDR", "AllocationError", "CIDRRange", "next_free", "range_offset"]

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
"""kubeadm's default ``--service-cluster-ip-range``; the ``kubernetes`` Service has its first address."""

_MAX_BITMAP = 65536


class AllocationError(Exception):
    """A requested value cannot be had (its message is upstream's, e.g. ``provided IP is
    already allocated``)."""


def range_offset(size: int, divisor: int = 16, low: int = 16, high: int = 256) -> int:
    """The size of the static (lower) band of a range of ``size`` values: ``size / divisor``
    bounded to [``low``, ``high``], and 0 for ranges too small to split (upstream's
    calculateRangeOffset; node ports use divisor 32 and high 128)."""
    if size < low:
        return 0
    return max(low, min(size // divisor, high))


def next_free(size: int, offset: int, taken: Callable[[int], bool], rng: random.Random | None = None) -> int | None:
    """A free index of ``[0, size)``: scanning from a random start within ``[offset, size)``
    (wrapping inside it), then from a random start within ``[0, offset)``; None when every
    index is taken."""
    pick = rng or random
    for start, end in ((offset, size), (0, offset)):
        width = end - start
        if width <= 0:
            continue
        first = pick.randrange(width)
        for step in range(width):
            index = start + (first + step) % width
            if not taken(index):
                return index
    return None


class CIDRRange:
    """The allocatable addresses of one service CIDR (see the module docstring)."""

    def __init__(self, cidr: str = DEFAULT_SERVICE_CIDR) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        total = self.network.num_addresses
        if self.network.version == 4:
            total = total - 2 if total > 2 else 0
        else:
            total = total - 1 if total > 1 else 0
        self.size = min(total, _MAX_BITMAP) if self.network.version == 6 else total
        self.offset = range_offset(self.size)
        self.family = "IPv4" if self.network.version == 4 else "IPv6"

    def __str__(self) -> str:
        return str(self.network)

    def ip_at(self, index: int) -> str:
        """The address with number ``index`` (0 is the address after the network address)."""
        return str(self.network.network_address + 1 + index)

    def index_of(self, ip: str) -> int | None:
        """The number of ``ip`` in the range, or None when it is not an allocatable address of it."""
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return None
        if addr.version != self.network.version or addr not in self.network:
            return None
        index = int(addr) - int(self.network.network_address) - 1
        return index if 0 <= index < self.size else None

    def allocate(self, ip: str, taken: Collection[str]) -> str:
        """``ip`` (normalized) if it is in the range and not in ``taken``; else AllocationError."""
        index = self.index_of(ip)
        if index is None:
            raise AllocationError(f"the provided IP ({ip}) is not in the valid range. "
                                  f"The range of valid IPs is {self.network}")
        normalized = self.ip_at(index)
        if normalized in taken:
            raise AllocationError("provided IP is already allocated")
        return normalized

    def allocate_next(self, taken: Collection[str], rng: random.Random | None = None) -> str:
        """A free address (see the module docstring); AllocationError ``range is full``."""
        index = next_free(self.size, self.offset, lambda i: self.ip_at(i) in taken, rng)
        if index is None:
            raise AllocationError("range is full")
        return self.ip_at(index)
