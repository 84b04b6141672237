"""Metadata-only watches (controller-runtime's ``builder.OnlyMetadata``): ``owns``/``watches``/``for_``
with ``only_metadata=True`` keep ``PartialObjectMetadata`` in the Manager's cache, listed and
watched through the metadata client, and no full informer of that kind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from samplecontroller.client.metadata import (
    MetadataListerWatcher,
    OnlyMetadata,
    PartialObjectMetadata,
    only_metadata,
)
from samplecontroller.kubernetes.apis.core.v1 import ConfigMap, Secret
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta, OwnerReference
from samplecontroller.kubernetes.clientset import Clientset
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.rest import RESTClient
from samplecontroller.runtime.builder import Builder
from samplecontroller.runtime.cache import Cache
from samplecontroller.runtime.client.fake import ClientBuilder, new_manager
from samplecontroller.runtime.consistency.tracker import ObservedWrites
from samplecontroller.runtime.handler import EnqueueRequestsFromMapFunc
from samplecontroller.runtime.manager import Manager, Options
from samplecontroller.runtime.reconcile import Request, Result
from tests.live import ns, rest, wait_for
from tests.runtime.conftest import ListQueue
from tests.runtime.test_integration import started

__all__ = ["ns", "rest", "started"]


class Recorder:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    def reconcile(self, request: Request) -> Result:
        with self.lock:
            self.requests.append(request)
        return Result()

    def names(self) -> set[str]:
        with self.lock:
            return {r.name for r in self.requests}


def test_owns_and_watches_only_metadata(rest: RESTClient, ns: str, started: Callable[[Manager], Any]) -> None:
    core = Clientset(rest).core_v1()
    mgr = Manager(rest, scheme=SCHEME, options=Options(namespaces=(ns,)))
    recorder = Recorder()
    mapped = EnqueueRequestsFromMapFunc(lambda obj: [Request(ns, "from-" + obj.metadata.name)])
    (Builder(mgr).for_(ConfigMap).owns(Secret, only_metadata=True)
     .watches(ConfigMap, mapped, only_metadata=True).named(f"metadata-{ns}").complete(recorder))
    started(mgr)
    owner = core.configmaps(ns).create(ConfigMap(metadata=ObjectMeta(name="owner")))
    core.secrets(ns).create(Secret(metadata=ObjectMeta(name="owned", owner_references=(OwnerReference(
        api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid, controller=True),)),
        string_data={"password": "x" * 1000}))
    wait_for(lambda: {"owner", "from-owner"} <= recorder.names(), what="requests from for_, owns and watches")

    cache = mgr.get_cache()
    secrets = wait_for(lambda: cache.list(only_metadata(Secret), namespace=ns), what="the cached Secret metadata")
    assert [type(s) for s in secrets] == [PartialObjectMetadata]
    assert (secrets[0].api_version, secrets[0].kind) == ("v1", "Secret")  # the kind's, as controller-runtime's
    informer = cache.get_informer(only_metadata(Secret)).informer_for_namespace(ns)
    assert isinstance(informer.lister_watcher, MetadataListerWatcher)  # the server sends metadata alone
    assert secrets[0].metadata.owner_references[0].name == "owner"
    assert cache.existing_informer(Secret) is None  # no full informer of Secrets
    assert cache.get(only_metadata(Secret), ns, "owned").metadata.name == "owned"
    assert mgr.get_client().get(only_metadata(Secret), ns, "owned").metadata.name == "owned"


def test_for_only_metadata_and_keys() -> None:
    assert OnlyMetadata(Secret) == OnlyMetadata(OnlyMetadata(Secret)) and hash(OnlyMetadata(Secret)) == hash(
        only_metadata(Secret))
    assert OnlyMetadata(Secret) != OnlyMetadata(ConfigMap)
    with pytest.raises(ValueError, match="only_metadata applies to watches of a type"):
        Builder(object()).watches(object(), None, only_metadata=True)  # type: ignore[arg-type]


def test_only_metadata_over_the_fake_client(started: Callable[[Manager], Any]) -> None:
    owner = ConfigMap(metadata=ObjectMeta(name="owner", namespace="default", uid="u1"))
    secret = Secret(metadata=ObjectMeta(name="s", namespace="default", owner_references=(OwnerReference(
        api_version="v1", kind="ConfigMap", name="owner", uid="u1", controller=True),)), data={"k": "dg=="})
    client = ClientBuilder().with_scheme(SCHEME).with_objects(owner, secret).build()
    mgr = new_manager(client)
    recorder = Recorder()
    Builder(mgr).for_(ConfigMap, only_metadata=True).owns(Secret, only_metadata=True).complete(recorder)
    started(mgr)
    wait_for(lambda: "owner" in recorder.names(), what="the owner reconciled")
    cached = mgr.get_cache().get(only_metadata(Secret), "default", "s")
    assert isinstance(cached, PartialObjectMetadata)
    assert [r.uid for r in cached.metadata.owner_references or ()] == ["u1"]
    assert mgr.get_cache().existing_informer(ConfigMap) is None


def test_a_write_waits_for_the_metadata_only_informer() -> None:
    """Read your own writes: a kind cached metadata-only still holds the key until the cache has the write."""
    client = ClientBuilder().with_scheme(SCHEME).with_watch_delay(0.5, Secret).build()
    cache = Cache(client.client_for, scheme=SCHEME)
    stop = threading.Event()
    threading.Thread(target=cache.start, args=(stop,), daemon=True).start()
    cache.get_informer(only_metadata(Secret))
    assert cache.wait_for_cache_sync(timeout=10)
    try:
        queue = ListQueue()
        writes = ObservedWrites("only-metadata-ryow", cache, 30)
        writes.start(queue, stop)
        req = Request("ns", "p")
        with writes.reconciling(req):
            created = client.create(Secret(metadata=ObjectMeta(name="s", namespace="ns")))
        assert writes.hold(req)  # the metadata informer has not seen it yet (its watch lags 0.5 s)
        wait_for(lambda: queue.items == [req], what="the key released")
        cached = cache.get(only_metadata(Secret), "ns", "s")
        assert cached.metadata.resource_version == created.metadata.resource_version
    finally:
        stop.set()
