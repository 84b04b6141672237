"""Watch bookmarks as kube-apiserver's watch cache sends them (issue 28 item 9): about once a
minute by default, and 2 s before a watch's timeout; a server started with a shorter
``bookmark_interval`` (as tests do) sends them that often."""

from __future__ import annotations

import time
from pathlib import Path

from samplecontroller.apiserver import LocalAPIServer
from samplecontroller.apiserver.__main__ import parse_args
from samplecontroller.apiserver.handlers.watch import next_bookmark_time
from tests.apiserver.conftest import Raw

CMS = "/api/v1/namespaces/default/configmaps"


def test_the_default_interval_is_kubes_minute() -> None:
    assert LocalAPIServer().bookmark_interval == 60.0
    assert parse_args([]).bookmark_interval == 60.0
    assert parse_args(["--bookmark-interval", "2s"]).bookmark_interval == 2.0


def test_next_bookmark_time_is_a_minute_on_or_two_seconds_before_the_deadline() -> None:
    assert next_bookmark_time(0.0, 1800.0, 60.0) == 60.0
    assert next_bookmark_time(0.0, 30.0, 60.0) == 28.0
    assert next_bookmark_time(28.5, 30.0, 60.0) == float("inf")  # past the pre-timeout time: no more
    assert next_bookmark_time(0.0, 1.0, 60.0) == float("inf")


def test_a_default_server_sends_no_early_bookmark_but_one_before_the_timeout(tmp_path: Path) -> None:
    with LocalAPIServer(kubeconfig_path=tmp_path / "kubeconfig") as server:
        raw = Raw(server)
        started = time.monotonic()
        arrivals = [(e["type"], time.monotonic() - started)
                    for e in raw.watch(f"{CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=4", timeout=30)]
        bookmarks = [at for kind, at in arrivals if kind == "BOOKMARK"]
        assert len(bookmarks) == 1 and bookmarks[0] >= 1.9, arrivals  # at 4 - 2 s, not before


def test_a_short_interval_asked_for_explicitly_is_honoured(raw: Raw) -> None:
    """The module server runs with ``bookmark_interval=0.2`` (tests/apiserver/conftest.py)."""
    started = time.monotonic()
    for event in raw.watch(f"{CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=30", timeout=30):
        if event["type"] == "BOOKMARK":
            break
    assert time.monotonic() - started < 25
