"""The feedback page shows what a student wrote, printed and tagged; none of it may act on the page.

nbconvert's HTML does not sanitise by default: a student's Markdown reaches the page as live
markup (`<script>`, `<img onerror=...>`), an output's text/html and application/javascript run
when the page opens, and a cell tag goes into a class attribute (a tag with a space in it adds
classes of the page's own CSS: a student's cell pinned over the score heading). Whoever opens the
page (the student, an instructor, a TA in the formgrader's browser) runs it. So the feedback is
built with two steps (course/nbgrader_config.py):

    SanitizeFeedback   the last feedback preprocessor: keeps of each cell only what the page
                       needs (its nbgrader marks, tags made of [A-Za-z0-9_-] only, a valid
                       cell id) and of each output only mimetypes that are shown as text or as
                       an image (text/html and text/markdown are cleaned where they are shown;
                       JavaScript, widgets and other mimetypes are dropped, and so is the
                       outputs' metadata, which can ask for an unsandboxed iframe)
    clean_html         nbconvert's `clean_html` template filter, replaced: bleach (nbconvert's
                       own dependency) with a list of harmless tags and attributes and no
                       class, id or style, nor any URL but http(s) and mailto. With
                       HTMLExporter.sanitize_html on, nbconvert's templates pass every output's
                       HTML through it and leave scripts out; the feedback template passes
                       every Markdown cell through it too.
"""
from __future__ import annotations

import re

import bleach
from nbformat.corpus.words import generate_corpus_id
from nbgrader.preprocessors import NbGraderPreprocessor

from .normalise import CELL_ID
from .plan import METADATA_KEY

TAG = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# What Markdown renders to, and what the trusted grader's own report uses (engine/report.py)
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div", "dl",
    "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "q", "s",
    "samp", "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "tt", "u", "ul", "var",
})
ATTRIBUTES = {
    "a": ["href", "title"],
    "abbr": ["title"],
    "img": ["src", "alt", "title", "width", "height"],
    "ol": ["start"],
    "td": ["align", "colspan", "rowspan"],
    "th": ["align", "colspan", "rowspan"],
}
PROTOCOLS = frozenset({"http", "https", "mailto"})
# Output data the page shows as text or as an image (image/svg+xml as an <img>, where no script runs)
SHOWN = frozenset({"text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/svg+xml"})
STREAMS = frozenset({"stdout", "stderr"})


def clean_html(element) -> str:
    """`element` (text, or bytes of UTF-8) with every tag and attribute not listed above escaped or
    dropped: the template filter that replaces nbconvert's own `clean_html`."""
    text = element.decode("utf-8", "replace") if isinstance(element, bytes) else str(element)
    # A Cleaner per call: bleach's are not safe to share between threads
    cleaner = bleach.Cleaner(tags=TAGS, attributes=ATTRIBUTES, protocols=PROTOCOLS, strip=False, strip_comments=True)
    return cleaner.clean(text)


class SanitizeFeedback(NbGraderPreprocessor):
    """Keeps of the notebook only what the feedback page shows, in forms that cannot act on it."""

    def preprocess(self, nb, resources):
        nb.metadata = {key: nb.metadata[key] for key in ("kernelspec", "language_info", METADATA_KEY) if key in nb.metadata}
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        metadata = cell.get("metadata", {})
        kept = {}
        if isinstance(metadata.get("nbgrader"), dict):
            kept["nbgrader"] = metadata["nbgrader"]
        tags = metadata.get("tags")
        if isinstance(tags, list):
            kept["tags"] = [tag for tag in tags if isinstance(tag, str) and TAG.match(tag)]
        cell.metadata = kept
        if "id" in cell and not (isinstance(cell.id, str) and CELL_ID.match(cell.id)):
            cell.id = generate_corpus_id()  # it becomes an element's id: one of nbformat's own instead
        cell.pop("attachments", None)
        if cell.get("cell_type") == "code":
            cell.outputs = [kept for kept in map(_shown, cell.get("outputs", [])) if kept is not None]
        return cell, resources


def _shown(output):
    """`output` reduced to what the page shows safely, or None for nothing."""
    kind = output.get("output_type")
    if kind == "stream":
        return output if output.get("name") in STREAMS and isinstance(output.get("text"), str) else None
    if kind == "error":
        return output
    if kind not in ("execute_result", "display_data") or not isinstance(output.get("data"), dict):
        return None
    output.data = {mime: value for mime, value in output.data.items() if mime in SHOWN and isinstance(value, str)}
    output.metadata = {}
    return output if output.data else None
