#!/usr/bin/env python3
"""Generate this repository's ``config/rbac/role.yaml`` from the sample-controller's code: the
``runtime.rbac.rule`` declarations of the application modules and what the runtime controller's
Manager needs (``samplecontroller.manifests``), leader election's Lease in the controller's
namespace.

    python hack/update_manifests.py [--verify]

``--verify`` writes nothing and exits 1 when the file is stale (``make verify`` runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from samplecontroller.manifests import collect_rules, render_roles, write_or_verify  # noqa: E402

PACKAGES = ("samplecontroller.foo", "samplecontroller.controller", "samplecontroller.foo_reconciler",
            "samplecontroller.foo_reconciler_async", "samplecontroller.app")
ROLE = ROOT / "config" / "rbac" / "role.yaml"
ROLE_NAME = "sample-controller"
NAMESPACE = "sample-controller-system"
COMMENT = ("The sample-controller's rights, for --controller classic, runtime and async alike\n"
           "(python hack/update_manifests.py; bound by role_binding.yaml).")


def _runtime_setup(mgr: object) -> None:
    from samplecontroller import foo_reconciler

    assert isinstance(mgr, foo_reconciler.Manager)
    foo_reconciler.FooReconciler(mgr.get_client(), mgr.get_event_recorder_for("sample-controller")
                                 ).setup_with_manager(mgr, 1)


def files() -> dict[Path, str]:
    """The generated files and their text."""
    from samplecontroller import foo_reconciler
    from samplecontroller.rest import RESTClient
    from samplecontroller.rest.config import Config

    def manager() -> object:  # as main.py --controller runtime builds it; never started
        return foo_reconciler.new_manager(RESTClient(Config(host="https://127.0.0.1:1")), resync=0)

    rules = collect_rules(PACKAGES, [_runtime_setup], manager=manager, leader_election_namespace=NAMESPACE)
    return {ROLE: render_roles(rules, ROLE_NAME, COMMENT)}


def main(argv: list[str] | None = None) -> int:
    """hack/update_manifests.py's command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="update_manifests")
    parser.add_argument("--verify", action="store_true", help="write nothing; exit 1 when a file is stale")
    args = parser.parse_args(argv)
    stale = write_or_verify(files(), args.verify, "python hack/update_manifests.py (make manifests)")
    for line in stale:
        print(f"update_manifests: {line}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
