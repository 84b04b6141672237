"""Package names of API groups: ``<package>.apis.<name>``, ``clientset.<name>_<version>``,
``informers.SharedInformerFactory.<name>``.

A group's name is its first DNS label (``cert-manager.io`` -> ``cert_manager``), as code-generator
names a group's Go package. Where two groups of one run would get the same name, or a group's
name is unusable (an attribute of the informer factory, a Python keyword), every such group takes
one more label, until all differ: ``gateway.networking.k8s.io`` with
``gateway.networking.x-k8s.io`` -> ``gateway_networking_k8s`` and ``gateway_networking_x_k8s``.
No name is reserved for the built-in groups: they live in the library
(``samplecontroller.kubernetes``), never in a package generated from CRDs, so
``core.strimzi.io`` is ``core``.
The result depends only on the set of groups, never on the order of files. An override
(``--group-package GROUP=NAME``, as code-generator's ``+groupGoName``) fixes a group's name; the
automatic names avoid the overrides; an override that collides is an error.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping

from samplecontroller.codegen.errors import CodegenError

# Attributes of the generated SharedInformerFactory (and its base): a group package must not hide one.
FACTORY_ATTRIBUTES = frozenset({
    "clientset", "default_resync", "for_resource", "informer_for", "namespace", "shutdown", "start", "transform",
    "tweak_list_options", "wait_for_cache_sync",
})
PACKAGE_NAME = re.compile(r"[a-z_][a-z0-9_]*")


class PackageNameError(CodegenError):
    """No usable package name for ``group`` (the message says why)."""

    def __init__(self, group: str, message: str) -> None:
        super().__init__(message)
        self.group = group


def labels_name(group: str, count: int) -> str:
    """The first ``count`` DNS labels of ``group`` as a Python name: ``gateway.networking.x-k8s.io``, 3
    -> ``gateway_networking_x_k8s``."""
    return "_".join(group.split(".")[:count]).replace("-", "_")


def usable(name: str) -> bool:
    """A lowercase Python identifier that hides nothing the generated package uses."""
    return PACKAGE_NAME.fullmatch(name) is not None and not keyword.iskeyword(name) and name not in FACTORY_ATTRIBUTES


def check_override(group: str, name: str) -> None:
    """Raise ``PackageNameError`` unless ``name`` (from ``--group-package group=name``) is ``usable``.

    Checks the name alone; whether it collides with another group's is ``group_packages``' concern.
    """
    if not usable(name):
        raise PackageNameError(group, f"--group-package {group}={name}: {name!r} must be a lowercase Python "
                               "identifier (not a keyword nor an informer factory attribute)")


def group_packages(groups: Iterable[str], reserved: Mapping[str, str],
                   overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """group -> package name for ``groups``; ``reserved`` maps names already taken to their group
    (the generator reserves none; a group in it keeps its reserved name). Raises PackageNameError for a colliding override or when no distinct
    name can be derived from a group's labels."""
    overrides = dict(overrides or {})
    wanted = set(groups)
    taken: dict[str, str] = dict(reserved)
    out: dict[str, str] = {}
    for group, name in sorted(overrides.items()):
        if group not in wanted:
            raise PackageNameError(group, f"--group-package {group}={name}: no CRD has the group {group!r}")
        check_override(group, name)
        if taken.get(name, group) != group:
            raise PackageNameError(group, f"--group-package {group}={name}: {name!r} is already the package of "
                                   f"group {taken[name]!r}")
        taken[name] = group
        out[group] = name
    fixed = set(taken)
    builtin = {group: name for name, group in reserved.items()}
    for group in sorted(wanted - set(out)):
        if group in builtin:
            out[group] = builtin[group]  # a CRD of a built-in group joins its package
    auto = sorted(wanted - set(out))
    levels = dict.fromkeys(auto, 1)
    while True:
        names = {g: labels_name(g, levels[g]) for g in auto}
        count: dict[str, int] = {}
        for name in names.values():
            count[name] = count.get(name, 0) + 1
        clashing = [g for g in auto if names[g] in fixed or count[names[g]] > 1 or not usable(names[g])]
        if not clashing:
            break
        for group in clashing:
            if levels[group] >= len(group.split(".")):
                raise PackageNameError(group, f"no package name for group {group!r}: {names[group]!r} is not a "
                                       "usable name or is taken; choose one with --group-package "
                                       f"{group}=NAME")
            levels[group] += 1
    out.update(names)
    return out
