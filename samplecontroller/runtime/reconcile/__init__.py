"""Reconcile: the contract between a controller and the code that drives state (pkg/reconcile).

A ``Reconciler`` gets a ``Request`` (namespace/name, no object: read it from the cache) and
returns a ``Result`` or raises. The controller then:

- raises ``TerminalError`` (or ``PermanentError``, kopf's name for it): logged, counted as an
  error, never retried;
- raises ``TemporaryError(msg, delay=s)`` (kopf's): logged, counted as an error and a retry,
  requeued after ``s`` seconds (``delay=None``: the rate limiter's backoff);
- raises anything else: logged once ("Reconciler error"), requeued with the rate limiter's backoff;
- ``Result(requeue_after=s)`` with s > 0: the backoff is forgotten and the request comes back
  after ``s`` seconds;
- ``Result(requeue=True)``: requeued with backoff (without counting as an error);
- otherwise: the backoff is forgotten.
Requests are hashable, so a request already waiting in the queue is not added twice.

An ``AsyncReconciler`` (``async def reconcile(self, request) -> Result``) has the same contract;
the controller awaits it on an event loop (see ``runtime.controller``). ``is_async(reconciler)``
tells the two apart by ``reconcile`` being a coroutine function. A sync ``reconcile`` that
returns a coroutine (an ``async`` helper called without ``await``) is a bug:
``check_result`` turns it into a ``TypeError`` naming the fix.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol


class Request(NamedTuple):
    """What to reconcile: an object's namespace (empty when cluster-scoped) and name."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    """What the controller does after a successful reconcile (see the module docstring)."""

    requeue: bool = False
    requeue_after: float = 0.0

    def is_zero(self) -> bool:
        """True when the result asks for nothing (no requeue, no requeue-after)."""
        return not self.requeue and self.requeue_after <= 0


class TerminalError(Exception):
    """An error that retrying cannot fix: the request is not requeued."""

    def __init__(self, cause: BaseException | str) -> None:
        super().__init__(str(cause))
        self.cause = cause if isinstance(cause, BaseException) else None


class PermanentError(TerminalError):
    """kopf's ``PermanentError``: retrying cannot fix it. A ``TerminalError``: a reconciler's
    request is not requeued; a daemon ends (not restarted); a timer waits for its next tick."""

    def __init__(self, message: BaseException | str = "") -> None:
        super().__init__(message)


class TemporaryError(Exception):
    """kopf's ``TemporaryError``: try again after ``delay`` seconds (kopf's default, 60).

    A reconciler's request comes back after ``delay`` (counted as an error and as a retry, so
    ``context.current().retries`` grows); a daemon or timer is called again after ``delay``.
    ``delay=None`` uses the usual backoff instead (the rate limiter's, or the daemon's)."""

    def __init__(self, message: str = "", delay: float | None = 60.0) -> None:
        super().__init__(message)
        if delay is not None and delay < 0:
            raise ValueError("a TemporaryError's delay must not be negative")
        self.delay = delay


def is_terminal(err: BaseException) -> bool:
    """True when ``err`` or one of its causes is a ``TerminalError``."""
    seen: BaseException | None = err
    depth = 0
    while seen is not None and depth < 32:
        if isinstance(seen, TerminalError):
            return True
        seen = seen.__cause__ or seen.__context__
        depth += 1
    return False


class Reconciler(Protocol):
    """Anything with ``reconcile(request) -> Result``."""

    def reconcile(self, request: Request) -> Result:
        """Make the world match the object named by ``request``; raise to retry with backoff.

        Called again for the same request only after this call returned; must give the same outcome when
        called twice (level-based).
        """


class AsyncReconciler(Protocol):
    """Anything with ``async def reconcile(request) -> Result``."""

    async def reconcile(self, request: Request) -> Result:
        """Make the world match the object named by ``request``; raise to retry with backoff. Awaited on
        the manager's event loop; same contract as ``Reconciler.reconcile``."""


def is_async(reconciler: Any) -> bool:
    """True when ``reconciler.reconcile`` is a coroutine function (``async def``)."""
    return inspect.iscoroutinefunction(getattr(reconciler, "reconcile", None))


def check_result(reconciler: Any, result: Any) -> Result:
    """``result`` of a sync ``reconcile``, or a TypeError naming the fix when it is not a Result
    (a coroutine is closed first, so Python does not also warn that it was never awaited)."""
    if isinstance(result, Result):
        return result
    name = f"{type(reconciler).__name__}.reconcile"
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if close is not None:
            close()
        raise TypeError(f"{name} returned a coroutine that was never awaited: declare it "
                        f"'async def reconcile(self, request) -> Result' (the controller then awaits it on "
                        f"the manager's event loop), or await the coroutine inside it")
    raise TypeError(f"{name} returned {type(result).__name__}, not a reconcile.Result")


class Func:
    """Adapts a plain function ``fn(request) -> Result | None`` to a ``Reconciler``.

    An ``async def`` function is refused (TypeError): use ``AsyncFunc``."""

    def __init__(self, fn: Callable[[Request], Result | None]) -> None:
        if inspect.iscoroutinefunction(fn):
            raise TypeError(f"reconcile.Func got the coroutine function {getattr(fn, '__name__', fn)!r}: "
                            "use reconcile.AsyncFunc for async functions")
        self.fn = fn

    def reconcile(self, request: Request) -> Result:
        """Call the function; ``None`` means ``Result()``."""
        return self.fn(request) or Result()


class AsyncFunc:
    """Adapts ``async def fn(request) -> Result | None`` to an ``AsyncReconciler``."""

    def __init__(self, fn: Callable[[Request], Awaitable[Result | None]]) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"reconcile.AsyncFunc needs an async function, got {getattr(fn, '__name__', fn)!r}: "
                            "use reconcile.Func for plain functions")
        self.fn = fn

    async def reconcile(self, request: Request) -> Result:
        """Await the function; ``None`` means ``Result()``."""
        return await self.fn(request) or Result()


__all__ = ["AsyncFunc", "AsyncReconciler", "Func", "PermanentError", "Reconciler", "Request", "Result",
           "TemporaryError", "TerminalError", "check_result", "is_async", "is_terminal"]
