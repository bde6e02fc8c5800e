"""autograder/nbgrader_ext/kernel_side.py: what the notebooks call in the student's kernel."""
from __future__ import annotations

import pytest

from autograder.nbgrader_ext import kernel_side
from autograder.engine.report import Check, Result

RIGHT = {"TILES_PER_CHANNEL": 196, "TILE_BYTES": 1024, "WHOLE_BYTES": 3211264, "HALO_PIXELS": 324}


def test_during_autograde_the_kernel_does_not_grade(monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    stand_in = kernel_side.self_check("tile-fused-conv", "def schedule(sch):\n    while True: pass")
    assert isinstance(stand_in, kernel_side.GradedOutsideTheKernel)
    assert kernel_side.points(stand_in, "correctness", out_of=4) == 0.0
    assert "trusted grader" in capsys.readouterr().out


def test_points_follow_the_result(capsys):
    result = Result("tile-fused-conv", "cpu", "failed", correct=True, checks=[Check("fusion", False, "still 3.1 MiB")],
                    credit={"correctness": 0.4, "structure": 0.0, "speed": 0.0})
    assert kernel_side.points(result, "correctness", out_of=4) == 4.0
    assert kernel_side.points(result, "fusion", out_of=3) == 0.0
    assert "still 3.1 MiB" in capsys.readouterr().out


def test_answer_format_check_names_what_is_missing(capsys):
    kernel_side.check_answer_format("cpu-tile-arithmetic", RIGHT)
    assert "All answers are there" in capsys.readouterr().out
    with pytest.raises(NameError, match="HALO_PIXELS"):
        kernel_side.check_answer_format("cpu-tile-arithmetic", {k: v for k, v in RIGHT.items() if k != "HALO_PIXELS"})


def test_the_hidden_test_in_the_kernel_is_no_oracle(capsys):
    # The answer key is not in the package: the kernel cannot tell right answers from wrong ones,
    # and says that the instructor's grader checks them.
    right = kernel_side.question_points("cpu-tile-arithmetic", RIGHT, out_of=4)
    right_says = capsys.readouterr().out
    wrong = kernel_side.question_points("cpu-tile-arithmetic", dict(RIGHT, TILE_BYTES=256), out_of=4)
    assert right == wrong == 0.0 and capsys.readouterr().out == right_says
    assert "checked when you submit" in right_says and "TILE_BYTES" in right_says


@pytest.mark.slow
def test_the_self_check_finds_the_cell_that_defined_the_function_in_a_real_kernel(tmp_path):
    """What self_check grades: the text of the cell that defined `schedule`, as the student wrote
    it, found in the kernel's input history (not a later cell that merely mentions the name)."""
    import nbformat
    from nbclient import NotebookClient

    (tmp_path / "elsewhere.py").write_text("def schedule(sch):\n    pass\n")
    cells = {
        "trailing": "def schedule(sch):\n    return 'the cell with blank lines after it'\n\n\n",
        "decoy": "if False:\n    def schedule(sch):\n        pass",
        "magic": "%%time\ndef schedule(sch):\n    return 'under a cell magic'",
        "file": "import sys\nsys.path.insert(0, '.')\nfrom elsewhere import schedule",
    }
    show = ("from autograder.nbgrader_ext.kernel_side import defining_cell\n"
            "try:\n    print(repr(defining_cell(schedule)))\nexcept LookupError as error:\n    print(error)")
    notebook = nbformat.v4.new_notebook(cells=[c for source in cells.values() for c in (nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell(show))])
    NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    found = dict(zip(cells, ("".join(o.get("text", "") for o in c.outputs).strip() for c in notebook.cells[1::2])))
    assert found["trailing"] == repr(cells["trailing"].rstrip("\n"))  # the decoy below it is not taken
    assert found["decoy"] == repr(cells["trailing"].rstrip("\n"))  # it defined nothing: the function is still the first cell's
    assert found["magic"] == repr(cells["magic"])
    assert "was defined in" in found["file"] and "elsewhere.py" in found["file"] and "define schedule(sch) in that cell" in found["file"]


@pytest.mark.slow
def test_the_visible_check_reads_the_answer_cell_not_a_scratch_cell_and_says_where_the_kernel_differs(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    check = "from autograder.nbgrader_ext.kernel_side import check_answer_format\ncheck_answer_format('cpu-tile-arithmetic', globals())"
    cells = [
        "globals().update(TILES_PER_CHANNEL=1, TILE_BYTES=2, WHOLE_BYTES=3, HALO_PIXELS=4)",  # values, but no answer cell
        check,
        "TILES_PER_CHANNEL = 1\nTILE_BYTES = 2\nWHOLE_BYTES = 3\nHALO_PIXELS = 4",  # the answer cell
        "TILE_BYTES = 7",  # a scratch cell run after it
        check,
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(notebook, kernel_name="python3", timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}).execute()
    before, after = ("".join(o.get("text", "") + o.get("evalue", "") for o in notebook.cells[i].outputs) for i in (1, 4))
    assert "TILE_BYTES: no answer in the answer cell" in before and "assign a number to TILES_PER_CHANNEL" in before
    assert "TILES_PER_CHANNEL = 1: read by the grader as 1" in after
    assert "TILE_BYTES: the grader reads 2 from the answer cell, but this kernel has 7" in after
