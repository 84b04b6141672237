"""The generic fake clientset (client-go's testing package): tracker, actions, reactors, fake clients."""

from samplecontroller.testing.actions import Action, FakeClientsetBase, Reactor, WatchReactor
from samplecontroller.testing.fake_client import FakeListerWatcher, FakeResourceClient, FakeWatch, FakeWatcher
from samplecontroller.testing.tracker import GroupVersionResource, ObjectTracker, TrackerWatch

__all__ = [
    "Action",
    "FakeClientsetBase",
    "FakeListerWatcher",
    "FakeResourceClient",
    "FakeWatch",
    "FakeWatcher",
    "GroupVersionResource",
    "ObjectTracker",
    "Reactor",
    "TrackerWatch",
    "WatchReactor",
]
