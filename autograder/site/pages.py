"""The site's page shell: Jinja2 templates (package data in templates/) and their filters.

Every page extends templates/base.html, which links the stylesheet and scripts by a relative
path (`root`), so the built folder works from file:// as well as from a server.
"""
from __future__ import annotations

import html
import json
import re
from functools import lru_cache

import jinja2
from markupsafe import Markup

_CODE_SPAN = re.compile(r"`([^`]+)`")


def text_to_html(text: str | None) -> Markup:
    """The little Markdown quiz text uses: paragraphs and `code` spans (as the notebook widget)."""
    if not text:
        return Markup("")
    paragraphs = html.escape(text.strip()).split("\n\n")
    return Markup("".join("<p>" + _CODE_SPAN.sub(r"<code>\1</code>", p) + "</p>" for p in paragraphs))


def script_json(data: object) -> Markup:
    """JSON safe to embed in <script type="application/json">: no '<' can close the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("autograder.site", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text_to_html"] = text_to_html
    env.filters["script_json"] = script_json
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
