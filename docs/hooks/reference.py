"""MkDocs hook: the API reference pages, one per public module, and the docstring check.

The pages are generated at build time from ``public_api.modules`` (nothing is written to the
source tree): each renders the module's own public names with mkdocstrings and links the names it
re-exports to the module that defines them. The build fails (``PluginError``) when a public name
has no docstring: there is no exemption list (write the docstring, or make the name private).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # mkdocs loads hooks by path

from docs.hooks import public_api

_modules: list[public_api.Module] = []
_package: list[Any] = []  # the loaded library, for the summaries of re-exported names


def check(package: Any) -> list[str]:
    """The problems: one line per public name without a docstring."""
    return [f"{path}: public name without a docstring" for path in sorted(public_api.missing_docstrings(package))]


def page_uri(module: str) -> str:
    """Where a module's reference page is."""
    return f"reference/{module}.md"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Check the docstrings, put the reference pages into the navigation and the version into the title."""
    from samplecontroller._version import version

    config.site_name = f"samplecontroller {version()}"
    package = _load(config)
    problems = check(package)
    if problems:
        raise PluginError("API reference: " + "; ".join(problems))
    _modules[:] = public_api.modules(package)
    _package[:] = [package]
    sections: dict[str, list[Any]] = {}
    for module in _modules:
        title = module.path.removeprefix(public_api.PACKAGE + ".")
        sections.setdefault(module.section, []).append({title: page_uri(module.path)})
    reference = [{"Overview": "reference/index.md"}, *({title: pages} for title, pages in sections.items())]
    for item in config.nav or []:
        if isinstance(item, dict) and "API reference" in item:
            item["API reference"] = reference
    return config


def _load(config: MkDocsConfig) -> Any:
    """The library as mkdocstrings' Python handler loads it for the pages (its options, its
    docstring parser), loaded once: the handler keeps it for every ``:::`` block of the build,
    where a load of our own would parse the whole package a second time (a third of the build).
    Without the plugin (a test's config), ``public_api.load()``."""
    plugins = getattr(config, "plugins", None)
    plugin = plugins.get("mkdocstrings") if plugins is not None else None
    if plugin is None:
        return public_api.load()
    handler = plugin.handlers.get_handler("python")
    return handler.collect(public_api.PACKAGE, handler.get_options({}))


def _render(module: public_api.Module) -> str:
    lines = [f"# `{module.path}`", ""]
    own = module.own
    lines += [f"::: {module.path}", "    options:", "      show_root_heading: false",
              "      show_root_toc_entry: false", f"      members: {own!r}" if own else "      members: false", ""]
    if module.reexported:
        lines += ["", "## Re-exported here", "",
                  "Defined in another module and importable from this one:", ""]
        lines += [f"- [`{name}`][{target}]{summary(target)}"
                  for name, target in sorted(module.reexported.items())]
    return "\n".join(lines) + "\n"


def summary(path: str) -> str:
    """``: `` and the first sentence of the docstring of the object at ``path`` ("" without one)."""
    if not _package:
        return ""
    try:
        obj = _package[0][path.removeprefix(public_api.PACKAGE + ".")]
    except (KeyError, ValueError):
        return ""
    docstring = getattr(obj, "docstring", None)
    if docstring is None or not docstring.value.strip():
        return ""
    first = str(docstring.value).strip().split("\n\n")[0].replace("\n", " ")
    return ": " + first.split(". ")[0].rstrip(".") + "."


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add one generated page per public module."""
    for module in _modules:
        files.append(File.generated(config, page_uri(module.path), content=_render(module)))
    return files
