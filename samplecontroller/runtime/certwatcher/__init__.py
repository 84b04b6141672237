"""A serving certificate reloaded when its files change (controller-runtime's pkg/certwatcher).

``CertWatcher(cert_path, key_path)`` loads the pair into ``context`` (a server-side
``ssl.SSLContext``, TLS 1.2 or later). ``poll()`` compares the files' modification time, size
and inode with the last successful load and loads them again when they differ: connections
accepted afterwards present the new certificate; those already open keep theirs. A pair that
does not load (the key is written after the certificate, a half-written file) keeps the old
certificate and is tried again on the next poll, as Go's watcher keeps serving the last good
one. ``watch(stop, interval)`` polls until ``stop`` is set; the webhook server polls on its
own loop (every ``Server.cert_poll_interval`` seconds).

``CertWatcher`` raises ``FileNotFoundError`` (naming the files) when the pair is missing at
start, and ``ssl.SSLError`` when it does not load at start.
"""

from __future__ import annotations

import os
import ssl
import threading
from pathlib import Path

from samplecontroller.logs import get_logger

__all__ = ["DEFAULT_POLL_INTERVAL", "CertWatcher"]

log = get_logger("runtime.certwatcher")

DEFAULT_POLL_INTERVAL = 1.0


def _signature(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, st.st_ino


class CertWatcher:
    """See the module docstring."""

    def __init__(self, cert_path: str | Path, key_path: str | Path) -> None:
        self.cert_path = Path(cert_path)
        self.key_path = Path(key_path)
        if not self.cert_path.exists() or not self.key_path.exists():
            raise FileNotFoundError(f"serving certificate not found: expected {self.cert_path} and {self.key_path}")
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._loaded: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None
        self.reloads = 0
        self._load()

    def _signatures(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        return _signature(self.cert_path), _signature(self.key_path)

    def _load(self) -> None:
        before = self._signatures()
        self.context.load_cert_chain(str(self.cert_path), str(self.key_path))
        self._loaded = before

    def poll(self) -> bool:
        """Reload the pair if its files changed since the last load; whether it was reloaded."""
        try:
            if self._signatures() == self._loaded:
                return False
            self._load()
        except (OSError, ssl.SSLError) as err:
            log.error("Cannot reload the serving certificate; keeping the current one",
                      cert=str(self.cert_path), error=str(err))
            return False
        self.reloads += 1
        log.info("Reloaded the serving certificate", cert=str(self.cert_path))
        return True

    def watch(self, stop: threading.Event, interval: float = DEFAULT_POLL_INTERVAL) -> None:
        """``poll()`` every ``interval`` seconds until ``stop`` is set."""
        while not stop.wait(interval):
            self.poll()
