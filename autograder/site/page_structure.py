"""A rendered notebook made into a page to study from: its title, headings in order, a table of
contents, tables and code that may scroll sideways, and links between lessons.

nbconvert renders each Markdown cell as written, so a lesson that goes from `#` to `###` gives
h1 then h3. Here, on the rendered HTML (BeautifulSoup, which nbconvert itself depends on):

- the first h1 becomes the page title (the template puts it above the banner and the links);
- the other headings are renumbered as an outline: a heading sits one level below the nearest
  heading before it that was written with fewer `#` (so `#`, `###`, `###`, `##` gives h1, h2,
  h2, h2), which keeps their nesting and never skips a level;
- each heading gets a readable id (`the-graph-level-one-model-three-operators`), its anchor link
  follows, and the h2 and h3 headings make the table of contents;
- every table is wrapped in a `.table-wrap`, which may scroll sideways on a narrow screen, and a
  header cell left empty (the corner of a table) becomes an ordinary cell;
- links to another lesson's notebook (`02-tiling-trace.ipynb`, as a link or as `code`) go to
  that lesson's page.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, NavigableString, Tag

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
TOC_LEVELS = (2, 3)
# Ids the page itself uses; a heading never takes one of them.
RESERVED_IDS = frozenset({"main", "check-yourself", "check-yourself-title", "next-up-title", "measured-on-title",
                          "toc", "top"})


@dataclass(frozen=True)
class TocEntry:
    level: int  # 2 or 3
    id: str
    text: str


@dataclass
class StructuredNotebook:
    title: str | None  # the first h1's text
    body_html: str
    toc: list[TocEntry] = field(default_factory=list)


def structure(body_html: str, lesson_pages: dict[str, str] | None = None) -> StructuredNotebook:
    """See the module docstring; `lesson_pages` maps a lesson notebook's file name to its page's URL."""
    soup = BeautifulSoup(body_html, "html.parser")
    title = _take_title(soup)
    toc = _outline(soup, reserved=set(RESERVED_IDS))
    _wrap_tables(soup)
    _link_lessons(soup, lesson_pages or {})
    return StructuredNotebook(title, str(soup), toc)


def heading_text(tag: Tag) -> str:
    """A heading's text without its anchor link (the pilcrow nbconvert adds)."""
    parts = []
    for piece in tag.descendants:
        if isinstance(piece, NavigableString) and not (piece.parent and "anchor-link" in (piece.parent.get("class") or [])):
            parts.append(str(piece))
    return " ".join("".join(parts).split())


def _take_title(soup: BeautifulSoup) -> str | None:
    first = soup.find("h1")
    if first is None:
        return None
    text = heading_text(first)
    first.decompose()
    return text


def _outline(soup: BeautifulSoup, reserved: set[str]) -> list[TocEntry]:
    """Renumber the headings (see the module docstring), give them ids, and list the TOC's."""
    toc: list[TocEntry] = []
    stack: list[tuple[int, int]] = []  # (level as written, level given) of the open headings
    for tag in soup.find_all(list(HEADINGS)):
        written = int(tag.name[1])
        while stack and stack[-1][0] >= written:
            stack.pop()
        level = min(6, (stack[-1][1] if stack else 1) + 1)  # the page title is the only level 1
        stack.append((written, level))
        tag.name = f"h{level}"
        text = heading_text(tag)
        new_id = _unique(slug(text) or "section", reserved)
        rename_heading(soup, tag, new_id)
        if level in TOC_LEVELS:
            toc.append(TocEntry(level, new_id, text))
    return toc


def rename_heading(soup: BeautifulSoup, tag: Tag, new_id: str) -> None:
    """Give heading `tag` the id `new_id`, and move to it its own anchor link and the page's links
    to its old id."""
    old_id = tag.get("id")
    tag["id"] = new_id
    for anchor in tag.find_all("a", class_="anchor-link"):
        anchor["href"] = f"#{new_id}"
    if old_id:
        for link in soup.find_all("a", href=f"#{old_id}"):
            link["href"] = f"#{new_id}"


def slug(text: str) -> str:
    """Lower-case ASCII words joined by hyphens: '1. The graph level: one model' -> '1-the-graph-level-one-model'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:80].rstrip("-")


def _unique(candidate: str, taken: set[str]) -> str:
    name, number = candidate, 2
    while name in taken:
        name, number = f"{candidate}-{number}", number + 1
    taken.add(name)
    return name


def _wrap_tables(soup: BeautifulSoup) -> None:
    for table in soup.find_all("table"):
        for cell in table.find_all("th"):
            if not cell.get_text(strip=True) and not cell.find(["img", "svg"]):
                cell.name = "td"
        if table.parent is not None and "table-wrap" in (table.parent.get("class") or []):
            continue
        wrapper = soup.new_tag("div", attrs={"class": "table-wrap"})
        table.wrap(wrapper)


def _link_lessons(soup: BeautifulSoup, lesson_pages: dict[str, str]) -> None:
    if not lesson_pages:
        return
    for link in soup.find_all("a", href=True):
        target = link["href"].split("#", 1)
        name = target[0].rsplit("/", 1)[-1]
        if name in lesson_pages and not re.match(r"^[a-z]+:", target[0]):
            link["href"] = lesson_pages[name] + (f"#{target[1]}" if len(target) > 1 else "")
    for code in soup.find_all("code"):
        name = code.get_text().strip()
        if name in lesson_pages and code.find_parent(["a", "pre"]) is None:
            code.wrap(soup.new_tag("a", href=lesson_pages[name]))
