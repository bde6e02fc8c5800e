"""A lesson's figures: taken out of the executed notebook into files, shown crisp and enlargeable.

Each image output of a code cell becomes a file next to the lesson page (`figures/<lesson>-<n>.svg`,
`.png` or `.jpg`; SVG is preferred when the output has one) and, in the page, a <figure>:

    <figure class="figure" id="figure-2" style="--figure-width: 460px">
      <div class="figure-frame"><a class="figure-link" href="figures/two-levels-2.png"><img src=... width=... alt="SUMMARY"></a></div>
      <figcaption>Figure 2. SUMMARY (tap or click to enlarge)</figcaption>
    </figure>

The image links to its own file, so a tap opens it large even without scripts (site.js opens it
in a dialog instead). The summary the lessons' plot helpers attach (output metadata `alt`) is the
image's alt text, which is how a screen reader meets it; the same sentence, which the helpers
also print after the plot, is taken out of the cell's printed output so that it is not read
twice, and is the caption for sighted readers (hidden from screen readers, which have it as the
alt text already), so a caption says what the figure shows, not only its number.

On a phone a figure keeps its drawn size and its frame scrolls sideways (site.css): shrunk to
the screen's width, a plot's labels would be a few pixels tall.

Size: a PNG is shown at the `width` (and `height`) its output metadata gives, as JupyterLab shows
it: the lessons' plots and matplotlib's "retina" figures (which the site's lesson runs use, see
executed.KERNEL_ARGUMENTS) carry half their pixel size there, so they have two pixels per CSS pixel
and stay sharp on phones and high-DPI screens. Without that metadata, a PNG is shown at the size it
has at matplotlib's default 100 dpi (from its pHYs chunk), never enlarged.
"""
from __future__ import annotations

import base64
import copy
import html
import re
import struct
from dataclasses import dataclass

from nbformat import NotebookNode
from nbformat.v4 import new_output

# In order of preference: a vector image scales to any screen.
IMAGE_TYPES = ("image/svg+xml", "image/png", "image/jpeg")
EXTENSIONS = {"image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpg"}
FALLBACK_ALT = "A figure drawn by the code above; it has no text description."
REFERENCE_DPI = 100.0  # matplotlib's default figure.dpi: a PNG at this resolution is shown 1:1
FIGURE_FOLDER = "figures"
_SVG_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(px|pt|in|cm|mm)?\s*$")
_PX_PER_UNIT = {None: 1.0, "px": 1.0, "pt": 96 / 72, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}


@dataclass
class Figure:
    number: int
    file: str  # relative to the lesson page: figures/<prefix>-<n>.<ext>
    mimetype: str
    data: bytes
    alt: str
    described: bool  # whether alt is the output's own summary (else FALLBACK_ALT)
    width: int | None  # CSS pixels, as shown in the page
    height: int | None


def image_alt_text(output: NotebookNode, cell: NotebookNode | None = None) -> str | None:
    """The alt text an image output carries (per image type, then the output's, then the cell's)."""
    metadata = output.get("metadata", {})
    for mimetype in IMAGE_TYPES:
        if mimetype in output.get("data", {}):
            alt = metadata.get(mimetype, {}).get("alt") or metadata.get("alt")
            if alt:
                return str(alt)
    return (cell or {}).get("metadata", {}).get("alt") or None


def extract_figures(notebook: NotebookNode, prefix: str) -> tuple[NotebookNode, list[Figure]]:
    """A copy of `notebook` whose image outputs are <figure> HTML outputs, and the figures' files."""
    notebook = copy.deepcopy(notebook)
    figures: list[Figure] = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs, printed_summaries = [], []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            mimetype = next((m for m in IMAGE_TYPES if m in data), None)
            if mimetype is None:
                outputs.append(output)
                continue
            alt = image_alt_text(output, cell)
            figure = _figure(len(figures) + 1, prefix, mimetype, data[mimetype], output.get("metadata", {}),
                             alt or FALLBACK_ALT, alt is not None)
            figures.append(figure)
            if alt:
                printed_summaries.append(alt)
            outputs.append(new_output("display_data", data={"text/html": figure_html(figure)}))
        cell.outputs = [o for o in (_without_lines(o, printed_summaries) for o in outputs) if o is not None]
    return notebook, figures


def _figure(number: int, prefix: str, mimetype: str, payload, metadata: dict, alt: str, described: bool) -> Figure:
    if mimetype == "image/svg+xml":
        data = (payload if isinstance(payload, str) else "".join(payload)).encode("utf-8")
        width, height = svg_size(data)
    else:
        data = base64.b64decode(payload if isinstance(payload, str) else "".join(payload))
        width, height = png_display_size(data) if mimetype == "image/png" else (None, None)
    shown = metadata.get(mimetype, {}) if isinstance(metadata.get(mimetype), dict) else {}
    if _positive(shown.get("width")):
        pixels = png_pixel_size(data) if mimetype == "image/png" else None
        width = round(float(shown["width"]))
        if _positive(shown.get("height")):
            height = round(float(shown["height"]))
        else:  # the height that keeps the image's proportions, where it can be known
            height = max(1, round(pixels[1] * width / pixels[0])) if pixels else None
    return Figure(number, f"{FIGURE_FOLDER}/{prefix}-{number}.{EXTENSIONS[mimetype]}", mimetype, data, alt,
                  described, width, height)


def _positive(value) -> bool:
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False


def png_pixel_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG's IHDR chunk; None if it is not a PNG."""
    if len(data) < 24 or not data.startswith(b"\x89PNG\r\n\x1a\n") or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return (width, height) if width and height else None


def png_display_size(data: bytes) -> tuple[int | None, int | None]:
    """(width, height) in CSS pixels: the pixel size scaled to REFERENCE_DPI (never enlarged)."""
    pixels = png_pixel_size(data)
    if pixels is None:
        return None, None
    width, height = pixels
    dpi = _png_dpi(data)
    scale = min(1.0, REFERENCE_DPI / dpi) if dpi else 1.0
    return max(1, round(width * scale)), max(1, round(height * scale))


def _png_dpi(data: bytes) -> float | None:
    """The resolution a PNG's pHYs chunk states (pixels per metre -> dots per inch), if it does."""
    offset = 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"pHYs" and length == 9:
            x_per_metre, _y, unit = struct.unpack(">IIB", data[offset + 8:offset + 17])
            return x_per_metre * 0.0254 if unit == 1 and x_per_metre else None
        if kind in (b"IDAT", b"IEND"):
            return None
        offset += 12 + length
    return None


def svg_size(data: bytes) -> tuple[int | None, int | None]:
    """The width and height an SVG's root element declares, in CSS pixels (None where it does not)."""
    head = data[:4096].decode("utf-8", errors="replace")
    root = re.search(r"<svg\b[^>]*>", head, re.S)
    if not root:
        return None, None

    def length(name: str) -> int | None:
        match = re.search(rf'\s{name}\s*=\s*["\']([^"\']+)["\']', root.group(0))
        value = _SVG_LENGTH.match(match.group(1)) if match else None
        return round(float(value.group(1)) * _PX_PER_UNIT[value.group(2)]) if value else None

    return length("width"), length("height")


def figure_html(figure: Figure) -> str:
    size = "".join(f' {name}="{value}"' for name, value in (("width", figure.width), ("height", figure.height))
                   if value)
    alt = html.escape(figure.alt, quote=True)
    summary = (f'<span class="figure-summary" aria-hidden="true">{html.escape(figure.alt)}</span>'
               if figure.described else "")
    style = f' style="--figure-width: {figure.width}px"' if figure.width else ""
    return (f'<figure class="figure" id="figure-{figure.number}"{style}>'
            f'<div class="figure-frame"><a class="figure-link" href="{figure.file}">'
            f'<img src="{figure.file}"{size} alt="{alt}" decoding="async"></a></div>'
            f'<figcaption><span class="figure-number">Figure {figure.number}.</span> {summary}'
            f'<span class="figure-hint" aria-hidden="true"> (tap or click to enlarge)</span></figcaption>'
            "</figure>")


def _without_lines(output: NotebookNode, lines: list[str]) -> NotebookNode | None:
    """A stream output without the printed copies of figure summaries; None when nothing is left."""
    if not lines or output.get("output_type") != "stream":
        return output
    text = output.get("text", "")
    text = text if isinstance(text, str) else "".join(text)
    kept = text.splitlines(keepends=True)
    for line in lines:
        for index, printed in enumerate(kept):
            if printed.rstrip("\n") == line:
                del kept[index]
                break
    if not kept:
        return None
    output = copy.deepcopy(output)
    output["text"] = "".join(kept)
    return output
