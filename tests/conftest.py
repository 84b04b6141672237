"""Shared fixtures for every test area: the embedded API server (see samplecontroller.apiserver.testing).

Hypothesis runs without its per-example deadline everywhere: a wall-clock limit on a shared,
loaded machine is a timing assert on a real clock (it failed tests/apiserver/test_storage.py
under load), and properties are about behaviour, not speed (benchmarks/ measures speed).
"""

from hypothesis import settings

from samplecontroller.apiserver.testing import apiserver, fresh_apiserver, kubeconfig, kubectl

settings.register_profile("samplecontroller", deadline=None)
settings.load_profile("samplecontroller")

__all__ = ["apiserver", "fresh_apiserver", "kubeconfig", "kubectl"]
