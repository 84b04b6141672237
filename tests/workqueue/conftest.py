"""Fixtures for the workqueue tests."""

from __future__ import annotations

import pytest

from samplecontroller.workqueue.testing import RecordingProvider


@pytest.fixture
def provider() -> RecordingProvider:
    return RecordingProvider()
