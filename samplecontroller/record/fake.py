"""``FakeRecorder``: records "Type Reason Message" strings in a queue, like client-go's FakeRecorder.

Strings are ``f"{type} {reason} {message}"``, followed (as in Go) by
`` involvedObject{kind=K,apiVersion=V}`` when ``include_object`` is set, and by
`` map[k1:v1 k2:v2]`` (keys sorted, Go's fmt of a map) for ``annotated_eventf`` with annotations.

Unlike Go's channel, a full queue never blocks the caller: the event is dropped and counted in
``dropped`` (a blocked controller thread in a test would hang it instead of failing it).
``FakeRecorder(None)`` discards every event (Go's nil channel); ``FakeRecorder(0)`` drops them all
(and counts them).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Mapping
from typing import Any

from samplecontroller.apimachinery import meta
from samplecontroller.record.event import format_message


def _annotations_string(annotations: Mapping[str, str] | None) -> str:
    if not annotations:
        return ""
    return " map[" + " ".join(f"{k}:{annotations[k]}" for k in sorted(annotations)) + "]"


class FakeRecorder:
    """An ``EventRecorder`` for tests. Thread-safe; never blocks."""

    def __init__(self, buffer_size: int | None = 100, *, include_object: bool = False) -> None:
        if buffer_size is not None and buffer_size < 0:
            raise ValueError(f"buffer_size must be >= 0, got {buffer_size}")
        self.events: queue.Queue[str] = queue.Queue(buffer_size or 1)
        self._discard = buffer_size is None
        self._unbuffered_drop = buffer_size == 0
        self.include_object = include_object
        self._lock = threading.Lock()
        self.dropped = 0

    def _write(self, obj: Any, annotations: Mapping[str, str] | None, text: str) -> None:
        if self._discard:
            return
        if self.include_object:
            text += f" involvedObject{{kind={meta.get_kind(obj)},apiVersion={meta.get_api_version(obj)}}}"
        text += _annotations_string(annotations)
        try:
            if self._unbuffered_drop:
                raise queue.Full
            self.events.put_nowait(text)
        except queue.Full:
            with self._lock:
                self.dropped += 1

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        self._write(obj, None, f"{event_type} {reason} {message}")

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self._write(obj, None, f"{event_type} {reason} {format_message(fmt, args)}")

    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None:
        self._write(obj, annotations, f"{event_type} {reason} {format_message(fmt, args)}")

    def drain(self) -> list[str]:
        """Everything recorded so far, oldest first, removed from ``events``."""
        out: list[str] = []
        while True:
            try:
                out.append(self.events.get_nowait())
            except queue.Empty:
                return out
