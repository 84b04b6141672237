"""Reconcile: the contract between a controller and the code that drives state (pkg/reconcile).

A ``Reconciler`` gets a ``Request`` (namespace/name, no object: read it from the cache) and
returns a ``Result`` or raises. The controller then:

- raises ``TerminalError``: logged, counted as an error, never retried;
- raises anything else: requeued with the rate limiter's backoff;
- ``Result(requeue_after=s)`` with s > 0: the backoff is forgotten and the request comes back
  after ``s`` seconds;
- ``Result(requeue=True)``: requeued with backoff (without counting as an error);
- otherwise: the backoff is forgotten.
Requests are hashable, so a request already waiting in the queue is not added twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol


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


class Func:
    """Adapts a plain function ``fn(request) -> Result | None`` to a ``Reconciler``."""

    def __init__(self, fn: Callable[[Request], Result | None]) -> None:
        self.fn = fn

    def reconcile(self, request: Request) -> Result:
        """Call the function; ``None`` means ``Result()``."""
        return self.fn(request) or Result()


__all__ = ["Func", "Reconciler", "Request", "Result", "TerminalError", "is_terminal"]
