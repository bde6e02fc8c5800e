"""autograder/nbgrader_ext/feedback_html.py: nothing a notebook holds acts on its feedback page.

The course's own feedback exporter (its template, the clean_html filter, sanitize_html and
SanitizeFeedback, all from course/nbgrader_config.py) renders notebooks built here that hold
what a student can put in one: Markdown with markup in a written answer and in a cell of
their own, outputs their code printed (where the course runs notebooks), tags and ids. The
page is parsed and compared with the page of the same notebook without any of it
(tests/html_page.py). The grading run's own feedback is checked in test_hostile_notebooks.py.
"""
from __future__ import annotations

import copy
import re

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader.converters import GenerateFeedback

from autograder.course.course_dir import load_course_config
from autograder.nbgrader_ext.feedback import GetGradesWithPending
from autograder.nbgrader_ext.feedback_html import SanitizeFeedback, clean_html

from bundled_course import COURSE
from html_page import live_markup

MARKUP = "\n\n".join([
    "My **answer**, with a [link](https://example.org) and `code`.",
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('onerror')>",
    "<details open ontoggle=alert('details')><summary>more</summary>text</details>",
    "[a markdown link](javascript:alert('link'))",
    "<a href=\"jav&#x09;ascript:alert('entity')\">an entity in the scheme</a>",
    "<div class=\"navbar navbar-fixed-top\" style=\"position: fixed; top: 0\"><h4>Score: 14.0 / 14.0</h4></div>",
    "<style>h4 { display: none }</style><link rel=stylesheet href=https://evil.example/x.css>",
    "<iframe src=\"https://evil.example\"></iframe><object data=x.swf></object><embed src=x.swf>",
    "<svg><script>alert('svg')</script></svg><math><mtext><table><mglyph><style><img src=x onerror=alert('mxss')>",
    "<form action=\"https://evil.example\"><input name=password><button formaction=javascript:alert(1)>go</button></form>",
    "<base href=\"https://evil.example/\"><meta http-equiv=refresh content=\"0;url=https://evil.example\">",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">data</a> <p id=\"top\" class=\"pull-right\">ids</p>",
])
TAGS = ["x navbar-fixed-top", "\"><script>alert('tag')</script>", "forged-heading pull-right", "fine_tag-1"]
PLANTED = [*TAGS, "navbar navbar-fixed-top", "pull-right"]  # tags, and the class attributes in MARKUP
SVG = "<svg xmlns='http://www.w3.org/2000/svg' onload=\"alert('svg-onload')\"><script>alert('svg-script')</script></svg>"


def answer(cell, grade_id, **marks):
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": True, **marks}
    return cell


def notebook(hostile: bool):
    """An autograded notebook: a written answer, a code answer, a test cell, and (hostile) what students can add."""
    text = MARKUP if hostile else "My **answer**, with a [link](https://example.org) and `code`."
    code = new_code_cell("result = 1", execution_count=1)
    test = new_code_cell("assert result", execution_count=2)
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "test", "locked": True, "points": 2, "schema_version": 3,
                                 "solution": False, "score": 2.0, "pending": False}
    cells = [
        new_markdown_cell("# Assignment"),
        answer(new_markdown_cell(text), "written", grade=True, points=3, score=0.0, pending=False),
        answer(code, "code"),
        test,
    ]
    code.outputs = [  # what an honest run prints (where the course runs notebooks): the template's classes for each
        new_output("display_data", data={"text/html": "<b>bold</b>", "text/plain": "bold"}),
        new_output("display_data", data={"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'></svg>"}),
        new_output("display_data", data={"text/markdown": "*markdown*"}),
        new_output("execute_result", data={"text/plain": "1"}, execution_count=1),
        new_output("stream", name="stdout", text="printed in \x1b[31mred\x1b[0m"),
        new_output("error", ename="Error", evalue="raised", traceback=["Error: raised"]),
    ]
    if hostile:
        cells.insert(1, new_markdown_cell(MARKUP, attachments={"x.png": {"image/png": "iVBORw0KGgo="}}))
        cells.insert(2, new_raw_cell("<script>alert('raw')</script>", metadata={"raw_mimetype": "text/html"}))
        for cell in cells:
            cell.metadata["tags"] = list(TAGS)
            cell.metadata["jupyter"] = {"source_hidden": False}
        code.outputs += [
            new_output("display_data", data={"text/html": "<b onclick=alert('click')>bold</b><script>alert('html')</script>",
                                             "text/plain": "bold"}),
            new_output("display_data", data={"image/svg+xml": SVG}),
            new_output("display_data", data={"application/javascript": "alert('js')", "text/plain": "<IPython.Javascript>"}),
            new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "w"}),
            new_output("display_data", data={"text/markdown": "<img src=x onerror=alert('md-output')>"}),
            new_output("display_data", data={"text/html": "<script>alert('isolated')</script>"}, metadata={"text/html": {"isolated": True}}),
            new_output("display_data", data={"text/vnd.mermaid": "graph TD; A-->B", "application/pdf": "JVBERi0="}),
            new_output("execute_result", data={"text/plain": "<script>alert('plain')</script>"}, execution_count=1),
            new_output("stream", name="stdout", text="<script>alert('stream')</script>\x1b[31mred\x1b[0m"),
            new_output("error", ename="Error", evalue="<script>alert('evalue')</script>", traceback=["<script>alert('tb')</script>"]),
        ]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    if hostile:
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}}
    return nb


def render(nb) -> str:
    """`nb` through the course's feedback exporter and preprocessors, as GenerateFeedback renders
    it, but for reading the scores from a gradebook."""
    config = GenerateFeedback(config=load_course_config(COURSE)).config
    exporter = HTMLExporter(config=config)
    for preprocessor in config.GenerateFeedback.preprocessors:
        if preprocessor is not GetGradesWithPending:
            exporter.register_preprocessor(preprocessor(config=config), enabled=True)
    resources = {"nbgrader": {"notebook": "tiling", "score": 2.0, "max_score": 5.0, "pending_points": 0.0, "late_penalty": 0.0}}
    html, _ = exporter.from_notebook_node(copy.deepcopy(nb), resources=resources)
    return html


@pytest.fixture(scope="module")
def pages():
    return render(notebook(hostile=False)), render(notebook(hostile=True))


def test_nothing_a_notebook_holds_runs_in_or_restyles_its_feedback_page(pages):
    honest, hostile = pages
    assert live_markup(honest, honest) == []
    assert live_markup(hostile, honest, PLANTED) == []
    soup = BeautifulSoup(hostile, "html.parser")
    heading, *forged = soup.find_all("h4")  # a student's own heading stays in their cell, unstyled
    assert heading.get_text().startswith("tiling (Score: 2.0 / 5.0)")
    assert forged and all(h.find_parent("div", class_="text_cell_render") is not None for h in forged)
    assert "alert('script')" in soup.get_text()  # escaped text, shown, not run


def test_the_written_answer_keeps_its_markdown(pages):
    _, hostile = pages
    soup = BeautifulSoup(hostile, "html.parser")
    assert soup.find("strong", string="answer") is not None and soup.find("code", string="code") is not None
    assert soup.find("a", href="https://example.org") is not None
    assert soup.find("details") is not None  # harmless markup stays


def test_tags_reach_the_page_only_as_one_prefixed_class_each(pages):
    _, hostile = pages
    classes = {c for tag in BeautifulSoup(hostile, "html.parser").find_all(class_=True) for c in tag["class"]}
    assert "celltag_fine_tag-1" in classes
    assert not {"navbar-fixed-top", "forged-heading", "celltag_x", "celltag_forged-heading"} & classes


def test_outputs_are_shown_only_as_text_and_images(pages):
    _, hostile = pages
    soup = BeautifulSoup(hostile, "html.parser")
    images = [img["src"] for img in soup.find_all("img") if img.get("src", "").startswith("data:")]
    assert [src.split(";")[0] for src in images] == ["data:image/svg+xml"] * 2  # SVG as an image, where no script runs
    assert "graph TD" not in hostile and "JVBERi0" not in hostile and "widget-state" not in hostile
    assert len(soup.find_all("b", string="bold")) == 2  # text/html, cleaned


@pytest.mark.parametrize("markup, kept", [
    ("<b>bold</b> <i>it</i> <code>x</code> <pre>p</pre> <table><tr><td colspan=2>t</td></tr></table>",
     "<b>bold</b> <i>it</i> <code>x</code> <pre>p</pre> <table><tbody><tr><td colspan=\"2\">t</td></tr></tbody></table>"),
    ("<a href='https://e.org' title=t onclick=x()>a</a>", '<a href="https://e.org" title="t">a</a>'),
    ("<a href='javascript:x()'>a</a>", "<a>a</a>"),
    ("<img src=x.png onerror=x() alt=a>", '<img src="x.png" alt="a">'),
    ("<span class=navbar style='position: fixed' id=top>s</span>", "<span>s</span>"),
    ("<script>x()</script>", "&lt;script&gt;x()&lt;/script&gt;"),
    ("<!-- <script>x()</script> -->", ""),
    (b"<b>bytes</b>", "<b>bytes</b>"),
])
def test_clean_html(markup, kept):
    assert clean_html(markup) == kept


def test_sanitize_feedback_keeps_what_the_page_shows():
    nb = notebook(hostile=True)
    nb.cells[0].id = "bad id\" onclick=\"alert(1)"  # not valid nbformat (nbconvert would refuse to render it)
    SanitizeFeedback().preprocess(nb, {})
    assert set(nb.metadata) == {"kernelspec"}
    for cell in nb.cells:
        assert set(cell.metadata) <= {"nbgrader", "tags"} and cell.metadata["tags"] == ["fine_tag-1"]
        assert "attachments" not in cell
    assert nb.cells[0].id != "bad id\" onclick=\"alert(1)" and re.fullmatch("[a-z0-9-]+", nb.cells[0].id)
    code = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "code")
    shown = [sorted(o.get("data", {})) or o.output_type for o in code.outputs]
    honest = [["text/html", "text/plain"], ["image/svg+xml"], ["text/markdown"], ["text/plain"], "stream", "error"]
    assert shown == honest + [["text/html", "text/plain"], ["image/svg+xml"], ["text/plain"], ["text/plain"], ["text/markdown"],
                              ["text/html"], ["text/plain"], "stream", "error"]  # nothing left of the mermaid and PDF output
    assert all(o.get("metadata", {}) == {} for o in code.outputs)
    nbformat.validate(nb)
