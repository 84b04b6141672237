"""The embedded Kubernetes-compatible API server (see issue 4 and docs/reference/apiserver.md).

``LocalAPIServer`` runs it in a background thread; ``python -m samplecontroller.apiserver``
runs it in the foreground. What is not simulated: no scheduler, kubelet or controller-manager
(pods never run, Deployments make no ReplicaSets); see ``samplecontroller.apiserver.core``.
Admission webhooks registered with it are called (``samplecontroller.apiserver.admission``).
Needs the ``apiserver`` extra: without it, importing this package raises ``MissingExtraError``
(one line; ``python -m samplecontroller.apiserver`` prints it and exits 1).
The packages and the request path are described in ARCHITECTURE.md ("The embedded API server").
"""

import sys

from samplecontroller import _extras

try:
    _extras.require("apiserver", "samplecontroller.apiserver")
except _extras.MissingExtraError as _err:
    if sys.argv[:1] == ["-m"]:  # runpy imports the package of ``python -m`` with argv[0] == "-m"
        raise SystemExit(f"python -m samplecontroller.apiserver: error: {_err}") from None
    raise

from samplecontroller.apiserver.requestinfo import RequestRecord
from samplecontroller.apiserver.server import LocalAPIServer, write_kubeconfig

__all__ = ["LocalAPIServer", "RequestRecord", "write_kubeconfig"]
