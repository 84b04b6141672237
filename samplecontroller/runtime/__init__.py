"""A controller-runtime layer on the client-go machinery (kubernetes-sigs/controller-runtime's pkg/).

One subpackage per concept: ``reconcile``, ``event``, ``predicate``, ``handler``, ``source``,
``controller``, ``cache``, ``client``, ``manager``, ``builder``, ``webhook``, ``metrics``,
``healthz``. Start from ``manager.Manager`` and ``builder.controller_managed_by``.
"""
