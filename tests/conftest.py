"""Shared fixtures for every test area: the embedded API server (see samplecontroller.apiserver.testing)."""

from samplecontroller.apiserver.testing import apiserver, fresh_apiserver, kubeconfig, kubectl

__all__ = ["apiserver", "fresh_apiserver", "kubeconfig", "kubectl"]
