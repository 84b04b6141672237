"""MkDocs hook: the source repository's link in every page's header, from what the project says.

The project has no public address to invent, so the link comes, first found, from:

1. ``REPO_URL`` in the environment (``repo_url: !ENV REPO_URL`` in mkdocs.yml);
2. ``[project.urls]`` of pyproject.toml: its ``Repository``, ``Source`` or ``Source Code`` entry
   (the names the Python packaging guide lists), as PyPI shows it;
3. the checkout's ``origin`` remote (``git remote get-url origin``) when it is a web address
   (``https://...``, or ``git@host:owner/name.git``, made ``https://host/owner/name``); a
   remote on the file system or over ``ssh://`` with a port has no page to link to.

None of these: no link at all (the theme shows none). The built site is checked: with a link, every
page's header has it; without one, no page has the theme's repository element or an ``href`` of
``None`` or an empty one.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
URL_KEYS = ("repository", "source", "source code")
_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+\.[a-z]{2,}):(?P<path>[\w./-]+?)(?:\.git)?/?$", re.I)
_HTTPS = re.compile(r"^https://(?:[^@/]+@)?(?P<rest>[\w.-]+\.[a-z]{2,}/[\w./-]+?)(?:\.git)?/?$", re.I)


def from_pyproject(pyproject: Path) -> str | None:
    """The repository's address from ``[project.urls]`` (None without one)."""
    if not pyproject.is_file():
        return None
    urls = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    for key, value in urls.items():
        if key.strip().lower() in URL_KEYS and str(value).startswith("https://"):
            return str(value).rstrip("/")
    return None


def web_address(remote: str) -> str | None:
    """The web page of a git remote (None for a remote that has none: a path, ``file://``)."""
    remote = remote.strip()
    https = _HTTPS.match(remote)
    if https:
        return "https://" + https.group("rest")
    scp = _SCP.match(remote)
    if scp and "/" not in scp.group("host"):
        return f"https://{scp.group('host')}/{scp.group('path')}"
    return None


def from_git(checkout: Path) -> str | None:
    """The web page of the checkout's ``origin`` remote (None without one, or without git)."""
    try:
        done = subprocess.run(["git", "-C", str(checkout), "remote", "get-url", "origin"],
                              capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return None
    return web_address(done.stdout) if done.returncode == 0 else None


def repository_url(configured: str | None, checkout: Path = ROOT) -> str | None:
    """The link to show: the configured one, else pyproject.toml's, else the git remote's."""
    return configured or from_pyproject(checkout / "pyproject.toml") or from_git(checkout)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill ``repo_url`` when mkdocs.yml's ``REPO_URL`` is unset."""
    config.repo_url = repository_url(config.repo_url or None)
    return config


def problems(site: Path, repo_url: str | None) -> list[str]:
    """How the built pages' repository link is wrong: one line per page."""
    found = []
    for path in sorted(site.rglob("*.html")):
        if path.parent.name == "404" or path.name == "404.html":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(site).as_posix()
        if repo_url and f'href="{repo_url}"' not in text:
            found.append(f"{where}: no link to the repository {repo_url}")
        if not repo_url and 'class="md-source"' in text:
            found.append(f"{where}: a repository link, and no repository configured")
        if re.search(r'\bhref="(?:None|)"', text):
            found.append(f"{where}: a link to nowhere (href=\"None\" or empty)")
    return found


def on_post_build(config: MkDocsConfig) -> None:
    """Fail the build on a page without the configured link, or with a broken one."""
    found = problems(Path(config.site_dir), config.repo_url)
    if found:
        raise PluginError("the repository link:\n  " + "\n  ".join(found[:20]))
