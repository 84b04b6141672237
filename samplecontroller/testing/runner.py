"""Run an operator inside a test, as ``kopf.testing.KopfRunner`` does.

    from samplecontroller.testing.runner import OperatorRunner

    # a Manager the test built (controllers registered), against the embedded API server
    with OperatorRunner(mgr) as runner:
        clientset.create(...)
        wait_for(...)
    assert runner.exit_code == 0 and runner.exception is None
    assert "Starting workers" in runner.output

    # a whole operator's main: any ``main(argv) -> int`` that ends in ``runtime.cmd.main``
    argv = ["--kubeconfig", str(kubeconfig)]
    with OperatorRunner.for_main(myoperator.main, argv) as runner:
        runner.manager  # the Manager its main built
        ...

Contract:
- ``__enter__`` starts the operator on a thread of this process and returns once its Manager
  leads (its controllers run) or the operator has ended (a bad flag, an unreachable server: see
  ``exit_code``/``output``); waiting longer than ``startup_timeout`` raises TimeoutError.
- Every log record of the process while it runs is captured, one ``samplecontroller.logs``
  line each, in ``output`` (also ``records``), from ``log_level`` up (default info). The lines
  ``main`` prints for a user mistake are in ``output`` too.
- ``__exit__`` stops the operator as a SIGTERM would (reconciles in progress may finish) and
  waits for it; RuntimeError if it has not stopped within ``shutdown_timeout``. With
  ``reraise`` (the default) an exception the operator raised is raised there (a test's own
  exception wins); ``exception`` holds it either way.
- ``exit_code``: ``main``'s return value (0 after a clean stop; SystemExit's code for a bad
  flag); for a Manager 0, or 1 when ``start`` raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from samplecontroller.logs import KeyValueFormatter, parse_level

if TYPE_CHECKING:
    from samplecontroller.runtime.cmd import Controls
    from samplecontroller.runtime.manager import Manager

__all__ = ["OperatorRunner"]


class _Capture(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.setFormatter(KeyValueFormatter())
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []
        self._records_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        with self._records_lock:
            self.records.append(record)
            self.lines.append(line)


class OperatorRunner:
    """See the module docstring."""

    def __init__(self, manager: Manager | None = None, *, reraise: bool = True, log_level: str = "info",
                 startup_timeout: float = 30.0, shutdown_timeout: float = 30.0) -> None:
        self.manager = manager
        self.reraise = reraise
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self.exit_code: int | None = None
        self.exception: BaseException | None = None
        self._level = parse_level(log_level)
        self._main: Callable[[], Any] | None = None
        self._controls: Controls | None = None
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None
        self._capture = _Capture(self._level)
        self._saved_level: int | None = None

    @classmethod
    def for_main(cls, main: Callable[[Sequence[str]], int | None], argv: Sequence[str] = (), *,
                 reraise: bool = True, log_level: str = "info", startup_timeout: float = 30.0,
                 shutdown_timeout: float = 30.0) -> OperatorRunner:
        """A runner for ``main(argv)``: an operator's main that calls ``runtime.cmd.main``."""
        from samplecontroller.runtime.cmd import Controls

        runner = cls(None, reraise=reraise, log_level=log_level, startup_timeout=startup_timeout,
                     shutdown_timeout=shutdown_timeout)
        runner._controls = Controls(stop=runner._stop)
        runner._main = lambda: main(list(argv))
        return runner

    # -- what the operator did ---------------------------------------------------------------

    @property
    def output(self) -> str:
        """The captured log lines (and ``main``'s error lines), newline-separated."""
        with self._capture._records_lock:
            lines = list(self._capture.lines)
        if self._controls is not None:
            lines.extend(self._controls.errors)
        return "\n".join(lines)

    @property
    def records(self) -> list[logging.LogRecord]:
        with self._capture._records_lock:
            return list(self._capture.records)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._ended.is_set()

    # -- running -------------------------------------------------------------------------------

    def __enter__(self) -> OperatorRunner:
        if self._thread is not None:
            raise RuntimeError("an OperatorRunner runs once")
        if self.manager is None and self._main is None:
            raise ValueError("OperatorRunner needs a Manager (or use OperatorRunner.for_main)")
        root = logging.getLogger()
        self._saved_level = root.level
        if root.level == logging.NOTSET or root.level > self._level:
            root.setLevel(self._level)
        root.addHandler(self._capture)
        self._thread = threading.Thread(target=self._run, name="operator-runner", daemon=True)
        self._thread.start()
        try:
            self._wait_started()
        except BaseException:
            self._shut_down()
            raise
        return self

    def _run(self) -> None:
        try:
            if self._main is not None and self._controls is not None:
                from samplecontroller.runtime.cmd import controlled

                code = controlled(self._controls, self._main)
                self.exit_code = int(code or 0)
            elif self.manager is not None:
                self.manager.start(self._stop)
                self.exit_code = 0
        except SystemExit as err:
            self.exit_code = err.code if isinstance(err.code, int) else 1
        except BaseException as err:
            self.exception = err
            self.exit_code = 1
        finally:
            self._ended.set()

    def _wait_started(self) -> None:
        if self._controls is not None:
            if not _first(self._ended, self._controls.manager_built, timeout=self.startup_timeout):
                raise TimeoutError(f"the operator's main did not build its Manager within {self.startup_timeout:g}s")
            if self._ended.is_set():
                return
            self.manager = self._controls.manager
        assert self.manager is not None
        if not _first(self._ended, self.manager.elected(), timeout=self.startup_timeout):
            raise TimeoutError(f"the Manager did not start its controllers within {self.startup_timeout:g}s")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._shut_down()
        if self.reraise and exc is None and self.exception is not None:
            raise self.exception

    def _shut_down(self) -> None:
        self._stop.set()
        try:
            if self._thread is not None and not self._ended.wait(self.shutdown_timeout):
                raise RuntimeError(f"the operator did not stop within {self.shutdown_timeout:g}s")
        finally:
            root = logging.getLogger()
            root.removeHandler(self._capture)
            if self._saved_level is not None:
                root.setLevel(self._saved_level)


def _first(*events: threading.Event, timeout: float) -> bool:
    """Wait until one of ``events`` is set (checking every 10 ms); False on timeout."""
    deadline = time.monotonic() + timeout
    while not any(e.is_set() for e in events):
        if time.monotonic() >= deadline:
            return False
        events[0].wait(0.01)
    return True
