"""The embedded Kubernetes-compatible API server (see issue 4)."""
