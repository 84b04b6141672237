"""Waiting in tests on a condition, never a fixed sleep: ``wait_for`` and ``present``.

    from samplecontroller.testing import present, wait_for

    foo = wait_for(lambda: foos.get("example"))  # until it exists
    # until set and non-zero
    wait_for(lambda: foos.get("example").status.available_replicas)
    # until set, even to 0
    wait_for(lambda: present(foos.get("example").status.available_replicas))

``fn`` is polled until it returns a *set, truthy* value, which ``wait_for`` returns: ``None``,
``msgspec.UNSET`` (the generated models' "absent"), ``False``, ``0`` and empty collections
mean "not yet", and so do the errors in ``ignore`` (default: ``NotFoundError``, an object not
created yet). On timeout an ``AssertionError`` names ``what`` and the last value or error.

The trap it avoids: ``msgspec.UNSET`` is not ``None``, so ``lambda: obj.status.ready is not None``
is true at once for an unset field. Return the field itself, or ``present(field)`` (True when it
is neither ``None`` nor ``UNSET``, whatever its value).

``await wait_for_async(fn)`` is the same for async tests (``fn`` may be ``async def``).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from samplecontroller.apimachinery.errors import NotFoundError

T = TypeVar("T")

__all__ = ["present", "wait_for", "wait_for_async"]


def present(value: Any) -> bool:
    """True when ``value`` is set: neither ``None`` nor ``msgspec.UNSET`` (``0``, ``""`` and
    ``False`` are present)."""
    return value is not None and value is not msgspec.UNSET


def _done(value: Any) -> bool:
    return present(value) and bool(value)


def _timed_out(what: str | None, timeout: float, last: Any, error: BaseException | None) -> AssertionError:
    tail = f"last error: {type(error).__name__}: {error}" if error is not None else f"last value: {last!r}"
    return AssertionError(f"timed out after {timeout:g}s waiting for {what or 'the condition'} ({tail})")


def wait_for(fn: Callable[[], T | None], *, timeout: float = 10.0, what: str | None = None, interval: float = 0.02,
             ignore: tuple[type[BaseException], ...] = (NotFoundError,)) -> T:
    """Poll ``fn`` until it returns a set, truthy value and return it (see the module docstring)."""
    if inspect.iscoroutinefunction(fn):
        raise TypeError("wait_for got an async function: use 'await wait_for_async(fn)'")
    deadline = time.monotonic() + timeout
    last: Any = None
    error: BaseException | None = None
    while True:
        try:
            value = fn()
            last, error = value, None
            if value is not None and _done(value):
                return value
        except ignore as err:
            error = err
        if time.monotonic() >= deadline:
            raise _timed_out(what, timeout, last, error)
        time.sleep(interval)


async def wait_for_async(fn: Callable[[], Any], *, timeout: float = 10.0, what: str | None = None,
                         interval: float = 0.02,
                         ignore: tuple[type[BaseException], ...] = (NotFoundError,)) -> Any:
    """``wait_for`` awaited: ``fn`` may be sync or ``async def``; the loop is never blocked."""
    deadline = time.monotonic() + timeout
    last: Any = None
    error: BaseException | None = None
    while True:
        try:
            last, error = fn(), None
            if inspect.isawaitable(last):
                last = await last
            if _done(last):
                return last
        except ignore as err:
            error = err
        if time.monotonic() >= deadline:
            raise _timed_out(what, timeout, last, error)
        await asyncio.sleep(interval)
