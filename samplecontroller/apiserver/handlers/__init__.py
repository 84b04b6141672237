"""The resource handlers (kube-apiserver's endpoints/handlers): one async function per verb,
each taking the ``Scope``, the request, its ``RequestInfo`` and the negotiated ``Accept``.

- ``crud``: get, create, update, patch, delete, deletecollection (through admission: ``admitting``);
- ``list`` and ``watch``: collections, selectors, continue tokens, watch streams;
- ``subresources``: connect (log/exec/attach/portforward), finalize, reviews; ``scale``;
  ``actions`` (binding, eviction, token);
- ``openapi``: the OpenAPI v2/v3 documents.

Handlers read and write only through ``Core`` (the storage layer); watches subscribe to its store.
"""
