"""The per-reconcile logger (controller-runtime's ``log.FromContext(ctx)``).

While a controller reconciles a request it binds a logger carrying ``controller``,
``controllerGroup``, ``controllerKind``, the object (``namespace``, ``name``) and a fresh
``reconcileID`` (a UUID, as controller-runtime's); ``from_context()`` returns it inside the
reconciler (and anything it calls on that thread), else the ``runtime`` logger. ``with_values``
binds more key/values, as ``logr.Logger.WithValues``.

    def reconcile(self, request):
        log = runtime_log.from_context()
        # ... controller="cronjob" namespace="default" name="x" reconcileID="..."
        log.info("reconciling")
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import uuid
from collections.abc import Iterator
from typing import Any

from samplecontroller.logs import KVLogger, _emit

__all__ = ["BoundLogger", "from_context", "reconcile_scope"]


class BoundLogger(KVLogger):
    """A KVLogger whose every record carries ``values`` (then the call's own key/values)."""

    def __init__(self, logger: logging.Logger, values: dict[str, Any] | None = None) -> None:
        super().__init__(logger)
        self.values = dict(values or {})

    def _log(self, level: int, msg: str, kv: dict[str, Any]) -> None:
        if self.logger.isEnabledFor(level):
            _emit(self.logger, level, msg, {**self.values, **kv})

    def with_values(self, **kv: Any) -> BoundLogger:
        """A logger whose lines also carry ``kv``."""
        return BoundLogger(self.logger, {**self.values, **kv})


_ROOT = BoundLogger(logging.getLogger("runtime"))
_current: contextvars.ContextVar[BoundLogger | None] = contextvars.ContextVar("samplecontroller_reconcile_logger",
                                                                              default=None)


def from_context() -> BoundLogger:
    """The logger of the reconcile running on this thread (or task), else the ``runtime`` logger."""
    return _current.get() or _ROOT


@contextlib.contextmanager
def reconcile_scope(controller: str, request: Any, group: str = "", kind: str = "") -> Iterator[BoundLogger]:
    """Bind the per-reconcile logger for the duration of one reconcile of ``request``."""
    values: dict[str, Any] = {"controller": controller}
    if kind:
        values.update(controllerGroup=group, controllerKind=kind)
    namespace = getattr(request, "namespace", "")
    if namespace:
        values["namespace"] = namespace
    values["name"] = getattr(request, "name", str(request))
    values["reconcileID"] = str(uuid.uuid4())
    logger = BoundLogger(logging.getLogger(f"runtime.controller.{controller}"), values)
    token = _current.set(logger)
    try:
        yield logger
    finally:
        _current.reset(token)
