"""The course's guides (Markdown pages in the repository's docs/) as pages of the website, beside
the lessons: `guides/<name>.html`.

Which guides go in is GUIDES, in the order the course map lists them: the pages written for
readers of the course. The site is handed to students (the student edition carries it), so a
guide goes in only if it holds no answer; the student edition checks every page it carries, and
tests/site/test_guides.py checks these. docs/architecture.md stays in the repository: it is for
whoever changes the code. A course without docs/ (the tests' tiny course) has no guides.

Each guide is rendered as the lessons' prose is (nbconvert's Markdown renderer, mistune, with
Pygments for code), then page_structure puts its headings in order and lists them. Links:

- to a section of the same guide or of another guide in the site (`grading.md#what-is-graded`):
  to that page and section. Guides are written for GitHub, whose heading anchors (`anchor`) differ
  from the site's ids (page_structure.slug), so each heading's GitHub anchor is mapped to its id;
- to anything else in the repository (the README, the architecture, a source file): to that file
  in the course's repository when the site is built with one (`--repo-url`), else the link's
  text without the link;
- to the web (`https://...`): as written.
"""
from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup

from .page_structure import HEADINGS, TocEntry, heading_text, rename_heading, structure

DOCS_FOLDER = "docs"
GUIDES_FOLDER = "guides"
# (name, title in the course map): docs/<name>.md becomes guides/<name>.html.
GUIDES = (
    ("students", "For students"),
    ("grading", "How grading works"),
    ("speed", "How speed is measured"),
    ("security", "The security model"),
    ("instructors", "For instructors"),
    ("authors", "For authors"),
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def guide_page(name: str) -> str:
    """A guide page's path relative to the site root."""
    return f"{GUIDES_FOLDER}/{name}.html"


def anchor(text: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as
    hyphens ('A term, step by step' -> 'a-term-step-by-step'). Repeats get -1, -2 (`anchors`)."""
    text = re.sub(r"[`*_]|<[^>]+>", "", text).strip().lower()
    text = "".join(ch for ch in text if ch in " -" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def markdown_headings(text: str) -> list[str]:
    """The text of each ATX heading (`#` ... `######`) of a Markdown document, outside code blocks."""
    headings, fence = [], None
    for line in text.splitlines():
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0]
            elif stripped.startswith(fence * 3):
                fence = None
            continue
        if fence is None:
            match = re.match(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", line)
            if match:
                headings.append(match.group(1))
    return headings


def anchors(headings: list[str]) -> list[str]:
    """GitHub's anchors for a document's headings in order: a repeated one gets -1, -2, ..."""
    seen: dict[str, int] = {}
    found = []
    for heading in headings:
        base = anchor(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.append(base if count == 0 else f"{base}-{count}")
    return found


@dataclass
class RenderedGuide:
    name: str
    nav_title: str
    source: Path
    title: str
    body_html: str
    toc: list[TocEntry] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # GitHub anchor -> the page's id

    @property
    def page(self) -> str:
        return guide_page(self.name)


def available(root: str | Path) -> list[tuple[str, str, Path]]:
    """(name, title, path) of each guide of GUIDES that the course at `root` has, in order."""
    folder = Path(root) / DOCS_FOLDER
    return [(name, title, folder / f"{name}.md") for name, title in GUIDES if (folder / f"{name}.md").is_file()]


def render_guides(root: str | Path, repository=None) -> list[RenderedGuide]:
    """Every available guide of the course at `root`, its links rewritten for the site (see the
    module docstring); `repository`: notebook_links.Repository, or None."""
    root = Path(root).resolve()
    guides = [_render(name, title, path) for name, title, path in available(root)]
    by_source = {guide.source.resolve(): guide for guide in guides}
    for guide in guides:
        soup = BeautifulSoup(guide.body_html, "html.parser")
        for link in soup.find_all("a", href=True):
            _relink(link, guide, by_source, root, repository)
        guide.body_html = str(soup)
    return guides


def _render(name: str, nav_title: str, path: Path) -> RenderedGuide:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    text = path.read_text(encoding="utf-8")
    soup = BeautifulSoup(markdown2html_mistune(text), "html.parser")
    # Give each heading GitHub's anchor as its id, so that structure() maps it (and the links to
    # it within the page) to the site's own id.
    tags = soup.find_all(list(HEADINGS))
    github = anchors([heading_text(tag) for tag in tags])
    for tag, github_id in zip(tags, github):
        rename_heading(soup, tag, github_id)
    page = structure(str(soup))
    # structure() took the first h1 out as the page's title; the other headings keep their order.
    remaining = list(github)
    first_h1 = next((i for i, tag in enumerate(tags) if tag.name == "h1"), None)
    if first_h1 is not None:
        del remaining[first_h1]
    after = BeautifulSoup(page.body_html, "html.parser").find_all(list(HEADINGS))
    ids = dict(zip(remaining, (tag["id"] for tag in after)))
    return RenderedGuide(name, nav_title, path.resolve(), page.title or nav_title, page.body_html, page.toc, ids)


def _relink(link, guide: RenderedGuide, by_source: dict[Path, RenderedGuide], root: Path, repository) -> None:
    href = link["href"]
    if _SCHEME.match(href) or href.startswith("//"):
        return
    target, _, fragment = href.partition("#")
    if not target:  # a section of this page: structure() has already rewritten it
        return
    resolved = (guide.source.parent / target).resolve()
    other = by_source.get(resolved)
    if other is not None:
        section = other.ids.get(fragment, fragment) if fragment else ""
        link["href"] = posixpath.relpath(other.page, posixpath.dirname(guide.page)) + (f"#{section}" if section else "")
        return
    try:
        relative = resolved.relative_to(root).as_posix()
    except ValueError:
        relative = None
    if repository is not None and relative is not None:
        link["href"] = repository.blob(relative) + (f"#{fragment}" if fragment else "")
        link["rel"] = "noopener"
    else:
        link.unwrap()
