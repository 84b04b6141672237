"""Preloading CustomResourceDefinitions into an embedded API server (envtest's ``CRDDirectoryPaths``).

``load_crds(dirs)`` reads every ``*.yaml``/``*.yml`` file of each directory (sorted by name) and
returns the CRD documents; ``create_crds(core, docs)`` stores them on a running server (on its
loop: ``server.call(lambda core: create_crds(core, docs))``), skipping a CRD already stored under
the same name, or replacing it with ``replace=True`` (a server whose data outlives a run, where
the CRD may have been edited since). A stored CRD is served at once (the mapper follows the store), so nothing waits for
``Established``.

Every problem is a ``CRDError`` whose message is one line naming the directory, file or CRD: a
directory that does not exist, a file that is not YAML, a document that is not an
``apiextensions.k8s.io/v1`` CustomResourceDefinition, a CRD the server rejects (its Status
message). A directory without any CRD is fine (a new project has none yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from samplecontroller.apimachinery import k8syaml
from samplecontroller.apiserver.core import CRD_KEY, Core
from samplecontroller.apiserver.errors import APIError

__all__ = ["CRDError", "create_crds", "load_crds"]

CRD_API_VERSION = "apiextensions.k8s.io/v1"
FIELD_MANAGER = "crd-preload"


class CRDError(Exception):
    """A CRD directory, file or document that cannot be preloaded; ``str()`` is one line."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def load_crds(dirs: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The CRD documents of every YAML file in ``dirs`` (in order; files sorted by name)."""
    docs: list[dict[str, Any]] = []
    for entry in dirs:
        directory = Path(entry)
        if not directory.is_dir():
            raise CRDError(f"{directory}: not a directory of CRD YAML files")
        for path in sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()):
            docs.extend(_load_file(path))
    return docs


def _load_file(path: Path) -> list[dict[str, Any]]:
    try:
        raw = list(k8syaml.load_all(path.read_bytes()))
    except yaml.YAMLError as err:
        raise CRDError(f"{path}: not valid YAML: {_one_line(err)}") from None
    except OSError as err:
        raise CRDError(f"{path}: cannot read: {err.strerror or err}") from None
    docs: list[dict[str, Any]] = []
    for index, doc in enumerate(raw):
        if doc is None:
            continue
        where = f"{path}: document {index + 1}"
        if not isinstance(doc, dict):
            raise CRDError(f"{where}: not a CustomResourceDefinition (a {type(doc).__name__}, not a mapping)")
        if doc.get("apiVersion") != CRD_API_VERSION or doc.get("kind") != "CustomResourceDefinition":
            raise CRDError(f"{where}: not a CustomResourceDefinition (apiVersion {doc.get('apiVersion')!r}, "
                           f"kind {doc.get('kind')!r}; want {CRD_API_VERSION} CustomResourceDefinition)")
        name = (doc.get("metadata") or {}).get("name")
        if not isinstance(name, str) or not name:
            raise CRDError(f"{where}: the CustomResourceDefinition has no metadata.name")
        docs.append(doc)
    return docs


def create_crds(core: Core, docs: Sequence[dict[str, Any]], *, replace: bool = False) -> list[str]:
    """Store every CRD of ``docs`` not stored yet (``replace``: and replace those that are); the
    names of all of them. Runs on the server's loop."""
    res = core.mapper.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    if res is None:
        raise RuntimeError("the API server does not serve apiextensions.k8s.io/v1 customresourcedefinitions")
    names: list[str] = []
    for doc in docs:
        name = doc["metadata"]["name"]
        stored = core.store.get(CRD_KEY, "", name)
        try:
            if stored is None:
                core.create(res, "", doc, manager=FIELD_MANAGER)
            elif replace:
                metadata = {**doc["metadata"], "resourceVersion": stored.obj["metadata"]["resourceVersion"]}
                core.update(res, "", name, {**doc, "metadata": metadata}, manager=FIELD_MANAGER)
        except APIError as err:
            raise CRDError(f"CRD {name}: {_one_line(err.status.get('message') or err)}") from None
        names.append(name)
    return names
