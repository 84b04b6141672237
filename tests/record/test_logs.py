"""The key=value loggers' records name their caller, as ``logging``'s own ``stacklevel`` would."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from samplecontroller.logs import get_logger
from samplecontroller.runtime.log import BoundLogger


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def records() -> Iterator[_Records]:
    handler = _Records()
    logger = logging.getLogger("test-logs-caller")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)


def _log_from_here() -> int:
    get_logger("test-logs-caller").error("boom", key="value")
    return _log_from_here.__code__.co_firstlineno + 1


def _bound_log_from_here() -> int:
    BoundLogger(logging.getLogger("test-logs-caller"), {"controller": "foo"}).info("hi", name="x")
    return _bound_log_from_here.__code__.co_firstlineno + 1


def test_a_record_names_the_caller_and_carries_the_key_values(records: _Records) -> None:
    line = _log_from_here()
    bound_line = _bound_log_from_here()
    first, second = records.records
    assert (first.filename, first.lineno, first.funcName) == ("test_logs.py", line, "_log_from_here")
    assert (first.levelno, first.getMessage(), first.kv) == (logging.ERROR, "boom", {"key": "value"})  # type: ignore[attr-defined]
    assert (second.lineno, second.funcName) == (bound_line, "_bound_log_from_here")
    assert second.kv == {"controller": "foo", "name": "x"}  # type: ignore[attr-defined]
