"""MkDocs hook: the checks a reader's view of the site needs, failing ``make docs`` (``PluginError``).

- **Code that fits**: every code block of a page, as rendered (included snippets and blocks inside
  admonitions count), has lines of at most ``MAX_COLUMNS`` characters and no indentation common to
  all its lines (a method shown alone is dedented). Diagrams (mermaid) are not code.
- **Offline**: no built page loads a script, a stylesheet, a font or an image from outside the site
  (an ``http(s)://`` or protocol-relative URL in ``<script src>``, ``<link href>``, ``<img src>``, or a
  ``url()``/``@import`` of a built stylesheet), and a page with a diagram loads mermaid from the site
  (the theme would fetch it from a CDN otherwise).

``python docs/hooks/checks.py site/`` runs the offline check on a built site.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

MAX_COLUMNS = 88

_CODE = re.compile(r"<pre(?P<attrs>[^>]*)>(?P<body>.*?)</pre>", re.S)
_TAG = re.compile(r"<[^>]+>")
_OUTSIDE = r"(?:[a-z][a-z0-9+.-]*:)?//"  # http://, https://, //host
_CSS_URL = r"(?:@import\s+(?:url\()?|url\()\s*[\"']?(?P<url>[^\"') ;]+)"
_HTML_REFS = (
    ("script", re.compile(r"<script\b[^>]*\bsrc=[\"']?(?P<url>[^\"' >]+)", re.I)),
    ("stylesheet, font or icon", re.compile(r"<link\b(?![^>]*\brel=[\"']?(?:canonical|alternate|prev|next|"
                                            r"author|license|help|me)\b)[^>]*\bhref=[\"']?(?P<url>[^\"' >]+)",
                                            re.I)),
    ("image", re.compile(r"<img\b[^>]*\bsrc=[\"']?(?P<url>[^\"' >]+)", re.I)),
)
_CSS_REFS = re.compile(_CSS_URL, re.I)
_STYLE = re.compile(r"<style\b[^>]*>(?P<css>.*?)</style>|\bstyle=\"(?P<inline>[^\"]*)\"", re.I | re.S)
_MERMAID_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=[\"']?(?P<url>[^\"' >]*mermaid[^\"' >]*\.js)", re.I)


def code_blocks(page_html: str) -> Iterator[list[str]]:
    """The text lines of each code block of a rendered page (diagrams left out)."""
    for match in _CODE.finditer(page_html):
        if "mermaid" in match.group("attrs"):
            continue
        text = html.unescape(_TAG.sub("", match.group("body")))
        yield text.expandtabs(4).rstrip("\n").split("\n")


def code_problems(page_html: str, max_columns: int = MAX_COLUMNS) -> list[str]:
    """What does not fit in a page's code blocks: one line per problem, naming the block's first line."""
    problems = []
    for lines in code_blocks(page_html):
        text = [line for line in lines if line.strip()]
        if not text:
            continue
        first = text[0].strip()[:40]
        widest = max(len(line) for line in lines)
        if widest > max_columns:
            problems.append(f"a code block has a line of {widest} columns (at most {max_columns}): "
                            f"the block starting {first!r}")
        indent = min(len(line) - len(line.lstrip()) for line in text)
        if indent:
            problems.append(f"a code block is indented by {indent} on every line (dedent it): "
                            f"the block starting {first!r}")
    return problems


def _outside(url: str) -> bool:
    return re.match(_OUTSIDE, url.strip(), re.I) is not None


def offline_problems(site: Path) -> list[str]:
    """What a built site would fetch from outside it: one line per reference, with its file."""
    problems = []
    for path in sorted(site.rglob("*.html")):
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(site).as_posix()
        for kind, pattern in _HTML_REFS:
            problems += [f"{where}: {kind} from outside the site: {m.group('url')}"
                         for m in pattern.finditer(text) if _outside(m.group("url"))]
        for style in _STYLE.finditer(text):
            css = html.unescape(style.group("css") or style.group("inline") or "")
            problems += [f"{where}: style from outside the site: {m.group('url')}"
                         for m in _CSS_REFS.finditer(css) if _outside(m.group("url"))]
        if '<pre class="mermaid">' in text and not any(
                not _outside(m.group("url")) for m in _MERMAID_SCRIPT.finditer(text)):
            problems.append(f"{where}: a diagram, and no mermaid script from the site (the theme would "
                            "fetch one from a CDN)")
    for path in sorted(site.rglob("*.css")):
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(site).as_posix()
        problems += [f"{where}: font or stylesheet from outside the site: {m.group('url')}"
                     for m in _CSS_REFS.finditer(text) if _outside(m.group("url"))]
    return problems


_width: list[str] = []  # this build's code problems, reported together after the last page


def _fail(what: str, problems: Iterable[str]) -> None:
    problems = list(problems)
    if problems:
        raise PluginError(f"{what}:\n  " + "\n  ".join(problems))


def on_pre_build(config: MkDocsConfig) -> None:
    """Start a build with no problems found."""
    _width.clear()


def on_page_content(html_text: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Note the code blocks that do not fit."""
    _width.extend(f"{page.file.src_uri}: {problem}" for problem in code_problems(html_text))
    return html_text


def on_post_build(config: MkDocsConfig, **kwargs: Any) -> None:
    """Fail the build on code that does not fit, or on a page that loads something from outside."""
    _fail(f"code that does not fit ({MAX_COLUMNS} columns, dedented)", _width)
    _fail("the site is not readable offline", offline_problems(Path(config.site_dir)))


if __name__ == "__main__":
    found = offline_problems(Path(sys.argv[1] if len(sys.argv) > 1 else "site"))
    print("\n".join(found) or "no reference to outside the site")
    sys.exit(1 if found else 0)
