"""The public ``testing.wait_for`` (issue 39): UNSET, None and not-found are "not yet"."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery import errors
from samplecontroller.kubernetes.apis.apps.v1 import Deployment, DeploymentStatus
from samplecontroller.testing import present, wait_for, wait_for_async


class Slot:
    """A value another thread sets a little later."""

    def __init__(self, later: Any, first: Any = msgspec.UNSET) -> None:
        self.value = first
        threading.Timer(0.1, self._set, (later,)).start()

    def _set(self, later: Any) -> None:
        self.value = later

    def get(self) -> Any:
        if self.value is LookupError:
            raise errors.NotFoundError(errors.new_status(404, "NotFound", "not yet"))
        return self.value


def test_an_unset_field_is_not_yet_and_a_present_zero_is_done() -> None:
    slot = Slot(DeploymentStatus(available_replicas=0), DeploymentStatus())
    assert present(0) and present(False) and not present(None) and not present(msgspec.UNSET)
    assert (slot.get().available_replicas is not None) is True, "the trap: UNSET is not None"
    assert wait_for(lambda: present(slot.get().available_replicas), timeout=5) is True
    assert slot.get().available_replicas == 0


def test_not_found_is_not_yet_and_the_value_is_returned() -> None:
    slot = Slot(Deployment(), LookupError)
    assert isinstance(wait_for(slot.get, timeout=5, what="the deployment"), Deployment)


def test_timeout_names_what_and_the_last_error() -> None:
    def missing() -> None:
        raise errors.NotFoundError(errors.new_status(404, "NotFound", 'foos "x" not found'))

    with pytest.raises(AssertionError, match=r"waiting for foo x \(last error: NotFoundError: foos \"x\" not found"):
        wait_for(missing, timeout=0.05, what="foo x")
    with pytest.raises(AssertionError, match=r"last value: UNSET"):
        wait_for(lambda: msgspec.UNSET, timeout=0.05)
    with pytest.raises(TypeError, match="wait_for_async"):
        wait_for(wait_for_async, timeout=0.05)  # type: ignore[arg-type,unused-coroutine]


def test_wait_for_async_awaits_async_functions() -> None:
    slot = Slot("ready")

    async def get() -> Any:
        return slot.get()

    assert asyncio.run(wait_for_async(get, timeout=5)) == "ready"
