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


def test_renders_prose_code_outputs_and_a_figure(executed_tiny):
    notebook, folder = executed_tiny
    rendered = render_notebook(notebook, folder, figure_prefix="tiny")
    html = rendered.body_html
    assert rendered.title == "A tiny lesson"
    assert "<h1" not in html  # the title is the page's, above the banner
    assert "It prints, plots and shows a table." in html
    assert "tiles per axis: 14" in html  # stdout of a real run
    assert 'class="highlight' in html and "print" in html  # highlighted code
    [figure] = rendered.figures
    assert figure.file == "figures/tiny-1.png" and figure.data.startswith(b"\x89PNG")
    assert re.search(r'<a class="figure-link" href="figures/tiny-1.png"><img[^>]+src="figures/tiny-1.png"', html)
    assert "data:image/png" not in html  # the plot is a file of its own, not inlined
    assert "<table>" in html and "speedup" in html and "2.5x" in html  # Markdown output rendered as a table
    assert "In&nbsp;[" not in html  # no prompts for readers


def test_plots_are_drawn_at_twice_the_size_they_are_shown_at(executed_tiny):
    import struct

    notebook, folder = executed_tiny
    [figure] = render_notebook(notebook, folder).figures
    pixels = struct.unpack(">II", figure.data[16:24])
    assert pixels[0] >= 2 * figure.width - 1 and pixels[1] >= 2 * figure.height - 1, (pixels, figure.width)
    assert 250 <= figure.width <= 320  # a 3 x 2 inch figure at 100 dpi, trimmed to its drawing


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
    html = render_notebook(notebook, ".").body_html
    assert _image_alts(html) == [summary, FALLBACK_ALT]
    # the executed tiny notebook's plain matplotlib plot gets the plain statement too
    notebook, folder = executed_tiny
    assert _image_alts(render_notebook(notebook, folder).body_html) == [FALLBACK_ALT]


def test_a_summary_is_read_once_and_is_the_caption_for_sighted_readers():
    from bs4 import BeautifulSoup

    summary = "Bar chart: speedup over 'unscheduled': journal 0.80x & register-blocked 2.41x."
    notebook = new_notebook(cells=[new_code_cell("plots.speedup_bars(comparison)", outputs=[
        new_output("display_data", data={"image/png": _PNG}, metadata={"image/png": {"alt": summary}}),
        new_output("stream", name="stdout", text=summary + "\nspeedup measured in 9 rounds\n")])])
    soup = BeautifulSoup(render_notebook(notebook, ".").body_html, "html.parser")
    figure = soup.find("figure")
    assert figure.find("img")["alt"] == summary
    caption = figure.find("figcaption").find(class_="figure-summary")
    assert caption.get_text() == summary and caption["aria-hidden"] == "true"  # the alt text is read; this is not
    printed = soup.find(class_="output_stream").get_text()
    assert summary not in printed and "speedup measured in 9 rounds" in printed  # the rest of the output stays


def test_svg_is_preferred_and_sized_from_its_root():
    svg = ('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="460.8pt" height="345.6pt" '
           'viewBox="0 0 460.8 345.6"><rect width="10" height="10"/></svg>')
    notebook = new_notebook(cells=[new_code_cell("plot()", outputs=[new_output(
        "display_data", data={"image/png": _PNG, "image/svg+xml": svg, "text/plain": "<Figure>"},
        metadata={"image/svg+xml": {"alt": "A tiny square."}})])])
    rendered = render_notebook(notebook, ".", figure_prefix="l")
    [figure] = rendered.figures
    assert figure.file == "figures/l-1.svg" and figure.data == svg.encode("utf-8")
    assert (figure.width, figure.height) == (614, 461)  # points to CSS pixels
    assert _image_alts(rendered.body_html) == ["A tiny square."]


def test_png_size_follows_its_resolution_and_explicit_metadata():
    import base64
    import struct

    from autograder.site.figures import png_display_size

    def png(width, height, dpi=None):
        chunk = b""
        if dpi:
            body = struct.pack(">IIB", round(dpi / 0.0254), round(dpi / 0.0254), 1)
            chunk = struct.pack(">I", 9) + b"pHYs" + body + b"\0\0\0\0"
        return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
                + b"\0\0\0\0" + chunk)

    assert png_display_size(png(1380, 410, dpi=200)) == (690, 205)  # twice as sharp as shown
    assert png_display_size(png(690, 205, dpi=100)) == (690, 205)
    assert png_display_size(png(690, 205, dpi=72)) == (690, 205)  # never blown up
    assert png_display_size(png(690, 205)) == (690, 205)
    notebook = new_notebook(cells=[new_code_cell("show()", outputs=[new_output(
        "display_data", data={"image/png": _PNG}, metadata={"image/png": {"width": 320, "height": 200}})])])
    assert 'width="320"' in render_notebook(notebook, ".").body_html
    # The lessons' plots give only the width they are shown at; the height keeps the proportions.
    notebook = new_notebook(cells=[new_code_cell("show()", outputs=[new_output(
        "display_data", data={"image/png": base64.b64encode(png(1380, 410, dpi=400)).decode("ascii")},
        metadata={"image/png": {"width": 690, "alt": "bars"}})])])
    [figure] = render_notebook(notebook, ".").figures
    assert (figure.width, figure.height) == (690, 205)


def test_headings_are_put_in_order_and_listed_for_the_contents():
    notebook = new_notebook(cells=[
        new_markdown_cell("# The lesson\n\nIntro.\n\n### Learning goals\n\nGoals.\n\n### About the numbers\n\nText."),
        new_markdown_cell("## 1. The graph level: one model\n\n#### A detail\n\n## 2. Measure it"),
        new_markdown_cell("## 2. Measure it\n\nAgain, same title.")])
    rendered = render_notebook(notebook, ".")
    assert rendered.title == "The lesson"
    levels = [(tag, text) for tag, text in re.findall(r"<(h[1-6])[^>]*>([^<]+)", rendered.body_html)]
    assert levels == [("h2", "Learning goals"), ("h2", "About the numbers"), ("h2", "1. The graph level: one model"),
                      ("h3", "A detail"), ("h2", "2. Measure it"), ("h2", "2. Measure it")]
    assert [(e.level, e.id, e.text) for e in rendered.toc] == [
        (2, "learning-goals", "Learning goals"), (2, "about-the-numbers", "About the numbers"),
        (2, "1-the-graph-level-one-model", "1. The graph level: one model"), (3, "a-detail", "A detail"),
        (2, "2-measure-it", "2. Measure it"), (2, "2-measure-it-2", "2. Measure it")]
    assert 'href="#1-the-graph-level-one-model"' in rendered.body_html  # the anchor link follows its heading


def test_tables_may_scroll_and_have_no_empty_header_and_lessons_link_to_their_pages():
    notebook = new_notebook(cells=[
        new_markdown_cell("|  | fused | unfused |\n|---|---|---|\n| time | 1 | 2 |\n\n"
                          "Next: `02-tiling-trace.ipynb`, or [the notebook](02-tiling-trace.ipynb#goals); "
                          "not `other.ipynb`.")])
    html = render_notebook(notebook, ".", lesson_pages={"02-tiling-trace.ipynb": "tiling-trace.html"}).body_html
    assert '<div class="table-wrap"><table>' in html
    assert "<th></th>" not in html and "<th>fused</th>" in html
    assert '<a href="tiling-trace.html"><code>02-tiling-trace.ipynb</code></a>' in html
    assert 'href="tiling-trace.html#goals"' in html
    assert "<code>other.ipynb</code>" in html and 'href="other' not in html


def _image_alts(html: str) -> list:
    from html.parser import HTMLParser

    alts = []

    class Images(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "img":
                alts.append(dict(attrs).get("alt"))

    Images().feed(html)
    return alts
