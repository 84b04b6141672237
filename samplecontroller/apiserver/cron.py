"""CronJob schedules as kube-apiserver checks them: robfig/cron v3's ``ParseStandard`` (five
fields: minute, hour, day of month, month, day of week; names ``jan``-``dec`` and ``sun``-``sat``;
``*``/``?``, ranges, steps and lists; the descriptors ``@yearly``/``@annually``, ``@monthly``,
``@weekly``, ``@daily``/``@midnight``, ``@hourly`` and ``@every <Go duration>``; a leading
``TZ=``/``CRON_TZ=`` location).

``schedule_error(spec)`` is None for a valid schedule, else the parser's error text (what the
API server puts after ``spec.schedule: Invalid value: "<spec>": ``). ``timezone_error(name)``
checks a CronJob's ``timeZone`` as Go's ``time.LoadLocation`` does.
"""

from __future__ import annotations

import re
import zoneinfo

__all__ = ["go_duration_error", "schedule_error", "timezone_error"]

_MONTHS = {name: i + 1 for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (min, max, names) of minute, hour, day of month, month, day of week
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_ATOI = re.compile(r"[+-]?[0-9]+")
_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9,
                   "m": 60 * 10**9, "h": 3600 * 10**9}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


class _CronError(Exception):
    pass


def _atoi(expr: str) -> int:
    """Go's ``strconv.Atoi`` with robfig's error text."""
    if not _ATOI.fullmatch(expr):
        raise _CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        raise _CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": value out of range')
    if num < 0:
        raise _CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _atoi(expr)


def _check_range(expr: str, low: int, high: int, names: dict[str, int] | None) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_and_high) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise _CronError(f"too many slashes: {expr}")
    if start < low:
        raise _CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise _CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def go_duration_error(text: str) -> str | None:
    """None if ``text`` is a Go ``time.ParseDuration`` duration, else Go's error message."""
    quoted = '"' + text + '"'
    rest = text.lstrip("+-") if text[:1] in "+-" else text
    if rest == "0":
        return None
    if not rest:
        return f"time: invalid duration {quoted}"
    pos = 0
    while pos < len(rest):
        match = _DURATION_PART.match(rest, pos)
        assert match is not None
        number, unit = match.group(1), match.group(2)
        if number in ("", "."):
            return f"time: invalid duration {quoted}"
        if not unit:
            return f"time: missing unit in duration {quoted}"
        if unit not in _DURATION_UNITS:
            return f'time: unknown unit "{unit}" in duration {quoted}'
        pos = match.end()
    return None


def timezone_error(name: str) -> str | None:
    """None if Go's ``time.LoadLocation(name)`` succeeds ("" and "UTC" are UTC, "Local" the
    local zone), else its error text ``unknown time zone <name>``."""
    if name in ("", "UTC", "Local"):
        return None
    if name.startswith("/") or ".." in name or "\\" in name:
        return f"unknown time zone {name}"
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def schedule_error(spec: str) -> str | None:
    """robfig/cron v3's ParseStandard error for ``spec`` (None when it parses)."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, eq = spec.find(" "), spec.find("=")
        if space < 0:
            return f"provided bad location {spec[eq + 1:]}: missing schedule after the location"
        location = spec[eq + 1:space]
        bad = timezone_error(location)
        if bad is not None:
            return f"provided bad location {location}: {bad}"
        spec = spec[space:].strip()
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return None
        if spec.startswith("@every "):
            bad = go_duration_error(spec[len("@every "):])
            return None if bad is None else f"failed to parse duration {spec}: {bad}"
        return f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    try:
        for field, (low, high, names) in zip(fields, _BOUNDS, strict=True):
            for expr in (part for part in field.split(",") if part):
                _check_range(expr, low, high, names)
    except _CronError as err:
        return str(err)
    return None
