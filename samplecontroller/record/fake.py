"""``FakeRecorder``: records "Type Reason Message" strings in a queue, like client-go's FakeRecorder."""

from __future__ import annotations

import queue
from collections.abc import Mapping
from typing import Any


class FakeRecorder:
    """``events`` holds one string per event; when full, further events are dropped (never blocks)."""

    def __init__(self, buffer_size: int = 100, *, include_object: bool = False) -> None:
        self.events: queue.Queue[str] = queue.Queue(buffer_size)
        self.include_object = include_object

    def _put(self, obj: Any, text: str) -> None:
        if self.include_object:
            from samplecontroller.apimachinery import meta

            text += f" involvedObject{{kind={meta.get_kind(obj)},apiVersion={meta.get_api_version(obj)}}}"
        try:
            self.events.put_nowait(text)
        except queue.Full:
            pass

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        self._put(obj, f"{event_type} {reason} {message}")

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def annotated_eventf(self, obj: Any, annotations: Mapping[str, str], event_type: str, reason: str,
                         fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)
