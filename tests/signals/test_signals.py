"""Signal handling: a real subprocess gets SIGTERM/SIGINT; the reusable handler in-process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from samplecontroller.signals import SignalHandler

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import sys, time
    from samplecontroller.signals import setup_signal_handler
    stop = setup_signal_handler()
    try:
        setup_signal_handler()
    except RuntimeError as err:
        print("second call:", err, flush=True)
    print("ready", flush=True)
    stop.wait(20)
    print("stopped" if stop.is_set() else "timeout", flush=True)
    if sys.argv[1] == "linger":
        time.sleep(20)
    """
)


def start_child(mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("second call:") and "only be called once" in first
    assert proc.stdout.readline() == "ready\n"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_first_signal_sets_stop(sig: signal.Signals) -> None:
    proc = start_child("exit")
    proc.send_signal(sig)
    # the child gives up by itself after 20 s (prints "timeout"): waiting longer than that tells a
    # lost signal from a slow machine instead of failing on a wall-clock limit
    out, _ = proc.communicate(timeout=60)
    assert out == "stopped\n"
    assert proc.returncode == 0


def test_second_signal_exits_with_status_1() -> None:
    proc = start_child("linger")
    assert proc.stdout is not None
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "stopped\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert "again, exiting now" in err


def test_reusable_handler_in_process() -> None:
    seconds: list[int] = []
    before = signal.getsignal(signal.SIGUSR1)
    with SignalHandler([signal.SIGUSR1], on_second=seconds.append) as handler:
        assert not handler.stop.is_set()
        signal.raise_signal(signal.SIGUSR1)
        assert handler.stop.is_set() and seconds == []
        signal.raise_signal(signal.SIGUSR1)
        assert seconds == [signal.SIGUSR1]
        with pytest.raises(RuntimeError, match="already installed"):
            handler.install()
    assert signal.getsignal(signal.SIGUSR1) == before


def test_install_outside_main_thread_is_a_clear_error() -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            SignalHandler([signal.SIGUSR2]).install()
        except RuntimeError as err:
            errors.append(err)

    t = threading.Thread(target=run)
    t.start()
    t.join(5)
    assert len(errors) == 1 and "main thread" in str(errors[0])


BLOCKED_MAIN = textwrap.dedent(
    """
    import signal, threading
    from samplecontroller.signals import run_handling_signals, setup_signal_handler
    stop = setup_signal_handler()
    other = threading.Thread(target=threading.Event().wait, daemon=True)
    other.start()
    # From now on the kernel delivers SIGTERM to the other thread, never to the main one.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    print("ready", flush=True)
    print(run_handling_signals(lambda: stop.wait() and "stopped"), flush=True)
    """
)


def test_a_signal_delivered_to_another_thread_still_stops_the_main_body() -> None:
    """A main thread blocked in ``Event.wait()`` would sleep through such a signal for good."""
    proc = subprocess.Popen([sys.executable, "-c", BLOCKED_MAIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert (proc.returncode, out.strip()) == (0, "stopped"), err


def test_run_handling_signals_returns_and_raises_what_the_body_does() -> None:
    from samplecontroller.signals import run_handling_signals

    assert run_handling_signals(lambda: 7) == 7
    with pytest.raises(ValueError, match="body"):
        run_handling_signals(lambda: (_ for _ in ()).throw(ValueError("body")))
