"""The operator's webhooks for the tests: a Manager serving them where the embedded API server calls them.

The samplecontroller pytest plugin installs config/webhook and config/crd/patches on its
embedded API server (the ``samplecontroller_webhooks`` option) pointing at
``webhook_install_options``: this session-wide Manager serves the webhooks there, so every test
that creates, updates or reads the project's kinds goes through defaulting, validation and
conversion as on a cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from samplecontroller.rest import RESTClient
from samplecontroller.runtime import cmd
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.webhook.install import WebhookInstallOptions

from backupop import webhooks
from backupop.__main__ import NAME
from backupop.scheme import SCHEME


@pytest.fixture(scope="session", autouse=True)
def webhook_manager(rest_client: RESTClient, webhook_install_options: WebhookInstallOptions) -> Iterator[Manager]:
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
