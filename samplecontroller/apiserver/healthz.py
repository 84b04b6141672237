"""``/healthz``, ``/livez`` and ``/readyz`` as kube-apiserver serves them (k8s.io/apiserver
pkg/server/healthz): each endpoint runs its named checks; ``?verbose`` lists them
(``[+]ping ok`` ... ``readyz check passed``), ``?exclude=<name>`` skips one (listed as
``[+]<name> excluded: ok``), ``/<endpoint>/<check>`` runs a single one (404 for an unknown
name). A failing check answers 500 with ``[-]<name> failed: reason withheld`` and
``<endpoint> check failed``; a request for unknown excluded checks is warned about in the listing.

The checks are what this server has: ``ping``, ``log``, ``etcd`` (the store is open),
``informer-sync`` and ``etcd-readiness`` (readyz), the post-start hooks that create the
cluster's bootstrap objects (done once the controllers started) and ``shutdown`` (readyz: not
stopping).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Check", "HealthChecks", "Result"]

Check = Callable[[], str | None]
"""A check: None when healthy, else the reason it is not."""


@dataclass(frozen=True)
class Result:
    """An HTTP answer: status code and plain-text body."""

    code: int
    text: str


class HealthChecks:
    """The named checks of each endpoint (``healthz``, ``livez``, ``readyz``), in order."""

    def __init__(self, checks: Mapping[str, Sequence[tuple[str, Check]]]) -> None:
        self.checks = {endpoint: list(named) for endpoint, named in checks.items()}

    def serves(self, parts: Sequence[str]) -> bool:
        """Whether ``parts`` (the path's segments) address an endpoint or one of its checks."""
        return bool(parts) and parts[0] in self.checks and len(parts) <= 2 + (parts[1:2] == ["poststarthook"])

    def answer(self, parts: Sequence[str], verbose: bool, exclude: Sequence[str]) -> Result:
        """The answer to ``/<endpoint>[/<check>]`` (see the module docstring)."""
        endpoint, named = parts[0], self.checks[parts[0]]
        if len(parts) > 1:
            wanted = "/".join(parts[1:])
            check = dict(named).get(wanted)
            if check is None:
                return Result(404, "404 page not found\n")
            reason = check()
            if reason is None:
                return Result(200, "ok")
            return Result(500, f"internal server error: {reason}\n")
        lines: list[str] = []
        failed = False
        excluded = set(exclude)
        for name, check in named:
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok")
                excluded.discard(name)
                continue
            reason = check()
            failed = failed or reason is not None
            lines.append(f"[+]{name} ok" if reason is None else f"[-]{name} failed: reason withheld")
        if excluded:
            lines.append("warn: some health checks cannot be excluded: no matches for "
                         + ",".join(f'"{name}"' for name in sorted(excluded)))
        if failed:
            return Result(500, "\n".join(lines) + f"\n{endpoint} check failed\n")
        if not verbose:
            return Result(200, "ok")
        return Result(200, "\n".join(lines) + f"\n{endpoint} check passed\n")
