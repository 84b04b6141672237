"""Structured key=value logging on stderr, like klog's InfoS / ErrorS.

``get_logger(name)`` returns a ``KVLogger`` whose methods take a message and keyword pairs::

    log = get_logger("controller")
    log.info("Starting workers", count=2)
    # time=2026-11-22T20:40:01.123Z level=info logger=controller \\
    #   msg="Starting workers" count=2

Values are quoted when they contain spaces, quotes or '='. ``setup(level)`` installs the
formatter on the root logger once; calling it again only changes the level.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, TextIO

_KV_ATTR = "kv"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _quote(value: Any) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' "=\t\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


class KeyValueFormatter(logging.Formatter):
    """Formats a record as one line of key=value pairs."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one ``time=... level=... logger=... msg=... key=value`` line."""
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        parts = [
            f"time={ts}",
            f"level={record.levelname.lower()}",
            f"logger={record.name}",
            f"msg={_quote(record.getMessage())}",
        ]
        kv = getattr(record, _KV_ATTR, None)
        if isinstance(kv, dict):
            parts.extend(f"{k}={_quote(v)}" for k, v in kv.items())
        if record.exc_info and record.levelno >= logging.ERROR:
            exc = record.exc_info[1]
            parts.append(f"error={_quote(f'{type(exc).__name__}: {exc}')}")
        return " ".join(parts)


def _emit(logger: logging.Logger, level: int, msg: str, kv: dict[str, Any]) -> None:
    """Log the record ``logger.log(level, msg, extra=...kv, stacklevel=3)`` makes from inside a
    KVLogger's ``_log`` (it names the caller of ``debug``/``info``/...), without logging's
    findCaller: a stack walk with a path check per frame, the record's dearest part."""
    caller = sys._getframe(3)
    logger.handle(logger.makeRecord(logger.name, level, caller.f_code.co_filename, caller.f_lineno, msg, (), None,
                                    caller.f_code.co_name, {_KV_ATTR: kv}))


class KVLogger:
    """A thin wrapper over a stdlib logger that takes key=value pairs as keyword arguments."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def _log(self, level: int, msg: str, kv: dict[str, Any]) -> None:
        if self.logger.isEnabledFor(level):
            _emit(self.logger, level, msg, kv)

    def debug(self, msg: str, **kv: Any) -> None:
        """Log ``msg`` and the ``key=value`` pairs at debug level."""
        self._log(logging.DEBUG, msg, kv)

    def info(self, msg: str, **kv: Any) -> None:
        """Log ``msg`` and the ``key=value`` pairs at info level."""
        self._log(logging.INFO, msg, kv)

    def warning(self, msg: str, **kv: Any) -> None:
        """Log ``msg`` and the ``key=value`` pairs at warning level."""
        self._log(logging.WARNING, msg, kv)

    def error(self, msg: str, **kv: Any) -> None:
        """Log ``msg`` and the ``key=value`` pairs at error level."""
        self._log(logging.ERROR, msg, kv)


def get_logger(name: str) -> KVLogger:
    """The key=value logger named ``name`` (a ``logging.Logger`` underneath)."""
    return KVLogger(logging.getLogger(name))


def parse_level(value: str) -> int:
    """A level name (debug, info, warning, error) or a klog-style verbosity number (0 = info, >=4 = debug)."""
    v = value.strip().lower()
    if v in LEVELS:
        return LEVELS[v]
    if v.isdigit():
        return logging.DEBUG if int(v) >= 4 else logging.INFO
    raise ValueError(f"unknown log level {value!r}: use debug, info, warning, error or a number 0-10")


def setup(level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send every log record to ``stream`` (stderr) as key=value lines, at ``level``."""
    root = logging.getLogger()
    root.setLevel(level)
    for handler in root.handlers:
        if isinstance(handler.formatter, KeyValueFormatter):
            return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    root.addHandler(handler)
