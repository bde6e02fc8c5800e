"""What a feedback page holds that could act on whoever opens it, for the tests to assert on.

A page is compared with an honest student's page made by the same template: the template's own
scripts (MathJax) and styles are the baseline, and anything beyond them came from the notebook;
classes are looked for by name, the names the test planted. Parsed with BeautifulSoup, as a
browser would build the elements.
"""
from __future__ import annotations

import re
from collections import Counter

from bs4 import BeautifulSoup

# Elements that run code, load a document, submit, or restyle the page
ACTIVE = ("script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "style", "link", "meta", "base",
          "svg", "math", "template")
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "data", "srcdoc", "poster", "background", "lowsrc")


def live_markup(html: str, honest: str, planted=()) -> list[str]:
    """What `html` has beyond the honest page `honest` that could run, navigate or restyle, and
    any class named by `planted` (the tags and class attributes a student wrote: each word of
    them) unless nbconvert's celltag_ prefix defuses it; [] for nothing."""
    page, own = BeautifulSoup(html, "html.parser"), BeautifulSoup(honest, "html.parser")
    found = [f"<{name}> {where!r}" for (name, where) in (_actives(page) - _actives(own))]
    planted = {word for text in planted for word in text.split()} - {name for tag in own.find_all(class_=True) for name in tag["class"]}
    own_styles = {(tag.name, tag["style"]) for tag in own.find_all(style=True)}
    for tag in page.find_all(True):
        for name, value in tag.attrs.items():
            values = value if isinstance(value, list) else [value]
            if name.lower().startswith("on"):
                found.append(f"<{tag.name} {name}={str(value)[:40]!r}>")
            elif name.lower() in URL_ATTRIBUTES and any(_unsafe_url(tag.name, name, str(v)) for v in values):
                found.append(f"<{tag.name} {name}={str(value)[:60]!r}>")
            elif name == "style" and (tag.name, value) not in own_styles:
                found.append(f"<{tag.name} style={value[:60]!r}>")
        found += [f"<{tag.name} class={c!r}>" for c in tag.get("class", []) if c in planted]
    return found


def _actives(soup) -> Counter:
    return Counter((tag.name, tag.get("src") or tag.get("href") or tag.get_text()[:200]) for tag in soup.find_all(ACTIVE))


def _unsafe_url(element: str, attribute: str, url: str) -> bool:
    scheme = re.sub(r"[\x00-\x20]", "", url).lower()  # browsers skip controls and spaces in a scheme
    if scheme.startswith(("data:image/png", "data:image/jpeg", "data:image/svg+xml")):
        return not (element == "img" and attribute == "src")  # an image, where no script runs
    return scheme.startswith(("javascript:", "vbscript:", "data:", "file:")) or attribute == "srcdoc"
