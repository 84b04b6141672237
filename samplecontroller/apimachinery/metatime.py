"""metav1.Time and metav1.MicroTime on the wire: RFC 3339 strings, parsed and written as Go does.

``metav1.Time`` marshals as RFC 3339 in UTC with second precision (``2024-01-02T03:04:05Z``),
``metav1.MicroTime`` with six fractional digits (``2024-01-02T03:04:05.123456Z``); a zero time is
``null``. ``parse_time`` reads what Go's ``time.Parse(time.RFC3339, ...)`` reads (any offset,
optional fraction) into an aware UTC ``datetime``; None and ``""`` are None (Go's zero time).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["format_micro_time", "format_time", "now", "parse_time"]

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})")


def parse_time(value: str | None) -> datetime | None:
    """An RFC 3339 timestamp as an aware UTC datetime (None for None or ``""``); ValueError names a bad one."""
    if value is None or value == "":
        return None
    m = _RFC3339.fullmatch(value)
    if m is None:
        raise ValueError(f"{value!r} is not an RFC 3339 time (like 2024-01-02T03:04:05Z)")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    zone = m.group(8)
    if zone in ("Z", "z"):
        tz = UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz).astimezone(UTC)


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("a naive datetime has no zone: use datetime.now(UTC) or attach tzinfo")
    return value.astimezone(UTC)


def format_time(value: datetime | None) -> str | None:
    """metav1.Time's wire form: UTC, whole seconds (``2024-01-02T03:04:05Z``); None for None."""
    if value is None:
        return None
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(value: datetime | None) -> str | None:
    """metav1.MicroTime's wire form: UTC, microseconds (``2024-01-02T03:04:05.000001Z``); None for None."""
    if value is None:
        return None
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now() -> str:
    """metav1.Now() on the wire."""
    return format_time(datetime.now(UTC)) or ""
