"""Lease-based leader election (client-go's tools/leaderelection).

Typical use::

    lock = LeaseLock.for_rest_client(rest_client, "kube-system", "sample-controller",
                                     identity)
    callbacks = LeaderCallbacks(on_started_leading=run_controllers,
                                on_stopped_leading=exit_process)
    config = LeaderElectionConfig(lock, callbacks=callbacks, release_on_cancel=True)
    LeaderElector(config).run(stop)  # returns when leadership is lost or ``stop`` is set
"""

from samplecontroller.leaderelection.elector import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    run_or_die,
)
from samplecontroller.leaderelection.resourcelock import (
    LEASES,
    LeaderElectionRecord,
    LeaseClient,
    LeaseLock,
    ResourceLock,
)

__all__ = [
    "JITTER_FACTOR",
    "LEASES",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
    "ResourceLock",
    "run_or_die",
]
