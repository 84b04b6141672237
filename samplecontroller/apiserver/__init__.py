"""The embedded Kubernetes-compatible API server (see issue 4 and README "Embedded API server").

``LocalAPIServer`` runs it in a background thread; ``python -m samplecontroller.apiserver``
runs it in the foreground. What is not simulated: no scheduler, kubelet or controller-manager
(pods never run, Deployments make no ReplicaSets); see ``samplecontroller.apiserver.core``.
Admission webhooks registered with it are called (``samplecontroller.apiserver.admission``).
The packages and the request path are described in ARCHITECTURE.md ("The embedded API server").
"""

from samplecontroller.apiserver.requestinfo import RequestRecord
from samplecontroller.apiserver.server import LocalAPIServer, write_kubeconfig

__all__ = ["LocalAPIServer", "RequestRecord", "write_kubeconfig"]
