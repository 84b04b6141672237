"""Warnings from the API server (the ``Warning`` response header), as client-go handles them.

kube-apiserver sends ``Warning: 299 - "<text>"`` (several comma-separated, or several headers)
for deprecated APIs, unknown fields under ``fieldValidation=Warn``, admission warnings and so on.
``parse(values)`` is client-go's ``ParseWarningHeaders`` (k8s.io/apimachinery/pkg/util/net):
the texts of the code-299 warnings, in order; a malformed value ends the parse there (what was
read before it is kept). A ``RESTClient`` (and so an ``AsyncRESTClient``, which shares it) hands
every warning text of every response to its ``warning_handler``; the default ``WarningLogger``
logs each distinct text once per client at warning level (client-go's default logs every one;
kubectl's deduplicates: once is enough for a controller that repeats the same request).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from samplecontroller.logs import get_logger

__all__ = ["MAX_REMEMBERED", "WarningHandler", "WarningLogger", "header_values", "parse"]

log = get_logger("rest.warnings")

WarningHandler = Callable[[str], None]
MAX_REMEMBERED = 1000
"""Distinct texts a WarningLogger remembers (beyond it, texts are logged again)."""


def header_values(headers: Any) -> list[str]:
    """Every ``Warning`` header value of a response's headers (http.client, urllib3 or aiohttp)."""
    for getter in ("get_all", "getlist", "getall"):
        fn = getattr(headers, getter, None)
        if fn is not None:
            return list(fn("Warning", None) or []) if getter != "getlist" else list(fn("Warning"))
    value = headers.get("Warning")
    return [value] if value else []


def parse(values: Iterable[str]) -> list[str]:
    """The texts of the 299 warnings in ``values`` (see the module docstring)."""
    texts: list[str] = []
    for value in values:
        if not _parse_one(value, texts):
            break
    return texts


def _parse_one(value: str, texts: list[str]) -> bool:
    """Append the 299 texts of one header value (``code SP agent SP "text" [SP "date"]``, comma
    separated); False when it is malformed."""
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in " ,":
            i += 1
        if i >= n:
            return True
        code_end = value.find(" ", i)
        if code_end < 0 or not value[i:code_end].isdigit():
            return False
        code = value[i:code_end]
        agent_end = value.find(" ", code_end + 1)
        if agent_end < 0:
            return False
        text, i = _quoted(value, agent_end + 1)
        if text is None:
            return False
        if code == "299":
            texts.append(text)
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


class WarningLogger:
    """Logs each distinct warning text once (at warning level)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()

    def __call__(self, text: str) -> None:
        with self._lock:
            if text in self._seen:
                return
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            self._seen.add(text)
        log.warning("Warning from the API server", warning=text)
