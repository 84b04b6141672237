"""The library's public API, as the API reference documents it, and the names that lack a docstring.

One list of module roots says what is public (every non-underscore module below them, plus the
embedded API server's entry points). A module's public names are its ``__all__`` when it has one,
else its top-level classes and functions whose names do not start with ``_``; a name imported from
another public module is documented there (the page links to it). A public class's public
methods and properties need a docstring too, except where the same method of a base class it
implements has one, or where the class has every method of a public ``typing.Protocol`` that documents
it (a Protocol's contract is stated once, for every class that satisfies it structurally; a
Protocol of one method is too weak a sign, so it does not count).

``python docs/hooks/public_api.py`` prints the names that lack a docstring (exit 1 if any);
``docs/hooks/reference.py`` uses the same functions to write the reference pages and to fail
``mkdocs build`` on a missing docstring.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import griffe

PACKAGE = "samplecontroller"

# (title of the reference section, module roots: each with every public submodule below it)
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("controller-runtime layer", ("samplecontroller.runtime",)),
    ("Clients and transport", ("samplecontroller.client", "samplecontroller.rest", "samplecontroller.flowcontrol",
                               "samplecontroller.tls")),
    ("Informers and caches", ("samplecontroller.cache", "samplecontroller.informers")),
    ("Work queues", ("samplecontroller.workqueue",)),
    ("Events", ("samplecontroller.record",)),
    ("Leader election", ("samplecontroller.leaderelection",)),
    ("API machinery", ("samplecontroller.apimachinery",)),
    ("Waiting, signals, logging", ("samplecontroller.wait", "samplecontroller.signals", "samplecontroller.logs",
                                   "samplecontroller.flags")),
    ("Testing", ("samplecontroller.testing",)),
    ("Code generation and scaffolding", ("samplecontroller.codegen", "samplecontroller.scaffold")),
    # the server's internals (handlers, storage, strategies, ...) are not public: its entry points are
    ("Embedded API server", ("samplecontroller.apiserver:", "samplecontroller.apiserver.server:",
                             "samplecontroller.apiserver.testing:", "samplecontroller.apiserver.local:",
                             "samplecontroller.apiserver.preload:")),
)


@dataclass
class Module:
    """One public module: its own public names and the public names it re-exports."""

    path: str
    section: str
    own: list[str] = field(default_factory=list)
    reexported: dict[str, str] = field(default_factory=dict)  # name -> canonical path


def load(search: Path | None = None) -> griffe.Module:
    """The library, loaded statically (nothing is imported) from the checkout."""
    root = search or Path(__file__).resolve().parents[2]
    package = griffe.load(PACKAGE, search_paths=[str(root)], resolve_aliases=True,
                          resolve_external=False, docstring_parser=None)
    assert isinstance(package, griffe.Module)
    return package


def _public_modules(package: griffe.Module) -> Iterator[tuple[str, griffe.Module]]:
    for section, roots in SECTIONS:
        for root in roots:
            only = root.endswith(":")
            module = package[root.rstrip(":").removeprefix(PACKAGE + ".")]
            yield section, module
            if not only:
                yield from ((section, m) for m in _submodules(module))


def _submodules(module: griffe.Module) -> Iterator[griffe.Module]:
    for name, member in sorted(module.modules.items()):
        if name.startswith("_") or member.is_alias:
            continue
        yield member
        yield from _submodules(member)


def _names(module: griffe.Module) -> list[str]:
    if module.exports is not None:
        return [str(n) for n in module.exports]
    return [name for name, member in module.members.items()
            if not name.startswith("_") and not member.is_alias and not member.is_module]


def modules(package: griffe.Module) -> list[Module]:
    """Every public module with its own and its re-exported public names, in reference order."""
    found: list[Module] = []
    public = list(_public_modules(package))
    documented = {module.path for _, module in public}
    for section, module in public:
        entry = Module(module.path, section)
        for name in _names(module):
            member = module.members.get(name)
            if member is None or member.is_module:
                continue
            target = _target(member)
            if target is None:
                entry.own.append(name)
            elif target.parent is not None and target.parent.path in documented:
                entry.reexported[name] = target.path
            else:  # defined in a module the reference does not cover: documented here
                entry.own.append(name)
        found.append(entry)
    return found


def _target(member: griffe.Object | griffe.Alias) -> griffe.Object | None:
    """What an imported name stands for (None for a name defined here or that cannot be resolved)."""
    if not member.is_alias:
        return None
    try:
        target = member.final_target  # type: ignore[union-attr]
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    return target if isinstance(target, griffe.Object) else None


def _documented_in_a_base(cls: griffe.Class, name: str) -> bool:
    for base in cls.mro():
        member = base.members.get(name)
        if member is not None and member.docstring is not None:
            return True
    return False


def _class_members(cls: griffe.Class) -> Iterator[griffe.Object | griffe.Alias]:
    for name, member in cls.members.items():
        if name.startswith("_") or member.is_alias:
            continue
        if member.is_function or member.is_class:
            yield member


def _is_protocol(cls: griffe.Class) -> bool:
    return any(str(base).split("[")[0].rsplit(".", 1)[-1] == "Protocol" for base in cls.bases)


def _methods(cls: griffe.Class) -> dict[str, griffe.Object | griffe.Alias]:
    return {name: m for name, m in cls.members.items() if m.is_function and not name.startswith("_")}


def protocol_docs(package: griffe.Module) -> list[tuple[frozenset[str], frozenset[str]]]:
    """For each public Protocol: (its public method names, those it documents)."""
    found = []
    for entry in modules(package):
        module = package[entry.path.removeprefix(PACKAGE + ".")] if entry.path != PACKAGE else package
        for name in entry.own:
            member = _target(module.members[name]) or module.members[name]
            if isinstance(member, griffe.Class) and _is_protocol(member):
                methods = _methods(member)
                documented = frozenset(n for n, m in methods.items() if m.docstring)
                if len(methods) >= 2 and documented:  # one method alone is too weak a sign of implementing it
                    found.append((frozenset(methods), documented))
    return found


def _documented_by_a_protocol(cls: griffe.Class, name: str,
                              protocols: list[tuple[frozenset[str], frozenset[str]]]) -> bool:
    own = set(_methods(cls))
    return any(name in documented and names <= own for names, documented in protocols)


def missing_docstrings(package: griffe.Module) -> list[str]:
    """The dotted paths of public modules, classes, functions and methods without a docstring."""
    missing: list[str] = []
    protocols = protocol_docs(package)
    for entry in modules(package):
        module = package[entry.path.removeprefix(PACKAGE + ".")] if entry.path != PACKAGE else package
        if not module.docstring:
            missing.append(entry.path)
        for name in entry.own:
            member = module.members[name]
            member = _target(member) or member
            if not (member.is_class or member.is_function):
                continue  # constants and type aliases: documented by their module or an attribute docstring
            if not member.docstring:
                missing.append(member.path)
            if isinstance(member, griffe.Class):
                for sub in _class_members(member):
                    if not sub.docstring and not _documented_in_a_base(member, sub.name) \
                            and not _documented_by_a_protocol(member, sub.name, protocols):
                        missing.append(sub.path)
    return missing


def main() -> int:
    """Print the public names without a docstring; exit status 1 if there is any."""
    missing = missing_docstrings(load())
    for path in missing:
        print(path)
    print(f"{len(missing)} public names without a docstring", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
