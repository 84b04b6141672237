"""Fixtures of the operator's tests: the controller running under a Manager against the
embedded API server (the samplecontroller pytest plugin's ``apiserver``, ``rest_client``
and ``namespace``), and the operator's webhooks served where that API server calls
them."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import cmd
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook.install import WebhookInstallOptions

from memcachedop import webhooks
from memcachedop.__main__ import NAME
from memcachedop.controllers import memcached
from memcachedop.scheme import SCHEME


# --8<-- [start:controller-client]
@pytest.fixture
def controller_client(rest_client: RESTClient) -> RESTClient:
    """Whom the controller talks to the server as: the server's admin
    (tests/test_rbac.py overrides it)."""
    return rest_client


# --8<-- [end:controller-client]


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


# --8<-- [start:webhooks]
@pytest.fixture(scope="session", autouse=True)
def webhook_manager(
    rest_client: RESTClient, webhook_install_options: WebhookInstallOptions
) -> Iterator[Manager]:
    """A Manager serving the operator's webhooks for the whole test session."""
    args = cmd.parse_flags(webhook_install_options.manager_flags(), name=NAME)
    mgr = cmd.new_manager(rest_client, args, name=NAME, scheme=SCHEME)
    webhooks.setup(mgr)
    stop = threading.Event()
    thread = threading.Thread(target=mgr.start, args=(stop,), daemon=True)
    thread.start()
    if not mgr.get_webhook_server().started.wait(60):
        raise RuntimeError("the webhook server did not start within 60s")
    yield mgr
    stop.set()
    thread.join(30)


# --8<-- [end:webhooks]
