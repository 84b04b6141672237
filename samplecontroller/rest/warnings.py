"""Warnings from the API server (the ``Warning`` response header), as client-go handles them.

kube-apiserver sends ``Warning: 299 - "<text>"`` (several comma-separated, or several headers)
for deprecated APIs, unknown fields under ``fieldValidation=Warn``, admission warnings and so on.
``parse_warning_header(value)`` is client-go's ``ParseWarningHeader`` for one header value: the
(code, agent, text) of each warning, in order; a malformed value ends the parse there (what was
read before it is kept). ``parse(values)`` gives the texts of the code-299 warnings of several
values (client-go's ``ParseWarningHeaders``).

A ``WarningHandler`` is client-go's ``rest.WarningHandler``: ``handle_warning_header(code, agent,
text)`` is called once per warning of every response. A ``RESTClient`` (and so an
``AsyncRESTClient``, which shares it) hands them to its own ``warning_handler`` when set, else to
the process default: ``set_default_warning_handler(handler)`` is client-go's
``rest.SetDefaultWarningHandler``. The default ``WarningLogger`` logs each distinct text once at
warning level (client-go's default logs every one; kubectl's deduplicates: once is enough for a
controller that repeats the same request); ``NoWarnings`` drops them; ``WarningWriter`` writes
``Warning: <text>`` lines as kubectl does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Protocol, TextIO

from samplecontroller.logs import get_logger

__all__ = ["MAX_REMEMBERED", "NoWarnings", "WarningHandler", "WarningLogger", "WarningWriter",
           "default_warning_handler", "handle_warning_headers", "header_values", "parse", "parse_warning_header",
           "set_default_warning_handler"]

log = get_logger("rest.warnings")

MAX_REMEMBERED = 1000
"""Distinct texts a WarningLogger remembers (beyond it, texts are logged again)."""


class WarningHandler(Protocol):
    """What a RESTClient hands each warning of a response to (client-go's rest.WarningHandler)."""

    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Called once per warning of a response, in order."""


class WarningLogger:
    """Logs each distinct code-299 warning text once (at warning level)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()

    def handle_warning_header(self, code: int, agent: str, text: str) -> None:
        """Log ``text`` unless it was logged already (code 299 only)."""
        if code != 299 or not text:
            return
        with self._lock:
            if text in self._seen:
                return
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            self._seen.add(text)
        log.warning("Warning from the API server", warning=text)


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
        """Write ``Warning: text`` to ``out`` (once per text when deduplicating; code 299 only)."""
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


def header_values(headers: Any) -> list[str]:
    """Every ``Warning`` header value of a response's headers (http.client, urllib3, aiohttp or a dict)."""
    if headers is None:
        return []
    for getter in ("get_all", "getlist", "getall"):
        fn = getattr(headers, getter, None)
        if fn is not None:
            return list(fn("Warning", None) or []) if getter != "getlist" else list(fn("Warning"))
    value = headers.get("Warning")
    return [value] if value else []


def handle_warning_headers(headers: Any, handler: WarningHandler | None = None) -> None:
    """Hand every warning of ``headers`` to ``handler`` (None: the default), in order."""
    values = header_values(headers)
    if not values:
        return
    target = handler if handler is not None else _default
    for value in values:
        warnings: list[tuple[int, str, str]] = []
        complete = _parse_one(value, warnings)
        for code, agent, text in warnings:
            target.handle_warning_header(code, agent, text)
        if not complete:
            return


def parse_warning_header(value: str) -> list[tuple[int, str, str]]:
    """(code, agent, text) of each warning in one ``Warning`` header value, up to a malformed one."""
    out: list[tuple[int, str, str]] = []
    _parse_one(value, out)
    return out


def parse(values: Iterable[str]) -> list[str]:
    """The texts of the 299 warnings in ``values`` (see the module docstring)."""
    found: list[tuple[int, str, str]] = []
    for value in values:
        if not _parse_one(value, found):
            break
    return [text for code, _, text in found if code == 299]


def _parse_one(value: str, out: list[tuple[int, str, str]]) -> bool:
    """Append the warnings of one header value (``code SP agent SP "text" [SP "date"]``, comma
    separated); False when it is malformed."""
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in " ,":
            i += 1
        if i >= n:
            return True
        code_end = value.find(" ", i)
        if code_end < 0 or not value[i:code_end].isdigit() or code_end - i != 3:
            return False
        code = int(value[i:code_end])
        agent_end = value.find(" ", code_end + 1)
        if agent_end < 0:
            return False
        agent = value[code_end + 1:agent_end]
        text, i = _quoted(value, agent_end + 1)
        if text is None:
            return False
        out.append((code, agent, text))
        while i < n and value[i] == " ":
            i += 1
        if i < n and value[i] == '"':  # an optional warn-date
            _, i = _quoted(value, i)
            if i < 0:
                return False
            while i < n and value[i] == " ":
                i += 1
        if i < n and value[i] != ",":
            return False


def _quoted(value: str, i: int) -> tuple[str | None, int]:
    """The quoted-string at ``value[i]`` (backslash escapes undone) and the index after it."""
    if i >= len(value) or value[i] != '"':
        return None, -1
    out: list[str] = []
    i += 1
    while i < len(value):
        char = value[i]
        if char == "\\" and i + 1 < len(value):
            out.append(value[i + 1])
            i += 2
            continue
        if char == '"':
            return "".join(out), i + 1
        out.append(char)
        i += 1
    return None, -1
