"""Lease-based leader election (client-go's tools/leaderelection)."""

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
