"""Go durations (``time.ParseDuration``) as command lines take them: ``1h``, ``30m``, ``1h0m0s``, ``1.5s``."""

from __future__ import annotations

import re

__all__ = ["parse_duration"]

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(text: str) -> float:
    """A Go duration (``1h``, ``30m``, ``1h0m0s``, ``1.5s``) in seconds; raises ValueError."""
    if not text or _DURATION.sub("", text):
        raise ValueError(f"invalid duration {text!r} (use Go syntax like 1h, 30m or 90s)")
    return sum(float(n) * _UNIT[u] for n, u in _DURATION.findall(text))
