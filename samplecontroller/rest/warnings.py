"""Warnings the server sends in ``Warning`` response headers (client-go's rest.WarningHandler).

kube-apiserver adds ``Warning: 299 - "message"`` headers (RFC 7234) for deprecated APIs, admission
webhooks' and ValidatingAdmissionPolicies' warnings, unknown fields... client-go hands each to the
configured ``WarningHandler``: by default ``WarningLogger`` (logged), ``NoWarnings`` drops them,
``WarningWriter`` writes each once to a stream (kubectl's ``Warning: ...`` lines).

``set_default_warning_handler(handler)`` is client-go's ``rest.SetDefaultWarningHandler``; a
``RESTClient`` uses its own ``warning_handler`` when set, else the default.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any, Protocol, TextIO

from samplecontroller.logs import get_logger

__all__ = ["NoWarnings", "WarningHandler", "WarningLogger", "WarningWriter", "default_warning_handler",
           "handle_warning_headers", "parse_warning_header", "set_default_warning_handler"]

log = get_logger("rest.warnings")

# warn-code SP warn-agent SP warn-text [SP warn-date]; client-go keeps code 299 only.
_WARNING = re.compile(r'\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)')


class WarningHandler(Protocol):
    """What a RESTClient hands each ``Warning`` header of a response to (client-go's rest.WarningHandler)."""
    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Called once per warning of a response (``code`` 299)."""


class WarningLogger:
    """Logs each warning (client-go's default)."""

    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Log ``text`` at warning level (code 299 only)."""
        if code == 299 and text:
            log.warning(text)


class NoWarnings:
    """Drops every warning."""

    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Ignore the warning."""
        return None


class WarningWriter:
    """Writes ``Warning: <text>`` lines to ``out`` (each text once with ``deduplicate``), as kubectl does."""

    def __init__(self, out: TextIO, deduplicate: bool = True) -> None:
        self.out = out
        self.deduplicate = deduplicate
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.count = 0

    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Write ``Warning: text`` to ``out`` (once per text when deduplicating)."""
        if code != 299 or not text:
            return
        with self._lock:
            if self.deduplicate and text in self._seen:
                return
            self._seen.add(text)
            self.count += 1
            self.out.write(f"Warning: {text}\n")


_default: WarningHandler = WarningLogger()


def set_default_warning_handler(handler: WarningHandler | None) -> None:
    """The handler of every RESTClient without its own (None: ``NoWarnings``)."""
    global _default
    _default = handler if handler is not None else NoWarnings()


def default_warning_handler() -> WarningHandler:
    """The handler of every RESTClient without its own (see ``set_default_warning_handler``)."""
    return _default


def parse_warning_header(value: str) -> list[tuple[int, str, str]]:
    """(code, agent, text) of each warning in one ``Warning`` header value; malformed ones are skipped."""
    out = []
    pos = 0
    while pos < len(value):
        m = _WARNING.match(value, pos)
        if m is None:
            break
        text = re.sub(r"\\(.)", r"\1", m.group(3))
        out.append((int(m.group(1)), m.group(2), text))
        pos = m.end()
    return out


def header_values(headers: Any) -> Iterable[str]:
    """Every ``Warning`` value of a response's headers (http.client or urllib3)."""
    for getter in ("get_all", "getlist"):
        fn = getattr(headers, getter, None)
        if fn is not None:
            return fn("Warning") or ()
    value = headers.get("Warning") if headers is not None else None
    return [value] if value else ()


def handle_warning_headers(headers: Any, handler: WarningHandler | None = None) -> None:
    """Hand every warning of ``headers`` to ``handler`` (None: the default)."""
    target = handler if handler is not None else _default
    for value in header_values(headers):
        for code, agent, text in parse_warning_header(value):
            target.handle_warning_header(code, agent, text)
