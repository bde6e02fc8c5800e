"""autograder/course/summary.py: the table and the CSV of a grading run."""
from __future__ import annotations

import csv

from autograder.course.summary import Row, _short, format_table, write_csv, write_fault_log


def rows():
    return [
        Row("ada", 14.0, 14.0, "full marks", 2.71, {"correctness": 4.0, "speed": 3.0}, schedule="passed"),
        Row("eli", 4.0, 14.0, "points lost", None, {"correctness": 0.0, "speed": 0.0}, note="killed by SIGSEGV", schedule="crashed",
            lost="correctness -4 of 4 (the grading of your schedule crashed)"),
        Row("gus", 3.0, 13.0, "pending", None, {"correctness": None, "speed": None}, needs_manual_grade=True, schedule="needs-gpu"),
        Row("hal", status="grading-failed", note="nbgrader autograde failed"),
        Row("ivy", 8.0, 14.0, "points lost", 1.5, {"correctness": 4.0, "speed": 1.0, "tile-arithmetic-marks": 3.0}, schedule="passed",
            lost="speed -2 of 3 (1.2x the speed of the yardstick); tile-arithmetic-marks -1 of 4 (wrong: TILE_BYTES)"),
    ]


def test_table_keeps_the_assignments_status_apart_from_the_schedules():
    table = format_table(rows()).splitlines()
    assert table[0].split() == ["student", "score", "status", "schedule", "speedup", "this", "run", "notes"]
    ada, eli, gus, hal, ivy = table[2:]
    assert ada.split()[:7] == ["ada", "14", "/", "14", "full", "marks", "passed"]
    assert "crashed" in eli and "SIGSEGV" in eli
    assert "+ pending" in gus and "needs manual grading" in gus and "needs-gpu" in gus
    assert hal.split()[:3] == ["hal", "-", "grading-failed"]
    # a schedule that passed in a submission that lost points: both said, and which points and why
    assert "points lost" in ivy and "passed" in ivy and "lost speed -2 of 3 (1.2x the speed of the yardstick)" in ivy


def test_csv_has_every_part_and_leaves_pending_blank(tmp_path):
    write_csv(rows(), tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert [line["student"] for line in lines] == ["ada", "eli", "gus", "hal", "ivy"]
    assert lines[0]["speedup"] == "2.71" and lines[0]["speed"] == "3" and lines[0]["status"] == "full marks"
    assert lines[0]["schedule"] == "passed" and lines[0]["lost"] == ""
    assert lines[2]["correctness"] == "" and lines[2]["needs_manual_grade"] == "1" and lines[2]["status"] == "pending"
    assert lines[3]["score"] == "" and lines[3]["status"] == "grading-failed"
    assert lines[4]["lost"].startswith("speed -2 of 3") and "wrong: TILE_BYTES" in lines[4]["lost"]


def test_a_final_score_is_only_given_when_nothing_is_pending():
    ada, eli, gus, hal, ivy = rows()
    assert ada.final_score == 14.0 and gus.final_score is None and hal.final_score is None
    ivy.late_penalty = 9.0
    assert ivy.final_score == 0.0  # never below 0, as nbgrader's export


def test_verdicts_are_shortened_to_their_gist():
    assert _short("0.31x the speed of the yardstick (vectorised 1x16 tiles, timed beside yours: median): 0% of the speed points") \
        == "0.31x the speed of the yardstick"
    assert _short("after lowering, conv2d_nchw_intermediate (written by 'conv2d_nchw') is still 3.8 MiB, over the 32.0 KiB "
                  "tile budget: its consumers do not run inside") == \
        "after lowering, conv2d_nchw_intermediate is still 3.8 MiB, over the 32.0 KiB tile budget"
    assert len(_short("x" * 500)) == 100


def test_the_fault_log_has_the_details_the_feedback_leaves_out(tmp_path):
    faulty = Row("kim", grader_faults=["internal grader error (not your code) during run:\nTraceback ...\nRPCError: lost"])
    log = write_fault_log([faulty, *rows()], {"hal": "nbgrader autograde failed:\nKernelDied"}, tmp_path / "tiling-grader-faults.log")
    text = log.read_text()
    assert "== kim ==" in text and "RPCError: lost" in text and "== hal ==" in text and "KernelDied" in text
    assert log.stat().st_mode & 0o077 == 0
    assert write_fault_log(rows(), {}, log) is None and not log.exists()  # nothing to say: no stale log left


def test_lost_points_say_which_cells_and_why_from_the_trusted_record():
    from autograder.course.summary import _lost_points
    from autograder.engine.report import Check, Result
    from autograder.nbgrader_ext.plan import load_plan

    from .conftest import source_notebook

    plan = load_plan(source_notebook("tiling"))
    out_of = {"correctness": 4.0, "fusion": 3.0, "speed": 3.0, "tile-arithmetic-marks": 4.0}
    rejected = Result("tile-fused-conv", "cpu", "rejected", messages=["disallowed primitive: unsafe_set_dtype"])
    marks = {"lines": ["TILES_PER_CHANNEL = 400: right", "TILE_BYTES = 1: not right; one 8x8 tile ... = 256",
                       "WHOLE_BYTES = 2457600: right", "HALO_PIXELS = 99: not right; ... = 100"], "right": []}
    row = Row("ivy", 2.0, 14.0, parts={"correctness": 0.0, "fusion": 0.0, "speed": 0.0, "tile-arithmetic-marks": 2.0}, out_of=out_of)
    lost = _lost_points(row, plan, {"results": {"schedule": rejected.to_dict()}, "questions": {"tile-arithmetic": marks}})
    assert lost == ("correctness, fusion, speed -10 of 10 (your schedule was rejected); "
                    "tile-arithmetic-marks -2 of 4 (wrong: TILE_BYTES, HALO_PIXELS)")
    slow = Result("tile-fused-conv", "cpu", "passed", correct=True, credit={"correctness": 0.4, "structure": 0.3, "speed": 0.0},
                  checks=[Check("speed", False, "1.02x the speed of the yardstick (vectorised 1x16 tiles): 0% of the speed points")])
    row = Row("jo", 11.0, 14.0, parts={"correctness": 4.0, "fusion": 3.0, "speed": 0.0, "tile-arithmetic-marks": 4.0}, out_of=out_of,
              late_penalty=1.0)
    assert _lost_points(row, plan, {"results": {"schedule": slow.to_dict()}, "questions": {}}) == \
        "speed -3 of 3 (1.02x the speed of the yardstick); late -1"
    assert _lost_points(row, plan, {"results": {}, "questions": {}}) == "speed -3 of 3; late -1"  # no record: no reason made up


def cost_model_record(search: dict) -> dict:
    """A graded cost-model notebook's record as SaveTrustedGrades writes it (costmodel/grade.py)."""
    ranking = {"fraction": 1.0, "lines": ["top-5 score 0.950 (random 0.600, the instructor's model 0.940): 100% of the credit"],
               "failed": False, "gist": "top-5 0.95, pairwise 0.81; the instructor's 0.94, 0.80"}
    return {"results": {}, "questions": {}, "scores": {},
            "cost_models": {"cost-model": {"parts": {"ranking": ranking, "search": search}, "notes": [], "plot": {}}}}


FAILED_SEARCH = {"fraction": 0.0, "lines": ["your learner failed in the search part, which scores 0: its scores hold NaN "
                                            "or infinite values (fix predict: a finite score per candidate)"],
                 "failed": True, "gist": "learner failed: its scores hold NaN or infinite values (fix predict: a finite ..."}


def write_graded(folder, record: dict) -> None:
    import json

    folder.mkdir(parents=True)
    (folder / "cost-model.ipynb").write_text(json.dumps({"cells": [], "metadata": {"tvm_course": record}, "nbformat": 4,
                                                         "nbformat_minor": 5}), encoding="utf-8")


def test_a_cost_models_row_says_how_each_part_went_and_why_one_failed(tmp_path):
    from autograder.course.summary import _read_trusted_record

    write_graded(tmp_path / "ben", cost_model_record(FAILED_SEARCH))
    row = Row("ben", 4.0, 10.0, "points lost", parts={"ranking": 4.0, "search": 0.0, "written": None})
    _read_trusted_record(row, tmp_path / "ben")
    assert row.schedule == "ranking 100% / search failed"
    assert row.note.startswith("your learner failed in the search part, which scores 0: its scores hold NaN")
    pending = {"fraction": None, "lines": ["the search part could not be graded on this machine (pending, not your fault): "
                                           "the instructor's model is no better than random"], "failed": False, "gist": ""}
    write_graded(tmp_path / "ada", cost_model_record(pending))
    row = Row("ada", 4.0, 10.0, "pending", parts={"ranking": 4.0, "search": None})
    _read_trusted_record(row, tmp_path / "ada")
    assert row.schedule == "ranking 100% / search pending" and row.grader_faults  # the why goes to the fault log
    assert row.note == ""  # a grader fault is never the student's failure (collect_rows notes it as a fault)
    table = format_table([row])
    assert "ranking 100% / search pending" in table


def test_a_cost_models_lost_points_say_the_numbers_or_why_the_learner_failed():
    from autograder.course.summary import _lost_points
    from autograder.nbgrader_ext.plan import load_plan

    from .conftest import source_notebook

    plan = load_plan(source_notebook("cost-model"))
    out_of = {"ranking": 4.0, "search": 4.0, "written": 2.0}
    row = Row("ben", 4.0, 10.0, parts={"ranking": 4.0, "search": 0.0, "written": 2.0}, out_of=out_of)
    assert _lost_points(row, plan, cost_model_record(FAILED_SEARCH)) == \
        "search -4 of 4 (learner failed: its scores hold NaN or infinite values (fix predict: a finite ...)"
    slow = {"fraction": 0.25, "lines": ["..."], "failed": False,
            "gist": "30.2 measurements to a near-best schedule; random 34.0, the instructor's 18.1"}
    row.parts["search"] = 1.0
    assert _lost_points(row, plan, cost_model_record(slow)) == \
        "search -3 of 4 (30.2 measurements to a near-best schedule; random 34.0, the instructor's 18.1)"


def test_a_missing_cost_model_cell_or_a_refused_file_reads_failed_not_a_score(tmp_path):
    """The records the trusted grader writes where no learner ran (nbgrader_ext/trusted.py): the
    row says the parts failed, and why, as for a learner that failed."""
    import copy

    import nbformat

    from autograder.course.summary import _lost_points, _read_trusted_record
    from autograder.engine.config import GraderConfig
    from autograder.nbgrader_ext.normalise import SUBMISSION_KEY, refusal_text
    from autograder.nbgrader_ext.plan import plan_from_notebook
    from autograder.nbgrader_ext.trusted import TrustedGrading

    from .conftest import source_notebook

    source = nbformat.read(source_notebook("cost-model"), as_version=4)
    plan = plan_from_notebook(source)
    emptied = copy.deepcopy(source)
    emptied.cells = [c for c in emptied.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "cost-model"]
    missing = TrustedGrading(plan, GraderConfig()).start(emptied).finish().to_metadata()
    write_graded(tmp_path / "ben", missing)
    row = Row("ben", 0.0, 10.0, "points lost", parts={"ranking": 0.0, "search": 0.0, "written": None},
              out_of={"ranking": 4.0, "search": 4.0, "written": 2.0})
    record = _read_trusted_record(row, tmp_path / "ben")
    assert row.schedule == "ranking failed / search failed" and not row.grader_faults
    assert row.note == "the answer cell 'cost-model' is missing from the submission"
    assert _lost_points(row, plan, record) == \
        "ranking, search -8 of 8 (the answer cell 'cost-model' is missing from the submission)"

    why = refusal_text("not a notebook: the file is not valid JSON")
    refused = TrustedGrading(plan, GraderConfig()).refuse(why).finish().to_metadata()
    write_graded(tmp_path / "ada", {**refused, SUBMISSION_KEY: {"refused": "not a notebook: the file is not valid JSON"}})
    row = Row("ada", 0.0, 10.0, "points lost", parts={"ranking": 0.0, "search": 0.0, "written": None})
    _read_trusted_record(row, tmp_path / "ada")
    assert row.schedule == "ranking failed / search failed" and not row.grader_faults
    assert row.review and row.note == f"cost-model.ipynb {why}"
