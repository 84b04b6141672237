"""MkDocs hook: guide pages written on other branches join the navigation once their file exists.

Listing a missing page in ``nav`` would fail the strict build, so these are added here, in this
order, after the guides of mkdocs.yml, when ``docs/<path>`` is present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig

RESERVED: tuple[tuple[str, str], ...] = (
    ("Code generation", "guides/code-generation.md"),
    ("Async reconcilers", "guides/async.md"),
    ("Webhooks and conversion", "guides/webhooks-and-conversion.md"),
    ("The embedded server", "guides/embedded-server.md"),
    ("Migrating from kopf", "guides/migrating-from-kopf.md"),
)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Append the reserved guides that exist to the Guides section."""
    docs = Path(config.docs_dir)
    for item in config.nav or []:
        if isinstance(item, dict) and "Guides" in item:
            present: list[Any] = [{title: path} for title, path in RESERVED if (docs / path).is_file()]
            item["Guides"] = [*item["Guides"], *present]
    return config
