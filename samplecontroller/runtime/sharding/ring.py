"""A consistent-hash ring (the anchor's pkg/sharding/consistenthash): each shard has ``tokens``
virtual nodes hashed onto a 64-bit ring; a key belongs to the shard of the next token. Adding
or removing a shard moves only the keys of the tokens it takes or gives up (about 1/N of them).
The hash is BLAKE2b (8 bytes) rather than xxhash (not in the standard library): deterministic
across processes and Python versions, unlike ``hash()``."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable

DEFAULT_TOKENS = 100

__all__ = ["DEFAULT_TOKENS", "Ring", "hash64"]


def hash64(data: str) -> int:
    """A 64-bit digest of ``data``."""
    return int.from_bytes(hashlib.blake2b(data.encode(), digest_size=8).digest(), "big")


class Ring:
    """An immutable ring of ``shards``; ``owner(key)`` is the shard a key belongs to ("" when empty)."""

    def __init__(self, shards: Iterable[str], tokens: int = DEFAULT_TOKENS) -> None:
        self.shards = frozenset(shards)
        pairs = sorted((hash64(f"{shard}{i}"), shard) for shard in self.shards for i in range(tokens))
        self._tokens = [t for t, _ in pairs]
        self._owners = [s for _, s in pairs]

    def owner(self, key: str) -> str:
        """The shard ``key`` belongs to ("" when the ring has no shard)."""
        if not self._tokens:
            return ""
        i = bisect.bisect_left(self._tokens, hash64(key))
        return self._owners[i if i < len(self._tokens) else 0]
