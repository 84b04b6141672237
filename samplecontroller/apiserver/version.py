"""The Kubernetes version the embedded server is, and the one it emulates.

The server is a kube-apiserver 1.37 (``KUBERNETES_VERSION``): ``/version``, the OpenAPI
documents' ``info.version`` and the served built-in resources (``builtins``) are 1.37's. Like
kube-apiserver's ``--emulated-version``, ``emulated_minor`` (1.33 to 1.37, ``EMULATABLE_MINORS``;
kube-apiserver 1.37 itself emulates no further back than 1.34, its binary minor version minus 3:
1.33 is this server's extra, for clusters still on it) makes it serve the API of an older minor
version: the group/version/kinds GA since a later version (``GA_SINCE``) are not served nor
discovered, and ``/version`` carries
``emulationMajor``/``emulationMinor`` (the binary's ``major``/``minor``/``gitVersion`` stay, as
in component-base's ``effectiveVersion.Info``) and ``minCompatibilityMajor``/``Minor`` (the
emulated version minus one, kube's default).

Feature gates follow the emulated version as kube-apiserver's do (``strategies.recent.GATES``):
a field whose gate is off by default at the emulated version is dropped on create, and on an
update unless the stored object already uses it. Defaulting and validation stay 1.37's.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "BINARY_MINOR",
    "EMULATABLE_MINORS",
    "GA_SINCE",
    "KUBERNETES_VERSION",
    "EmulationVersionError",
    "parse_emulated_version",
    "served_since",
    "version_info",
]

BINARY_MINOR = 37
KUBERNETES_VERSION = f"v1.{BINARY_MINOR}.0"
EMULATABLE_MINORS = tuple(range(33, BINARY_MINOR + 1))

# (group, kind) -> the minor version whose kube-apiserver first serves it by default (GA), for
# the kinds GA after 1.32 (the vendored definitions of kubernetes-validate 1.30-1.37 agree:
# tests/apiserver_units/test_version.py). A kind not listed is served by every emulated version.
GA_SINCE: dict[tuple[str, str], int] = {
    ("networking.k8s.io", "IPAddress"): 33, ("networking.k8s.io", "ServiceCIDR"): 33,
    ("resource.k8s.io", "DeviceClass"): 34, ("resource.k8s.io", "ResourceClaim"): 34,
    ("resource.k8s.io", "ResourceClaimTemplate"): 34, ("resource.k8s.io", "ResourceSlice"): 34,
    ("storage.k8s.io", "VolumeAttributesClass"): 34,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): 36,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): 36,
    ("certificates.k8s.io", "ClusterTrustBundle"): 37, ("certificates.k8s.io", "PodCertificateRequest"): 37,
    ("resource.k8s.io", "DeviceTaintRule"): 37, ("storagemigration.k8s.io", "StorageVersionMigration"): 37,
}

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")


class EmulationVersionError(ValueError):
    """An ``--emulated-version`` this server cannot emulate (the message names the supported ones)."""


def parse_emulated_version(text: str | int | None) -> int:
    """The minor version of ``--emulated-version`` (``"1.34"``, ``"v1.34"``, ``"1.34.0"`` or
    ``34``); None or ``""`` is the binary's own. ``EmulationVersionError`` for anything else."""
    if text is None or text == "":
        return BINARY_MINOR
    if isinstance(text, int) and not isinstance(text, bool):
        major, minor = 1, text
    else:
        m = _VERSION.fullmatch(str(text).strip())
        if not m:
            raise EmulationVersionError(f"invalid emulated version {text!r}: want MAJOR.MINOR, e.g. 1.34")
        major, minor = int(m.group(1)), int(m.group(2))
    if major != 1 or minor not in EMULATABLE_MINORS:
        raise EmulationVersionError(
            f"unsupported emulated version {text!r}: this server ({KUBERNETES_VERSION}) emulates "
            f"1.{EMULATABLE_MINORS[0]} to 1.{EMULATABLE_MINORS[-1]}")
    return minor


def served_since(group: str, kind: str) -> int:
    """The first minor version that serves the GA ``group``/``kind`` (0: every emulated one)."""
    return GA_SINCE.get((group, kind), 0)


def version_info(emulated_minor: int = BINARY_MINOR) -> dict[str, Any]:
    """The ``/version`` body (k8s.io/apimachinery's version.Info) of this server emulating ``1.<emulated_minor>``."""
    return {
        "major": "1", "minor": str(BINARY_MINOR), "emulationMajor": "1", "emulationMinor": str(emulated_minor),
        "minCompatibilityMajor": "1", "minCompatibilityMinor": str(emulated_minor - 1),
        "gitVersion": KUBERNETES_VERSION, "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2026-08-26T00:00:00Z", "goVersion": "go1.25.0", "compiler": "gc",
        "platform": "linux/amd64",
    }
