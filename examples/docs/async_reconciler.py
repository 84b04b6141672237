"""The async guide's reconciler and its test (docs/guides/async.md includes the sections
between the markers; tests/docs/test_snippets.py runs this file)."""

# --8<-- [start:reconciler]
import asyncio

import msgspec

from samplecontroller.kubernetes.apis.core.v1 import ConfigMap
from samplecontroller.kubernetes.apis.meta.v1 import ObjectMeta
from samplecontroller.kubernetes.scheme import SCHEME
from samplecontroller.runtime.builder import controller_managed_by
from samplecontroller.runtime.client import MergeFrom
from samplecontroller.runtime.client.aio import AsyncClient
from samplecontroller.runtime.client.fake import ClientBuilder
from samplecontroller.runtime.controller import Options
from samplecontroller.runtime.manager import Manager
from samplecontroller.runtime.reconcile import Request, Result


async def fetch_owner(name: str) -> str:
    """Stands for any awaited call to another system (a cloud API, a database)."""
    await asyncio.sleep(0)
    return f"team-{name}"


class OwnerLabelReconciler:
    """Labels every ConfigMap with its owner, asked from another system."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def reconcile(self, request: Request) -> Result:
        cm = await self.client.get(ConfigMap, request.namespace, request.name)
        owner = await fetch_owner(request.name)  # holds no thread while it waits
        labels = {**(cm.metadata.labels or {}), "owner": owner}
        updated = msgspec.structs.replace(
            cm, metadata=msgspec.structs.replace(cm.metadata, labels=labels)
        )
        await self.client.patch(updated, MergeFrom(cm))
        return Result()


def add_to_manager(mgr: Manager) -> None:
    """200 reconciles in flight at once, as tasks on the Manager's loop."""
    controller_managed_by(mgr).for_(ConfigMap).with_options(
        Options(max_concurrent_reconciles=200)
    ).complete(OwnerLabelReconciler(mgr.get_async_client()))
# --8<-- [end:reconciler]


# --8<-- [start:test]
async def test_reconcile_labels_the_config_map() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="web", namespace="default"))
    client = ClientBuilder().with_scheme(SCHEME).with_objects(cm).build_async()
    result = await OwnerLabelReconciler(client).reconcile(Request("default", "web"))
    assert result == Result()
    labelled = await client.get(ConfigMap, "default", "web")
    assert labelled.metadata.labels == {"owner": "team-web"}
# --8<-- [end:test]


if __name__ == "__main__":
    asyncio.run(test_reconcile_labels_the_config_map())
