"""An executed notebook as an HTML fragment for a lesson page: prose, code, outputs, figures.

nbconvert's "basic" template does the rendering (no page shell, no scripts, nothing fetched
from the internet); images a Markdown cell links to are embedded. Before rendering:

- interactive widget outputs (e.g. a quiz shown with ipywidgets) are replaced by a note: a
  static page cannot run them, and the lesson page has its own quiz at the bottom;
- image outputs become figures in files of their own (figures.py: SVG preferred, PNG shown at
  its 100-dpi size, the plot helpers' summary as alt text and not printed a second time);
- the cell tags `remove-cell`, `remove-input` and `remove-output` hide what they say.

After rendering, page_structure.py takes the title out, puts the headings in order and lists
them for the table of contents.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

from nbformat import NotebookNode
from nbformat.v4 import new_output

from .figures import FALLBACK_ALT, Figure, extract_figures, image_alt_text  # noqa: F401 (re-exported)
from .page_structure import TocEntry, structure

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "(An interactive widget is shown here when the notebook runs in JupyterLab.)"
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass
class RenderedNotebook:
    title: str | None  # the text of the first level-1 heading, if any (taken out of body_html)
    body_html: str
    figures: list[Figure] = field(default_factory=list)  # to write next to the page, at figure.file
    toc: list[TocEntry] = field(default_factory=list)


def first_heading(notebook: NotebookNode) -> str | None:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = _HEADING.search(cell.source)
            if match:
                return _strip_inline_markdown(match.group(1))
    return None


def _strip_inline_markdown(text: str) -> str:
    return re.sub(r"[*_`]", "", text).strip()


def without_widgets(notebook: NotebookNode) -> NotebookNode:
    """A copy with widget views replaced by a short note and the saved widget state dropped."""
    notebook = copy.deepcopy(notebook)
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            if WIDGET_VIEW in output.get("data", {}):
                output = new_output("display_data", data={"text/plain": WIDGET_NOTE})
            outputs.append(output)
        cell.outputs = outputs
    return notebook


def render_notebook(notebook: NotebookNode, folder: str | Path, *, figure_prefix: str = "figure",
                    lesson_pages: dict[str, str] | None = None) -> RenderedNotebook:
    """HTML for the body of a lesson page; `folder` is where relative image links resolve.

    Figures are named `figures/<figure_prefix>-<n>.<ext>`; `lesson_pages` maps lesson notebook
    file names to their pages, for links between lessons."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    config.TagRemovePreprocessor.remove_all_outputs_tags = {"remove-output"}
    exporter = HTMLExporter(config=config, template_name="basic", embed_images=True,
                            exclude_input_prompt=True, exclude_output_prompt=True)
    cleaned, figures = extract_figures(without_widgets(_without_removed_outputs(notebook)), figure_prefix)
    body, _resources = exporter.from_notebook_node(cleaned, resources={"metadata": {"path": str(folder)}})
    page = structure(body, lesson_pages)
    kept = [figure for figure in figures if figure.file in page.body_html]
    return RenderedNotebook(page.title, page.body_html, kept, page.toc)


def _without_removed_outputs(notebook: NotebookNode) -> NotebookNode:
    """A copy without the cells and outputs the remove-* tags hide, so that no figure is made for them."""
    notebook = copy.deepcopy(notebook)
    notebook.cells = [c for c in notebook.cells if "remove-cell" not in c.get("metadata", {}).get("tags", [])]
    for cell in notebook.cells:
        if cell.cell_type == "code" and "remove-output" in cell.get("metadata", {}).get("tags", []):
            cell.outputs = []
    return notebook
