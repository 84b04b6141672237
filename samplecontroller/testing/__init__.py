"""The generic fake clientset (client-go's testing package): tracker, actions, reactors, fake clients."""

from samplecontroller.testing.actions import Action, FakeClientsetBase, Reactor, WatchReactor
from samplecontroller.testing.fake_client import FakeListerWatcher, FakeResourceClient, FakeWatch, FakeWatcher
from samplecontroller.testing.fieldmanaged import DEFAULT_FIELD_MANAGER, FieldManagedObjectTracker
from samplecontroller.testing.tracker import GroupVersionResource, ObjectTracker, TrackerWatch
from samplecontroller.testing.wait import present, wait_for, wait_for_async

__all__ = [
    "DEFAULT_FIELD_MANAGER",
    "Action",
    "FakeClientsetBase",
    "FakeListerWatcher",
    "FakeResourceClient",
    "FakeWatch",
    "FakeWatcher",
    "FieldManagedObjectTracker",
    "GroupVersionResource",
    "ObjectTracker",
    "Reactor",
    "TrackerWatch",
    "WatchReactor",
    "present",
    "wait_for",
    "wait_for_async",
]
