"""The operator's Scheme: the built-in kinds and the project's own (kubebuilder's
main.go ``scheme``).

``samplecontroller.kubernetes.scheme.add_to_scheme`` registers every built-in kind (so
that ``owns(Job)``, ``watches(ConfigMap, ...)`` and the client know batch/v1 Job,
core/v1 ConfigMap...), as ``clientgoscheme.AddToScheme``; the generated package's
``add_to_scheme`` registers the CRDs' kinds.
"""

from __future__ import annotations

from samplecontroller.client.scheme import Scheme
from samplecontroller.kubernetes import scheme as kubernetes_scheme

from memcachedop.generated import scheme as generated_scheme

SCHEME = Scheme()
kubernetes_scheme.add_to_scheme(SCHEME)
generated_scheme.add_to_scheme(SCHEME)
