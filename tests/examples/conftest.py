"""Fixtures for the example controllers' tests: a REST client and a namespace per test."""

from tests.live import ns, rest

__all__ = ["ns", "rest"]
