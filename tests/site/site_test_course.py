"""The tiny course the website's tests build: one short notebook and a quiz with every question type.

A module of its own (not conftest) so that test modules can import its names.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPO = Path(__file__).resolve().parents[2]


def launched_chromium():
    """Debian's Chromium, headless under Playwright, for a fixture to `yield from` (the site's
    and the hub's browser tests); skips saying why where either is missing."""
    import pytest

    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install chromium); "
                    ".ci/run installs it in CI")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                                   "(pip install -e '.[test]')")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()

TINY_NOTEBOOK_CELLS = [
    ("markdown", "# A tiny lesson\n\nIt prints, plots and shows a table.\n\n| kind | count |\n|---|---|\n| tiles | 196 |"),
    ("code", "print('tiles per axis:', 224 // 16)"),
    ("code", 
             "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\nax.bar(['a', 'b'], [1, 2])\nplt.show()"),
    ("code", "from IPython.display import Markdown\nMarkdown('| measured | value |\\n|---|---|\\n| speedup | 2.5x |')"),
]

# What a real lesson has and the first one does not: headings that skip a level, code and output
# wider than the prose, a plot with a text summary (shown as the lesson helpers show one), a table
# with an empty corner, and a link to another lesson's notebook.
SUMMARY = "Bar chart: speedup over 'unfused': fused 1.20x, fused + scheduled 1.45x."
LONG_CODE = ("speedups = {'unfused': 1.00, 'fused': 1.20, 'fused + scheduled': 1.45}  "
             "# the medians of nine interleaved rounds, one thread, on the build machine")
NEXT_NOTEBOOK_CELLS = [
    ("markdown", "# Next steps\n\nAfter [the tiny lesson](tiny.ipynb) (`tiny.ipynb`), one more.\n\n"
                 "### Learning goals\n\nRead a plot.\n\n### About the numbers\n\nMeasured at build time."),
    ("markdown", "## 1. A wide table\n\n|  | fused | unfused |\n|---|---|---|\n| time | 1.0 ms | 1.2 ms |"),
    ("code", LONG_CODE + "\nprint('verdict: ' + ', '.join(f'{name} {value:.2f}x' for name, value in speedups.items()) "
                         "+ ' (median of per-round ratios; the middle half of the rounds lies within 0.02x of it)' * 2)"),
    ("markdown", "## 2. A plot\n\n#### How it is drawn\n\nAt twice its size."),
    ("code", "import base64, io\nimport matplotlib.pyplot as plt\nfrom IPython.display import display\n"
             "fig, ax = plt.subplots(figsize=(6.9, 2.0))\n"
             "ax.barh(['unfused', 'fused', 'fused + scheduled'], [1.0, 1.2, 1.45])\n"
             "ax.set_xlabel('speedup over unfused (median of per-round ratios)')\n"
             "buffer = io.BytesIO()\nfig.savefig(buffer, format='png', dpi=200, bbox_inches='tight')\nplt.close(fig)\n"
             "png = buffer.getvalue()\nwidth = int.from_bytes(png[16:20], 'big') // 2\n"
             f"summary = {SUMMARY!r}\n"
             "display({'image/png': base64.b64encode(png).decode('ascii'), 'text/plain': summary}, raw=True,\n"
             "        metadata={'image/png': {'alt': summary, 'width': width}})\nprint(summary)"),
]

NEXT_QUIZ = textwrap.dedent("""\
    id: tiny-next
    title: "Check yourself: next steps"
    lesson: tiny-next
    questions:
      - id: bar-count
        type: single
        prompt: How many bars does the plot have?
        choices:
          - text: "two"
            feedback: Count the unfused one too.
          - text: "three"
            correct: true
        explanation: Unfused, fused, fused + scheduled.
    """)

TINY_QUIZ = textwrap.dedent("""\
    id: tiny
    title: "Check yourself: a tiny lesson"
    lesson: tiny
    intro: Every question type the site supports, with `code` in the text.
    questions:
      - id: pick-one
        type: single
        prompt: How many 16-wide tiles cover 224 pixels?
        choices:
          - text: "16"
            feedback: That is the tile width, not the number of tiles.
          - text: "14"
            correct: true
          - text: "224"
            feedback: That is the number of pixels.
        explanation: 224 / 16 = 14 tiles.
      - id: pick-many
        type: multiple
        prompt: Which are schedule primitives?
        choices:
          - text: split
            correct: true
          - text: relu
            feedback: ReLU is an operator, not a primitive.
          - text: reorder
            correct: true
        feedback: Primitives transform loops.
        explanation: split and reorder both transform loops.
      - id: tile-bytes
        type: numeric
        prompt: How many bytes does a 16x16 float32 tile take?
        answer: 1024
        unit: bytes
        mistakes:
          - answer: 256
            feedback: That counts values; each float32 takes 4 bytes.
        feedback: Values times bytes per value.
        explanation: 16 x 16 x 4 = 1024 bytes.
      - id: ratio
        type: numeric
        prompt: What is 0.46 / 0.18, to two decimals?
        answer: 2.56
        tolerance: 0.05
        feedback: Speedup is the old time over the new time.
        explanation: About 2.56.
      - id: verb
        type: text
        prompt: The cost model does not invent schedules; it ____ them.
        accept: [ranks]
        patterns: ["(rank|score)(s)?"]
        mistakes:
          - answer: generates
            feedback: Candidates come from the search, not the model.
        feedback: One word for what a model that predicts runtimes does to a list of candidates.
        explanation: It ranks them.
      - id: steps
        type: ordering
        prompt: Put the steps in order.
        items:
          - split the loops
          - reorder the loops
          - move the consumers
        feedback: You need the split loops before you can reorder them.
        explanation: Split, reorder, then move.
      - id: write-it
        type: code
        prompt: Write schedule(sch) that tiles the conv.
        problem: tile-fused-conv
        require:
          checks: [correctness, fusion]
        starter: |
          def schedule(sch):
              pass
        solution: |
          def schedule(sch):
              conv = sch.get_sblock("conv2d_nchw")
              loops = sch.get_loops(conv)
              sch.split(loops[2], factors=[None, 16])
        feedback: Start from the conv block's loops.
        explanation: Split is where tiling starts.
    """)


def tiny_notebook(cells=TINY_NOTEBOOK_CELLS) -> nbformat.NotebookNode:
    notebook = new_notebook(cells=[new_markdown_cell(source) if kind == "markdown" else new_code_cell(source)
                                   for kind, source in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


# Two guides (docs/, autograder/site/guides.py) that link to each other's sections, to a section of
# their own and to files of the repository; and the architecture, which the site leaves out.
TINY_GUIDES = {
    "students.md": textwrap.dedent("""\
        # For students

        For the tiny course's students.

        ## Getting started

        Read [how grading works](grading.md), then [what is graded](grading.md#what-is-graded-and-how)
        and [the lessons](#the-lessons-one-by-one). The [README](../README.md) is the repository's;
        [the architecture](architecture.md) too.

        ## The lessons, one by one

        | lesson | what |
        | --- | --- |
        | `lessons/tiny.ipynb` | tiles |

        ```
        make lab   # the lessons
        ```
        """),
    "grading.md": textwrap.dedent("""\
        # How grading works

        For anyone curious about a grade.

        ## What is graded, and how

        Correctness, fusion and speed: see [the students' guide](students.md#getting-started).

        ### Tiles per axis

        224 / 16 = 14.
        """),
    "architecture.md": "# Architecture\n\nFor whoever changes the code.\n",
}


def write_tiny_course(root: Path) -> Path:
    """A course root with course/syllabus.yaml and two lessons in two units, each with its quiz,
    and two guides in docs/; returns the syllabus path."""
    (root / "course").mkdir(parents=True, exist_ok=True)
    (root / "docs").mkdir(exist_ok=True)
    for name, text in TINY_GUIDES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "README.md").write_text("# A tiny course\n", encoding="utf-8")
    (root / "lessons").mkdir(exist_ok=True)
    (root / "quizzes").mkdir(exist_ok=True)
    nbformat.write(tiny_notebook(), root / "lessons" / "tiny.ipynb")
    nbformat.write(tiny_notebook(NEXT_NOTEBOOK_CELLS), root / "lessons" / "tiny-next.ipynb")
    (root / "quizzes" / "tiny.yaml").write_text(TINY_QUIZ, encoding="utf-8")
    (root / "quizzes" / "tiny-next.yaml").write_text(NEXT_QUIZ, encoding="utf-8")
    syllabus = root / "course" / "syllabus.yaml"
    syllabus.write_text(textwrap.dedent("""\
        course: "A tiny course"
        units:
          - id: tiny-unit
            title: "Tiny unit"
            summary: One lesson, one quiz.
            lessons:
              - id: tiny
                title: "A tiny lesson"
                notebook: lessons/tiny.ipynb
                quiz: quizzes/tiny.yaml
          - id: next-unit
            title: "Second unit"
            summary: Headings, a wide table, long lines and a plot with a summary.
            lessons:
              - id: tiny-next
                title: "Next steps"
                notebook: lessons/tiny-next.ipynb
                quiz: quizzes/tiny-next.yaml
        """), encoding="utf-8")
    return syllabus
