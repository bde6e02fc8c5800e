"""An executed notebook as an HTML fragment for a lesson page: prose, code, outputs, plots.

nbconvert's "basic" template does the rendering (no page shell, no scripts, nothing fetched
from the internet); plots arrive as PNG or SVG outputs and stay embedded in the page, and
images a Markdown cell links to are embedded too. Before rendering:

- interactive widget outputs (e.g. a quiz shown with ipywidgets) are replaced by a note: a
  static page cannot run them, and the lesson page has its own quiz at the bottom;
- every image gets alt text: the one its output carries (metadata `image/png` -> `alt`, which
  the lessons' plot helpers set to a summary of the plotted data, printed after the plot too),
  else a plain statement that the figure has no text description;
- the cell tags `remove-cell`, `remove-input` and `remove-output` hide what they say.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode
from nbformat.v4 import new_output

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "(An interactive widget is shown here when the notebook runs in JupyterLab.)"
IMAGE_TYPES = ("image/png", "image/jpeg")
FALLBACK_ALT = "A figure drawn by the code above; it has no text description."
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass
class RenderedNotebook:
    title: str | None  # the text of the first level-1 heading, if any
    body_html: str


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


def image_alt_text(output: NotebookNode, cell: NotebookNode | None = None) -> str | None:
    """The alt text an image output carries (per image type, then the output's, then the cell's)."""
    metadata = output.get("metadata", {})
    for mimetype in IMAGE_TYPES:
        if mimetype in output.get("data", {}):
            alt = metadata.get(mimetype, {}).get("alt") or metadata.get("alt")
            if alt:
                return str(alt)
    return (cell or {}).get("metadata", {}).get("alt") or None


def with_alt_text(notebook: NotebookNode) -> NotebookNode:
    """A copy in which every PNG or JPEG output has alt text (FALLBACK_ALT where it had none)."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            images = [m for m in IMAGE_TYPES if m in output.get("data", {})]
            if not images:
                continue
            alt = image_alt_text(output, cell) or FALLBACK_ALT
            metadata = output.setdefault("metadata", {})
            for mimetype in images:
                metadata.setdefault(mimetype, {})["alt"] = alt
    return notebook


def render_notebook(notebook: NotebookNode, folder: str | Path) -> RenderedNotebook:
    """HTML for the body of a lesson page; `folder` is where relative image links resolve."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    config.TagRemovePreprocessor.remove_all_outputs_tags = {"remove-output"}
    exporter = HTMLExporter(config=config, template_name="basic", embed_images=True,
                            exclude_input_prompt=True, exclude_output_prompt=True)
    cleaned = with_alt_text(without_widgets(notebook))
    body, _resources = exporter.from_notebook_node(cleaned, resources={"metadata": {"path": str(folder)}})
    return RenderedNotebook(first_heading(cleaned), body)
