"""Kubernetes API machinery shared by every layer: errors, object metadata access, selectors, patches.

Nothing here imports generated code, the API server or the controller.
"""
