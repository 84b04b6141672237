"""The embedded API server (Deployment simulator on) in its own process, answering request counts.

Prints ``ready <url> <kubeconfig>`` once serving. Then reads commands on stdin, one per line:
``counts`` prints one JSON line ``{"connections": n, "counts": {user_agent: {verb: n}}}``
(see ``samplecontroller.apiserver.metrics``). End of input stops the server.

    python benchmarks/_counting_apiserver.py KUBECONFIG_PATH
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samplecontroller.apiserver.server import LocalAPIServer, tune_gc


def main() -> None:
    server = LocalAPIServer(simulate_deployments=True, kubeconfig_path=Path(sys.argv[1]))
    with server:
        assert server.app is not None
        tune_gc()  # as python -m samplecontroller.apiserver does
        print(f"ready {server.url} {server.kubeconfig_path}", flush=True)
        for line in sys.stdin:
            if line.strip() == "counts":
                counter = server.app.counter
                print(json.dumps({"connections": counter.connections, "counts": counter.snapshot()}), flush=True)


if __name__ == "__main__":
    main()
