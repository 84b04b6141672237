"""argparse types and a parser for controller command lines (``main.py``, ``runtime.cmd``).

Each type raises ``argparse.ArgumentTypeError`` with a short reason; ``OneLineParser`` prints a
bad command line as one line ``<prog>: error: <message> (see --help)`` and exits 1, not argparse's
usage and exit 2 (a controller's user mistakes are one line and status 1).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["OneLineParser", "port", "positive_int"]


def port(value: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, got {n}")
    return n


def positive_int(value: str) -> int:
    """A whole number of at least 1."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 1."""

    def error(self, message: str) -> Any:
        """Print ``prog: error: message (see --help)`` (one line) and exit with status 1."""
        self.exit(1, f"{self.prog}: error: {message} (see --help)\n")
