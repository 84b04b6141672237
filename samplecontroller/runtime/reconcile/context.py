"""What a reconcile can know about itself: its retry count and a logger about its object
(kopf's ``retry`` and ``logger`` keyword arguments, and ``kopf.info``/``kopf.warn``).

Inside ``Reconciler.reconcile`` (on the controller's worker; not in code it hands to other
threads)::

    from samplecontroller.runtime.reconcile import context

    def reconcile(self, request):
        ctx = context.current()
        if ctx.retries >= 5:
            # kopf: PermanentError / retries=
            raise TerminalError("gave up after 5 retries")
        # one line, and a Normal Event
        ctx.logger.info("Creating the child", event="Creating")
        ...

- ``retries``: how many times this request has been put back with backoff since it last
  succeeded (an error, a 409, ``Result(requeue=True)``), i.e. the rate limiter's
  ``num_requeues``; 0 on a first try. A success or ``Result(requeue_after=...)`` resets it.
- ``logger``: ``debug``/``info``/``warning``/``error(msg, **kv)`` log one line whose message is
  ``[namespace/name] msg`` (``[name]`` when cluster-scoped) with ``controller=`` and the given
  pairs. With ``event="Reason"``, ``info`` also posts a Normal Event and ``warning``/``error`` a
  Warning Event (message ``msg``) about the object; ``logger.event(type, reason, message)`` only
  posts. The Event's object is the one given to ``logger.bind(obj)``, else the controller's
  ``for_`` object read from the cache; a controller built without the builder (no recorder, no
  ``for_``) refuses with RuntimeError naming what is missing, and an object no longer in the
  cache gives a warning line instead of an Event.
- ``current()`` outside a reconcile raises RuntimeError.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from samplecontroller.apimachinery import errors
from samplecontroller.logs import get_logger
from samplecontroller.runtime.reconcile import Request

log = get_logger("runtime.reconciler")

NORMAL = "Normal"
WARNING = "Warning"


class ObjectLogger:
    """A logger about one reconciled object (see the module docstring)."""

    def __init__(self, controller: str, request: Request, *, lookup: Callable[[], Any] | None = None,
                 recorder: Callable[[], Any] | None = None, bound: Any = None) -> None:
        self.controller = controller
        self.request = request
        self._lookup = lookup
        self._recorder = recorder
        self._bound = bound

    def bind(self, obj: Any) -> ObjectLogger:
        """The same logger posting its Events about ``obj``."""
        return ObjectLogger(self.controller, self.request, lookup=self._lookup, recorder=self._recorder, bound=obj)

    def _line(self, level: str, msg: str, event: str | None, event_type: str, kv: dict[str, Any]) -> None:
        getattr(log, level)(f"[{self.request}] {msg}", controller=self.controller, **kv)
        if event:
            self.event(event_type, event, msg)

    def debug(self, msg: str, **kv: Any) -> None:
        """Log ``msg`` at debug, prefixed with ``[ns/name]``; never posts an Event."""
        self._line("debug", msg, None, NORMAL, kv)

    def info(self, msg: str, *, event: str | None = None, **kv: Any) -> None:
        """Log ``msg`` at info, prefixed with ``[ns/name]``; with ``event=REASON`` also post a Normal Event."""
        self._line("info", msg, event, NORMAL, kv)

    def warning(self, msg: str, *, event: str | None = None, **kv: Any) -> None:
        """Log ``msg`` at warning, prefixed with ``[ns/name]``; with ``event=REASON`` also post a Warning Event."""
        self._line("warning", msg, event, WARNING, kv)

    def error(self, msg: str, *, event: str | None = None, **kv: Any) -> None:
        """Log ``msg`` at error, prefixed with ``[ns/name]``; with ``event=REASON`` also post a Warning Event."""
        self._line("error", msg, event, WARNING, kv)

    def event(self, event_type: str, reason: str, message: str) -> None:
        """Post an Event (``Normal`` or ``Warning``) about the object."""
        if self._recorder is None:
            raise RuntimeError(f"controller {self.controller} has no event recorder: build it with "
                               "runtime.builder (or pass recorder= to Contexts)")
        obj = self._bound
        if obj is None:
            if self._lookup is None:
                raise RuntimeError(f"controller {self.controller} has no for_ type to post Events about: "
                                   "call logger.bind(obj) first")
            try:
                obj = self._lookup()
            except errors.NotFoundError:
                log.warning(f"[{self.request}] Event not posted: the object is not in the cache",
                            controller=self.controller, reason=reason)
                return
        self._recorder().event(obj, event_type, reason, message)


@dataclass(frozen=True)
class ReconcileContext:
    """One reconcile: its controller, request, retry count and logger."""

    controller: str
    request: Request
    retries: int
    logger: ObjectLogger


_current: contextvars.ContextVar[ReconcileContext | None] = contextvars.ContextVar("samplecontroller_reconcile",
                                                                                  default=None)


def current() -> ReconcileContext:
    """The reconcile running in this thread (or task); RuntimeError outside one."""
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError("not inside a reconcile: reconcile.context.current() is only set while a controller "
                           "calls reconcile()")
    return ctx


class Contexts:
    """Makes each reconcile's context (one per controller). ``for_type``/``cache`` find the object
    Events are about; ``recorder()`` returns the EventRecorder (called on the first Event)."""

    def __init__(self, controller: str, *, for_type: type[Any] | None = None, cache: Any = None,
                 recorder: Callable[[], Any] | None = None) -> None:
        self.controller = controller
        self.for_type = for_type
        self.cache = cache
        self.recorder = recorder

    @contextlib.contextmanager
    def entered(self, request: Request, retries: int) -> Iterator[ReconcileContext]:
        """``current()`` is this request's context inside the block."""
        lookup = None
        if self.for_type is not None and self.cache is not None:
            for_type, cache = self.for_type, self.cache

            def lookup() -> Any:
                return cache.get(for_type, request.namespace, request.name)

        ctx = ReconcileContext(self.controller, request, retries,
                               ObjectLogger(self.controller, request, lookup=lookup, recorder=self.recorder))
        token = _current.set(ctx)
        try:
            yield ctx
        finally:
            _current.reset(token)


__all__ = ["NORMAL", "WARNING", "Contexts", "ObjectLogger", "ReconcileContext", "current"]
