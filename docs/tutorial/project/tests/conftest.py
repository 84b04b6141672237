"""Fixtures of the operator's tests: the controller running under a Manager against the embedded
API server (the samplecontroller pytest plugin's ``apiserver``, ``rest_client`` and ``namespace``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import cmd

from memcachedop.__main__ import NAME
from memcachedop.controllers import memcached
from memcachedop.scheme import SCHEME


@pytest.fixture
def controller_client(rest_client: RESTClient) -> RESTClient:
    """Whom the controller talks to the server as: the server's admin (tests/test_rbac.py overrides it)."""
    return rest_client


# --8<-- [start:running]
@pytest.fixture
def running(controller_client: RESTClient, namespace: str) -> Iterator[None]:
    """The Memcached controller under a Manager watching this test's namespace."""
    args = cmd.parse_flags(["--namespace", namespace], name=NAME)
    mgr = cmd.new_manager(controller_client, args, name=NAME, scheme=SCHEME)
    memcached.setup(mgr, args)
    stop = threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(30)
# --8<-- [end:running]
