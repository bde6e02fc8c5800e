"""The cost-model notebook in a real Jupyter kernel, as a student runs it: their shape from the
released variants table, the self-check on a table measured on this machine (the tiny one here:
the full one takes minutes), and the test cells showing the student's numbers beside random's
and the baseline's with the class run's rule in words, never a number as the grade (the
self-check cannot know the instructor's model, which is the bar)."""
from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.problems.variants import write_table

from bundled_course import source_notebook

pytestmark = pytest.mark.slow

STUDENT = "48213"


def test_a_student_runs_the_notebook_and_the_self_check_grades_their_cell(tmp_path, monkeypatch):
    notebook = nbformat.read(source_notebook("cost-model"), as_version=4)
    check = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "self-check")
    assert check.source.startswith("check = self_check(features, Model)")
    check.source = check.source.replace("self_check(features, Model)", 'self_check(features, Model, grid="tiny")')
    write_table(tmp_path / "variants.json", [STUDENT], b"a test's course secret, long enough")
    monkeypatch.setenv("TVM_COURSE_STUDENT", STUDENT)
    monkeypatch.setenv("TVM_COURSE_TABLES", str(tmp_path / "tables"))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    notebook.cells.append(nbformat.v4.new_code_cell("import json\nprint(json.dumps(check.result.plot))"))
    NotebookClient(notebook, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    said = {c.metadata.get("nbgrader", {}).get("grade_id"): "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                                                                       for o in c.get("outputs", []))
            for c in notebook.cells if c.cell_type == "code"}
    assert "Your workload: x " in said["setup"] and f"Student {STUDENT}" in said["setup"]
    assert "tile arithmetic" not in said["setup"] + said["self-check"], "the tiling assignment's variant, in the cost model's notebook"
    assert "ranking:" in said["self-check"] and "search:" in said["self-check"]
    assert "top-2 score" in said["ranking"] and "pairwise accuracy" in said["ranking"] and "the baseline" in said["ranking"]
    assert "measurements until a schedule within 10%" in said["search"] and "the baseline" in said["search"]
    for cell in ("self-check", "ranking", "search"):  # the rule in words, and no points given
        assert "0.8 of the instructor's model's lead over random" in said[cell], said[cell]
        assert "of its points" not in said[cell] and "of the credit" not in said[cell]
    assert "4.0" not in said["ranking"].splitlines()[-1]  # the cell's value is no grade
    assert os.listdir(tmp_path / "tables")  # measured here, kept where it was told

    # Each part's cell shows the figure the feedback will show there, as the feedback's output is
    # (preprocessors._cost_model_figure), drawn from the self-check's own record (the last cell,
    # the test's, prints it from the kernel).
    import json

    from autograder.costmodel.feedback_plots import figures

    expected = figures(json.loads(notebook.cells[-1].outputs[0]["text"]))
    assert sorted(expected) == ["ranking", "search"]
    for part in ("ranking", "search"):
        cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part)
        (shown,) = [o for o in cell.outputs if "image/svg+xml" in o.get("data", {})]
        assert shown.data["image/svg+xml"] == expected[part].svg and shown.data["text/plain"] == expected[part].text
    assert "the public baseline" in expected["search"].svg and "the instructor's model" not in expected["search"].svg


def test_the_source_notebook_is_as_nbgrader_needs_it():
    import re

    from nbgrader.preprocessors import CheckCellMetadata

    from autograder.nbgrader_ext.plan import plan_from_notebook

    notebook = nbformat.read(source_notebook("cost-model"), as_version=4)
    nbformat.validate(notebook)
    assert all(c.outputs == [] and c.execution_count is None for c in notebook.cells if c.cell_type == "code")
    CheckCellMetadata().preprocess(notebook, {})  # raises on missing points, duplicate ids, ...
    plan = plan_from_notebook(notebook)
    for cell in notebook.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if nbgrader.get("grade_id") in plan.answers:
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        if nbgrader.get("grade_id") in plan.scored:
            assert nbgrader["locked"] and nbgrader["grade"]
            assert float(re.search(r"out_of=(\d+)", cell.source).group(1)) == nbgrader["points"]
    written = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "written")
    # marked by hand: a markdown answer cell with points, which no plan scores
    assert written.cell_type == "markdown" and written.metadata.nbgrader["solution"] and written.metadata.nbgrader["points"] == 2
    assert "written" not in plan.scored and "### BEGIN SOLUTION" in written.source
