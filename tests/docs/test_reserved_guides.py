"""Guide pages written on other branches join the site's navigation once their file exists
(docs/hooks/reserved.py), so the strict build never lists a page that is not there."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from docs.hooks import reserved


def test_a_reserved_guide_is_listed_only_when_its_file_exists(tmp_path: Path) -> None:
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "async.md").write_text("# Async\n")
    config: Any = SimpleNamespace(docs_dir=str(tmp_path), nav=[{"Guides": [{"Testing": "guides/testing.md"}]}])
    reserved.on_config(config)
    assert config.nav == [{"Guides": [{"Testing": "guides/testing.md"}, {"Async reconcilers": "guides/async.md"}]}]


def test_the_reserved_names_are_the_other_branches_guides() -> None:
    assert {path for _, path in reserved.RESERVED} == {
        "guides/code-generation.md", "guides/async.md", "guides/webhooks-and-conversion.md",
        "guides/embedded-server.md", "guides/migrating-from-kopf.md"}
