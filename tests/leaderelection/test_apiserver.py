"""LeaseLock.for_rest_client against the embedded API server: two electors, one Lease."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from samplecontroller.apiserver.server import LocalAPIServer
from samplecontroller.client.resource import ResourceClient
from samplecontroller.leaderelection import (
    LEASES,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)
from samplecontroller.rest import RESTClient, load_rest_client


@pytest.fixture
def rest(apiserver: LocalAPIServer) -> RESTClient:
    return load_rest_client(kubeconfig=str(apiserver.kubeconfig_path))


def test_two_electors_share_one_lease_on_the_server(rest: RESTClient) -> None:
    name = "leaderelection-test-lock"
    started = {i: threading.Event() for i in ("a", "b")}
    stops = {i: threading.Event() for i in ("a", "b")}
    threads = []

    def on_started(ident: str) -> Callable[[threading.Event], None]:
        return lambda stop: started[ident].set()

    for ident in ("a", "b"):
        lock = LeaseLock.for_rest_client(rest, "default", name, ident)
        # a lease long enough that a loaded machine's stalls do not cost "a" its renewals (b must
        # not take over before a releases); the release makes the handover immediate anyway
        config = LeaderElectionConfig(lock=lock, lease_duration=15, renew_deadline=10, retry_period=0.1,
                                      callbacks=LeaderCallbacks(on_started(ident), lambda: None),
                                      release_on_cancel=True)
        t = threading.Thread(target=LeaderElector(config).run, args=(stops[ident],), daemon=True)
        t.start()
        threads.append(t)
        if ident == "a":
            assert started["a"].wait(30)
    try:
        time.sleep(0.3)
        assert not started["b"].is_set()
        lease = ResourceClient(rest, LEASES, "default").get(name)
        assert lease["spec"]["holderIdentity"] == "a" and lease["spec"]["leaseDurationSeconds"] == 15
        stops["a"].set()  # a releases on cancel; b takes over without waiting for expiry
        assert started["b"].wait(30)
        lease = ResourceClient(rest, LEASES, "default").get(name)
        assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    finally:
        for s in stops.values():
            s.set()
        for t in threads:
            t.join(30)
