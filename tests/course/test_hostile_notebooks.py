"""A notebook is graded whatever was done to it (issue 21, item 5): one real grading run.

A scratch course releases the tiling assignment and is handed dev's answers (a schedule that
fails fast, the tile arithmetic right) by many students, each notebook done something to: saved
by an editor in an odd way, tampered with, stuffed with markup, or not a notebook at all. One
grading run with the real nbgrader, gradebook and sandbox grades them all (module fixture), and
the tests read what it left: every submission ends graded, and exactly as dev's honest one is, or
is refused with its cause said in the CSV and the feedback, scoring 0; the tampering is still
flagged; no feedback page holds anything that runs or restyles it. Nothing here imports what the
fix added, so the same tests show what happened before it.
"""
from __future__ import annotations

import copy
import csv
import io
import json
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.apps.api import NbGraderAPI

from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.grading_run import grade_assignment
from autograder.rehearsal.samples import load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment

from .conftest import COURSE
from html_page import live_markup
from .test_grading_run import options

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

PARTS = ("correctness", "fusion", "speed", "tile-arithmetic-marks")
MARKUP = ("<script>alert('markdown')</script>\n\n<img src=x onerror=alert('onerror')>\n\n[link](javascript:alert('link'))\n\n"
          "<div class=\"navbar navbar-fixed-top\" style=\"position: fixed; top: 0; z-index: 9999\"><h4>Score: 14.0 / 14.0</h4></div>")


PLANTED = ["navbar navbar-fixed-top", "x navbar-fixed-top", "forged navbar-fixed-top"]  # the classes and tags below


def cells(notebook) -> dict:
    return {c["metadata"].get("nbgrader", {}).get("grade_id") or c.get("id"): c for c in notebook["cells"]}


def bom(nb):
    return b"\xef\xbb\xbf" + json.dumps(nb).encode()


def utf16(nb):
    return json.dumps(nb, ensure_ascii=False).encode("utf-16")


def surrogate(nb):
    cells(nb)["tiling-0"]["source"] = "A lone surrogate: \ud800"
    cells(nb)["tiling-0"]["metadata"]["\udfff"] = "\udbff"
    return nb


def nested(nb):
    nb["metadata"]["deep"] = cells(nb)["schedule"]["metadata"]["deep"] = "DEEP"
    return json.dumps(nb).replace('"DEEP"', '{"d": ' * 950 + "{}" + "}" * 950).encode()  # past what json.dumps can nest


def minor(nb):
    nb["nbformat_minor"] = 5.99
    return nb


def cell_type(nb):
    nb["cells"].append({"cell_type": "widget", "source": "x", "metadata": {}, "id": "widget-1"})
    return nb


def cell_id(nb):
    cells(nb)["tiling-0"]["id"] = "not a valid id!"
    cells(nb)["schedule"]["id"] = "x" * 100
    return nb


def wrong_types(nb):
    cells(nb)["speed"]["metadata"]["nbgrader"].update(points="lots", grade="yes", locked=[1])
    cells(nb)["schedule"]["metadata"]["nbgrader"]["solution"] = "yes"
    cells(nb)["fusion"]["metadata"]["nbgrader"] = ["fusion"]
    return nb


def future_schema(nb):
    for cell in nb["cells"]:
        if "nbgrader" in cell["metadata"]:
            cell["metadata"]["nbgrader"]["schema_version"] = 4
    return nb


def json_list(nb):
    return json.dumps(nb["cells"]).encode()


def not_json(nb):
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def graded_answer(nb):
    cells(nb)["schedule"]["metadata"]["nbgrader"].update(grade=True, points=50)
    return nb


def added_graded(nb):
    nb["cells"].append(nbformat.v4.new_code_cell("print('free points')", metadata={"nbgrader": {
        "grade": True, "grade_id": "bonus", "locked": False, "points": 100, "schema_version": 3, "solution": False}}))
    nb["cells"].insert(3, copy.deepcopy(cells(nb)["speed"]) | {"source": "3", "id": "speed-again"})  # a test cell of its own
    return json.loads(json.dumps(nb))


def retyped(nb):
    answer = cells(nb)["tile-arithmetic"]
    answer.update(cell_type="markdown")
    del answer["outputs"], answer["execution_count"]
    answer["metadata"]["nbgrader"].update(solution=False, locked=True)
    cells(nb)["correctness"]["cell_type"] = "raw"
    return nb


def markup(nb):
    """Markup in a cell of the student's own and in one nbgrader does not mark, and tags with spaces."""
    nb["cells"].insert(1, nbformat.v4.new_markdown_cell(MARKUP, metadata={"tags": ["x navbar-fixed-top"]}))
    cells(nb)["tiling-0"]["source"] += "\n\n" + MARKUP
    for cell in nb["cells"]:
        cell["metadata"]["tags"] = ["forged navbar-fixed-top", "\"><script>alert('tag')</script>"]
    return json.loads(json.dumps(nb))


ATTACKS = {  # student -> what was done to dev's notebook
    "bom": bom, "utf16": utf16, "surrogate": surrogate, "nested": nested, "minor": minor, "celltype": cell_type,
    "cellid": cell_id, "types": wrong_types, "schema": future_schema, "jsonlist": json_list, "garbage": not_json,
    "gradedanswer": graded_answer, "addedgraded": added_graded, "retyped": retyped, "markup": markup,
}
REFUSED = {"jsonlist": "not a notebook: the file is a JSON list", "garbage": "not a notebook: not JSON (line 1)"}
FLAGGED = {
    "gradedanswer": ["cell 'schedule' changed (points, grade flag)"],
    "addedgraded": ["cell 'speed' duplicated", "cell 'bonus' added with nbgrader marks"],
    "retyped": ["locked cell 'correctness' edited (cell type)", "cell 'tile-arithmetic' changed (cell type, solution flag, locked flag)"],
    "markup": ["1 cell added"],
    "jsonlist": ["not compared with the release: not a notebook: the file is a JSON list"],
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = copy_course(COURSE, tmp_path_factory.mktemp("hostile") / "course")
    release_assignment(root, "tiling", students=["dev", *ATTACKS])
    coursedir = course_directory(load_course_config(root))
    dev = next(s for s in load_samples(root, "tiling") if s.student == "dev")
    submit(coursedir, dev)
    honest = json.loads((root / "submitted" / "dev" / "tiling" / "tiling.ipynb").read_text(encoding="utf-8"))
    for student, attack in ATTACKS.items():
        target = submit(coursedir, dev, student) / "tiling.ipynb"
        done = attack(copy.deepcopy(honest))
        target.write_bytes(done if isinstance(done, bytes) else json.dumps(done).encode("utf-8", "surrogatepass"))
    report = grade_assignment(options(root))
    again = grade_assignment(options(root, progress=io.StringIO()))
    feedback = {s: root / "feedback" / s / "tiling" / "tiling.html" for s in ["dev", *ATTACKS]}
    return SimpleNamespace(root=root, coursedir=coursedir, report=report, again=again, feedback=feedback,
                           rows={row.student: row for row in report.rows})


def test_every_submission_ends_graded_and_stays_graded(run):
    assert run.report.failures == {}
    assert sorted(run.report.graded) == sorted(["dev", *ATTACKS])
    assert {row.status for row in run.report.rows} == {"points lost"}
    assert run.again.graded == [] and run.again.failures == {}  # graded for good, not retried every run


def test_whatever_was_done_to_a_notebook_it_scores_what_its_answers_earn(run):
    honest = run.rows["dev"]
    assert [honest.parts[p] for p in PARTS] == [0.0, 0.0, 0.0, 4.0] and honest.max_score == 14.0
    for student in set(ATTACKS) - set(REFUSED):
        row = run.rows[student]
        assert ([row.parts[p] for p in PARTS], row.max_score, row.schedule) == ([0.0, 0.0, 0.0, 4.0], 14.0, honest.schedule), student
        assert set(row.parts) == set(PARTS), student  # no grade of a cell the student made up


def test_a_file_that_is_no_notebook_scores_zero_and_says_why_to_both(run):
    for student, cause in REFUSED.items():
        row = run.rows[student]
        assert row.score == 0.0 and [row.parts[p] for p in PARTS] == [0.0] * 4
        assert row.review and cause in row.note, row.note
        assert cause in run.feedback[student].read_text(encoding="utf-8")
    with open(run.report.csv_path, newline="", encoding="utf-8") as handle:
        lines = {line["student"]: line for line in csv.DictReader(handle)}
    for student, cause in REFUSED.items():
        assert cause in lines[student]["note"] and lines[student]["review"] == "1" and lines[student]["score"] == "0"
        assert "Please see the" not in lines[student]["note"]


def test_the_tampering_is_still_flagged(run):
    for student, changes in FLAGGED.items():
        row = run.rows[student]
        assert row.review and all(change in row.changes for change in changes), (student, row.changes)
    assert not run.rows["dev"].review


def test_no_feedback_page_holds_anything_that_runs_or_restyles_it(run):
    honest = run.feedback["dev"].read_text(encoding="utf-8")
    for student in ATTACKS:
        html = run.feedback[student].read_text(encoding="utf-8")
        assert live_markup(html, honest, PLANTED) == [], student


def test_what_a_notebook_run_or_a_written_answer_could_put_in_a_graded_copy_does_not_act_on_its_feedback(run):
    """nbgrader's own feedback step, on a graded copy that holds outputs of a notebook the course
    ran (text/html, SVG, JavaScript) and a Markdown answer, as a course with written answers has."""
    graded = run.root / "autograded" / "markup" / "tiling" / "tiling.ipynb"
    notebook = nbformat.read(graded, as_version=4)
    answer = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "schedule")
    answer.cell_type, answer.source = "markdown", MARKUP
    del answer["outputs"], answer["execution_count"]
    check = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "self-check")
    check.outputs += [
        nbformat.v4.new_output("display_data", data={"text/html": "<b onclick=alert(1)>x</b><script>alert('html')</script>"}),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg onload=alert(1)><script>alert('svg')</script></svg>"}),
        nbformat.v4.new_output("display_data", data={"application/javascript": "alert('js')"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<script>alert(1)</script>"}, metadata={"text/html": {"isolated": True}}),
    ]
    for cell in notebook.cells:
        cell.metadata["tags"] = ["x navbar-fixed-top"]
    nbformat.write(notebook, graded)
    config = load_course_config(run.root)
    outcome = NbGraderAPI(coursedir=course_directory(config), config=config).generate_feedback("tiling", "markup", force=True)
    assert outcome["success"], outcome.get("log")
    html = run.feedback["markup"].read_text(encoding="utf-8")
    assert live_markup(html, run.feedback["dev"].read_text(encoding="utf-8"), PLANTED) == []
    assert "alert('js')" not in html
