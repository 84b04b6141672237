"""samplecontroller: client-go and controller-runtime machinery for Python, and the sample-controller."""

__version__ = "0.1.0"
