"""Authorization in the embedded API server, as kube-apiserver does it with
``--authorization-mode=RBAC`` (and ``system:masters`` as the privileged group).

- ``attributes``: a request's authorization attributes (kube's RequestInfo) and the Forbidden
  Status;
- ``rules``: PolicyRule matching and covering;
- ``rbac.Authorizer``: the decision over the stored Roles/ClusterRoles/bindings (indexed by
  subject, cached until an RBAC object changes);
- ``bootstrappolicy``: the ClusterRoles and ClusterRoleBindings every cluster starts with;
- ``aggregation``: the ClusterRole aggregation controller;
- ``impersonation``: the ``Impersonate-*`` headers;
- ``escalation``: escalation prevention on Role/ClusterRole/binding writes.

The filters (``filters.authenticate``/``impersonate``/``authorize``) and
the review handlers (``handlers.reviews``) use them; the user is ``authentication.user_of(request)``.
"""
