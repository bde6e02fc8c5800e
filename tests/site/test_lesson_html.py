"""An executed notebook as a lesson page's body: prose, code, outputs, embedded plots, nothing remote."""
from __future__ import annotations

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.site.executed import executed_notebook
from autograder.site.notebook_html import WIDGET_NOTE, first_heading, render_notebook, without_widgets

from site_test_course import tiny_notebook


@pytest.fixture(scope="module")
def executed_tiny(tmp_path_factory, session_cache):
    folder = tmp_path_factory.mktemp("lesson")
    path = folder / "tiny.ipynb"
    nbformat.write(tiny_notebook(), path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVM_COURSE_CACHE", str(session_cache))
        return executed_notebook(path), folder


def test_renders_prose_code_outputs_and_an_embedded_plot(executed_tiny):
    notebook, folder = executed_tiny
    rendered = render_notebook(notebook, folder)
    html = rendered.body_html
    assert rendered.title == "A tiny lesson"
    assert "<h1" in html and "A tiny lesson" in html
    assert "tiles per axis: 14" in html  # stdout of a real run
    assert 'class="highlight' in html and "print" in html  # highlighted code
    assert re.search(r'<img[^>]+src="data:image/png;base64,', html)  # the plot, inside the page
    assert "<table>" in html and "speedup" in html and "2.5x" in html  # Markdown output rendered as a table
    assert "In&nbsp;[" not in html  # no prompts for readers


def test_nothing_is_fetched_from_elsewhere(executed_tiny):
    notebook, folder = executed_tiny
    html = render_notebook(notebook, folder).body_html
    assert not re.search(r"<script|<link|<iframe", html)
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_widgets_become_a_note_and_their_state_is_dropped():
    notebook = new_notebook(cells=[new_code_cell("show(quiz)", outputs=[new_output(
        "display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                                            "version_minor": 0},
                              "text/plain": "QuizWidget(children=(...))"})])])
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cleaned = without_widgets(notebook)
    assert "widgets" not in cleaned.metadata and "widgets" in notebook.metadata  # a copy
    html = render_notebook(notebook, ".").body_html
    assert WIDGET_NOTE.strip("()") in html and "QuizWidget" not in html and "widget-state" not in html


def test_tags_hide_cells_inputs_and_outputs():
    cells = [new_code_cell("secret_setup()", metadata={"tags": ["remove-cell"]},
                           outputs=[new_output("stream", name="stdout", text="setup output\n")]),
             new_code_cell("hidden_input()", metadata={"tags": ["remove-input"]},
                           outputs=[new_output("stream", name="stdout", text="visible output\n")]),
             new_code_cell("visible_input()", metadata={"tags": ["remove-output"]},
                           outputs=[new_output("stream", name="stdout", text="hidden output\n")])]
    html = render_notebook(new_notebook(cells=cells), ".").body_html
    assert "secret_setup" not in html and "setup output" not in html
    assert "hidden_input" not in html and "visible output" in html
    assert "visible_input" in html and "hidden output" not in html


def test_first_heading_is_the_first_level_one_heading():
    notebook = new_notebook(cells=[new_markdown_cell("Intro text\n\n## Not this"),
                                   new_markdown_cell("# The *tiling* trace\n\nText")])
    assert first_heading(notebook) == "The tiling trace"
    assert first_heading(new_notebook(cells=[new_markdown_cell("## only level two")])) is None


_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_a_plot_gets_its_summary_as_alt_text_and_others_a_plain_one(executed_tiny):
    from autograder.site.notebook_html import FALLBACK_ALT

    summary = 'Bar chart: speedup over "unscheduled": journal 0.80x & register-blocked 2.41x.'
    notebook = new_notebook(cells=[
        new_code_cell("plots.speedup_bars(comparison)", outputs=[
            new_output("display_data", data={"image/png": _PNG}, metadata={"image/png": {"alt": summary}}),
            new_output("stream", name="stdout", text=summary + "\n")]),
        new_code_cell("plt.show()", outputs=[new_output("display_data", data={"image/png": _PNG})]),
    ])
    assert _image_alts(render_notebook(notebook, ".").body_html) == [summary, FALLBACK_ALT]
    # the executed tiny notebook's plain matplotlib plot gets the plain statement too
    notebook, folder = executed_tiny
    assert _image_alts(render_notebook(notebook, folder).body_html) == [FALLBACK_ALT]


def _image_alts(html: str) -> list:
    from html.parser import HTMLParser

    alts = []

    class Images(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "img":
                alts.append(dict(attrs).get("alt"))

    Images().feed(html)
    return alts
