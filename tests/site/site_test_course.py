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

TINY_NOTEBOOK_CELLS = [
    ("markdown", "# A tiny lesson\n\nIt prints, plots and shows a table.\n\n| kind | count |\n|---|---|\n| tiles | 196 |"),
    ("code", "print('tiles per axis:', 224 // 16)"),
    ("code", 
             "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\nax.bar(['a', 'b'], [1, 2])\nplt.show()"),
    ("code", "from IPython.display import Markdown\nMarkdown('| measured | value |\\n|---|---|\\n| speedup | 2.5x |')"),
]

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


def tiny_notebook() -> nbformat.NotebookNode:
    notebook = new_notebook(cells=[new_markdown_cell(source) if kind == "markdown" else new_code_cell(source)
                                   for kind, source in TINY_NOTEBOOK_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def write_tiny_course(root: Path) -> Path:
    """A course root with course/syllabus.yaml, one lesson and its quiz; returns the syllabus path."""
    (root / "course").mkdir(parents=True, exist_ok=True)
    (root / "lessons").mkdir(exist_ok=True)
    (root / "quizzes").mkdir(exist_ok=True)
    nbformat.write(tiny_notebook(), root / "lessons" / "tiny.ipynb")
    (root / "quizzes" / "tiny.yaml").write_text(TINY_QUIZ, encoding="utf-8")
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
        """), encoding="utf-8")
    return syllabus
