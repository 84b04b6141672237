"""The repository link of every page's header (docs/hooks/repository.py): from ``REPO_URL``, else
``[project.urls]`` of pyproject.toml, else the checkout's ``origin`` remote when it has a web page;
none, no link. The built site is checked in ``make docs`` (``on_post_build``); these tests give the
check small pages, and the lookup small projects."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from docs.hooks import repository


@pytest.mark.parametrize(("remote", "page"), [
    ("https://github.com/acme/samplecontroller.git", "https://github.com/acme/samplecontroller"),
    ("https://github.com/acme/samplecontroller", "https://github.com/acme/samplecontroller"),
    ("https://user@gitlab.example.org/ops/sc/", "https://gitlab.example.org/ops/sc"),
    ("git@github.com:acme/samplecontroller.git", "https://github.com/acme/samplecontroller"),
    ("/work/main", None),
    ("file:///work/main", None),
    ("../upstream", None),
    ("ssh://git@example.org:2222/acme/sc.git", None),
    ("", None),
])
def test_a_remote_links_its_web_page_or_nothing(remote: str, page: str | None) -> None:
    assert repository.web_address(remote) == page


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, timeout=30)


def test_the_configured_url_wins_then_pyproject_then_the_origin_remote(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert repository.repository_url(None, tmp_path) is None  # no remote, no pyproject.toml: no link
    git(tmp_path, "remote", "add", "origin", "/somewhere/on/disk")
    assert repository.repository_url(None, tmp_path) is None
    git(tmp_path, "remote", "set-url", "origin", "git@github.com:acme/sc.git")
    assert repository.repository_url(None, tmp_path) == "https://github.com/acme/sc"
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.urls]\nHomepage = "https://x.example"\n'
        'Repository = "https://git.example.org/x/"\n')
    assert repository.repository_url(None, tmp_path) == "https://git.example.org/x"
    assert repository.repository_url("https://mirror.example/x", tmp_path) == "https://mirror.example/x"


def page(header: str) -> str:
    return f"<!doctype html><html><body><header>{header}</header></body></html>"


def test_the_built_site_has_the_configured_link_on_every_page_and_none_broken(tmp_path: Path) -> None:
    link = '<a href="https://git.example.org/x" title="Go to repository" class="md-source">x</a>'
    (tmp_path / "guides").mkdir()
    (tmp_path / "index.html").write_text(page(link))
    (tmp_path / "guides" / "a.html").write_text(page("no link"))
    assert repository.problems(tmp_path, "https://git.example.org/x") == [
        "guides/a.html: no link to the repository https://git.example.org/x"]
    (tmp_path / "guides" / "a.html").write_text(page(link))
    assert repository.problems(tmp_path, "https://git.example.org/x") == []
    # unconfigured: the theme's element, an href of None or an empty one are placeholders left behind
    assert repository.problems(tmp_path, None) == [
        "guides/a.html: a repository link, and no repository configured",
        "index.html: a repository link, and no repository configured"]
    (tmp_path / "index.html").write_text(page('<a href="None">source</a>'))
    (tmp_path / "guides" / "a.html").write_text(page("<p>none</p>"))
    assert repository.problems(tmp_path, None) == ['index.html: a link to nowhere (href="None" or empty)']
