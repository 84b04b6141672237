"""``make docs`` is a strict build that fails on a warning: its mkdocs command line, run on a small
site with a broken link, fails (``--quiet`` once hid every warning from ``--strict``, so broken
links passed)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def docs_command() -> list[str]:
    """The mkdocs command line of the Makefile's ``docs`` target."""
    recipe = re.search(r"^docs: .*\n\t(.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert recipe, "no docs target in the Makefile"
    argv = shlex.split(recipe.group(1))
    while "=" in argv[0]:  # environment assignments
        argv.pop(0)
    assert argv[0] == "$(VENV)/bin/mkdocs", argv
    return [str(Path(sys.executable).parent / "mkdocs"), *argv[1:]]


def test_make_docs_builds_in_strict_mode_without_hiding_warnings() -> None:
    argv = docs_command()
    assert argv[1:3] == ["build", "--strict"]
    assert not {"-q", "--quiet"} & set(argv), "--quiet drops the warnings --strict counts"


def test_a_broken_link_fails_the_build_as_make_docs_runs_it(tmp_path: Path) -> None:
    site = yaml.safe_load((ROOT / "mkdocs.yml").read_text().split("\ntheme:")[0])  # the site's validation rules
    config = {"site_name": "x", "strict": True, "validation": site["validation"]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "docs" / "guides").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "docs" / "guides" / "a.md").write_text("# A\n\nSee [the layout](../../ARCHITECTURE.md).\n")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(docs_command(), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "../../ARCHITECTURE.md" in done.stderr
