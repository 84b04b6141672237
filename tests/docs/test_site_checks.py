"""The site's reader checks (docs/hooks/checks.py), which fail ``make docs`` (so ``make test``): code
blocks of at most 88 columns and dedented, and a built site that loads nothing from outside it
(fonts, scripts, styles), with the mermaid and the search shim it needs shipped in docs/assets.

The checks run inside the one ``make docs`` build; these tests give them small pages to judge."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError

from docs.hooks import checks

ROOT = Path(__file__).resolve().parents[2]


def block(*lines: str, attrs: str = "") -> str:
    """A code block as pymdownx.highlight renders it (spans around tokens, HTML escapes)."""
    body = "\n".join(f'<span class="n">{line}</span>' for line in lines)
    return f'<div class="highlight"><pre{attrs}><span></span><code>{body}\n</code></pre></div>'


def test_a_line_of_88_columns_fits_and_89_does_not() -> None:
    assert checks.code_problems(block("x" * 88, "")) == []
    assert checks.code_problems(block("y = 1", "x" * 89)) == [
        "a code block has a line of 89 columns (at most 88): the block starting 'y = 1'"]


def test_an_escaped_character_is_one_column() -> None:
    assert checks.code_problems(block("&lt;" * 88)) == []


def test_a_block_indented_on_every_line_is_reported_and_blank_lines_do_not_count() -> None:
    method = block("    def reconcile(self):", "", "        return None")
    assert checks.code_problems(method) == [
        "a code block is indented by 4 on every line (dedent it): the block starting 'def reconcile(self):'"]
    assert checks.code_problems(block("def reconcile(self):", "", "    return None")) == []


def test_diagrams_are_not_code() -> None:
    assert checks.code_problems(block("    A --> " + "B" * 100, attrs=' class="mermaid"')) == []


def page(head: str, body: str = "") -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def test_the_offline_check_reports_scripts_styles_and_fonts_from_outside(tmp_path: Path) -> None:
    (tmp_path / "guides").mkdir()
    (tmp_path / "index.html").write_text(page(
        '<link rel="canonical" href="https://example.org/index.html">'
        '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>'
        '<link rel="stylesheet" href="assets/main.css">'
        '<script src="assets/bundle.js"></script>'))
    (tmp_path / "guides" / "a.html").write_text(page(
        '<script src="//cdn.example.org/x.js"></script><style>@import url("https://x.org/f.css");</style>',
        '<a href="https://kubernetes.io/">a link is no fetch</a><img src="http://x.org/badge.svg">'))
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "main.css").write_text(
        "@font-face{src:url(fonts/a.woff2)}body{background:url('https://x.org/bg.png')}")
    assert checks.offline_problems(tmp_path) == [
        "guides/a.html: script from outside the site: //cdn.example.org/x.js",
        "guides/a.html: image from outside the site: http://x.org/badge.svg",
        "guides/a.html: style from outside the site: https://x.org/f.css",
        "index.html: stylesheet, font or icon from outside the site: https://fonts.gstatic.com",
        "assets/main.css: font or stylesheet from outside the site: https://x.org/bg.png",
    ]


def test_a_page_with_a_diagram_needs_mermaid_from_the_site(tmp_path: Path) -> None:
    diagram = '<pre class="mermaid"><code>graph LR; A --> B</code></pre>'
    (tmp_path / "a.html").write_text(page("", diagram + '<script src="assets/bundle.js"></script>'))
    (tmp_path / "b.html").write_text(page("", diagram + '<script src="assets/vendor/mermaid/mermaid.min.js">'
                                              "</script>"))
    assert checks.offline_problems(tmp_path) == [
        "a.html: a diagram, and no mermaid script from the site (the theme would fetch one from a CDN)"]


def test_the_build_fails_on_both_after_the_last_page(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(page('<script src="https://unpkg.com/x.js"></script>'))
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    checks.on_pre_build(config)
    wide: object = type("Page", (), {"file": type("File", (), {"src_uri": "guides/testing.md"})()})()
    checks.on_page_content(block("x" * 100), wide, config, None)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=r"guides/testing.md: a code block has a line of 100 columns"):
        checks.on_post_build(config)
    checks.on_pre_build(config)
    with pytest.raises(PluginError, match=r"index.html: script from outside the site: https://unpkg.com/x.js"):
        checks.on_post_build(config)


def test_the_site_ships_what_it_would_otherwise_fetch() -> None:
    """No web fonts, links that work from files, search from files (the offline plugin, its shim from
    the site), mermaid from the site, previous/next links."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.theme["font"] is False
    assert config.use_directory_urls is False
    assert "material/offline" in config.plugins and "navigation.footer" in config.theme["features"]
    assert config.extra["polyfills"] == ["assets/vendor/iframe-worker/shim.js"]
    assert [str(s) for s in config.extra_javascript] == ["assets/vendor/mermaid/mermaid.min.js"]
    assert config.extra_css == ["assets/extra.css"]  # 88 columns fit the content column
    assert "1.8cqi" in (ROOT / "docs" / "assets" / "extra.css").read_text()
    for shipped in ("iframe-worker/shim.js", "iframe-worker/LICENSE", "mermaid/mermaid.min.js", "mermaid/LICENSE"):
        assert (ROOT / "docs" / "assets" / "vendor" / shipped).stat().st_size > 0
    assert config.site_url
    # the API reference shows an attribute's type, not `name = name` or a long literal
    python = config.plugins["mkdocstrings"].config["handlers"]["python"]["options"]
    assert python["show_attribute_values"] is False
