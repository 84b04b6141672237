"""samplecontroller: client-go and controller-runtime machinery for Python, and the sample-controller."""

from samplecontroller._version import __version__

__all__ = ["__version__"]
