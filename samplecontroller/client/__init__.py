"""Typed and dynamic REST clients for Kubernetes resources, decoding straight from bytes with msgspec."""
