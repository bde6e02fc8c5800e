"""The cost-model assignment's term with nbgrader's real commands: generate_assignment with the
class enrolled, release_assignment to an exchange, a student's fetch, answer and submit, collect,
`tvm-course grade`, and the feedback, with a second student's hostile learner beside it.

The scratch course grades on the tiny candidate table (`c.TrustedGrader.cost_model_grid =
"tiny"`: 24 candidates, measured in seconds into a folder of this test's), so the class run's
whole path is what is tested here, not the real table's size (tests/costmodel has that)."""
from __future__ import annotations

import base64
import csv
import os
import pwd
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from autograder.costmodel.scoring import ScoringPlan
from autograder.costmodel.space import TINY, TINY_SHAPE, candidates
from autograder.rehearsal.samples import build_submission, load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_leaks
from autograder.nbgrader_ext.normalise import coursedir_of  # noqa: F401  (the course's own modules import cleanly)
from autograder.problems.variants import TABLE_FILE

from .conftest import COURSE

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
ASSIGNMENT = "cost-model"
SVG = "{http://www.w3.org/2000/svg}"
STUDENT = pwd.getpwuid(os.getuid()).pw_name  # nbgrader names a submitter by their OS user
CANVAS_IDS = {STUDENT: "7001", "ben": "7002"}  # as `tvm-course roster --from canvas` records them


def run(args: list[str], cwd: Path, env: dict, timeout: int = 600) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("cost-model-term")
    root = copy_course(COURSE, base / "instructor" / "course")
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('\nc.TrustedGrader.cost_model_grid = "tiny"  # the test\'s: 24 candidates\n')
    exchange = base / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(base / "instructor"),
           "TVM_COURSE_TABLES": str(base / "tables")}
    for name in ("TVM_COURSE_STUDENT", "JUPYTERHUB_USER"):
        env.pop(name, None)
    nbgrader = [str(BIN / "nbgrader")]
    where = ["--course", "tvm-course", f"--Exchange.root={exchange}"]
    log = {}
    for student in (STUDENT, "ben"):
        run([*nbgrader, "db", "student", "add", student, f"--lms-user-id={CANVAS_IDS[student]}"], root, env)
    log["generate"] = run([*nbgrader, "generate_assignment", ASSIGNMENT], root, env)
    log["release"] = run([*nbgrader, "release_assignment", ASSIGNMENT, *where], root, env)
    home = base / "home"
    home.mkdir()
    student_env = {**env, "HOME": str(home)}
    cache = [f"--Exchange.cache={home / '.cache'}"]
    run([*nbgrader, "fetch_assignment", ASSIGNMENT, *where, *cache], home, student_env)
    samples = {s.student: s for s in load_samples(root, ASSIGNMENT)}
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.write(build_submission(nbformat.read(fetched, as_version=4), samples["ada"]), fetched)
    run([*nbgrader, "submit", ASSIGNMENT, *where, *cache], home, student_env)
    log["collect"] = run([*nbgrader, "collect", ASSIGNMENT, *where], root, env)
    from autograder.course.course_dir import course_directory, load_course_config

    submit(course_directory(load_course_config(root)), samples["ben"], "ben")  # as collect leaves it
    log["grade"] = run([str(BIN / "tvm-course"), "grade", ASSIGNMENT, "--course", str(root), "--workers", "2"], root, env)
    return root, home, base, log


def test_the_release_has_no_solution_and_the_students_variants(term):
    root, home, _, _ = term
    fetched = home / ASSIGNMENT
    assert sorted(p.name for p in fetched.iterdir()) == sorted([f"{ASSIGNMENT}.ipynb", TABLE_FILE])
    assert release_leaks(fetched) == []
    released = nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    answer = next(c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "cost-model")
    assert "np.linalg.solve" not in answer.source and "class Model" not in answer.source


def test_the_class_run_grades_both_parts_and_the_hostile_learner_scores_zero(term):
    root, _, base, log = term
    with open(root / f"{ASSIGNMENT}-grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    ada, ben = rows[STUDENT], rows["ben"]
    # the instructor's model graded against itself as the bar: full points, or pending where this
    # tiny table cannot tell it from random (a grader fault, never a zero)
    for part in ("ranking", "search"):
        assert ada[part] == "" or float(ada[part]) == 4.0, (ada, log["grade"])
        assert float(ben[part]) == 0.0, ben
    assert ada["ranking"] != "" and float(ada["ranking"]) == 4.0, log["grade"]
    if ada["search"] == "":  # pending: the instructor is told why, in the grader faults' log
        assert "no better than random" in (root / f"{ASSIGNMENT}-grader-faults.log").read_text()
    assert any(p.suffix == ".json" for p in (base / "tables").iterdir())  # the grader's table, where it was told
    # the run's table says how each part went, where a schedule's status would be
    printed = {line.split()[0]: line for line in log["grade"].splitlines() if line.startswith((f"{STUDENT} ", "ben "))}
    assert "ranking failed / search failed" in printed["ben"], log["grade"]
    assert re.search(r"ranking 100% / search (100%|pending)", printed[STUDENT]), log["grade"]
    assert (base / "tables").stat().st_mode & 0o077 == 0


def test_the_feedback_says_why_each_part_scored_what_it_did(term):
    root, _, _, _ = term
    run([str(BIN / "nbgrader"), "generate_feedback", ASSIGNMENT, "--force"], root,
        {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    ben = (root / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "NaN or infinite" in ben and "scores 0" in ben
    ada = (root / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "top-2 score" in ada and "pairwise accuracy" in ada
    # each part's figure, drawn from the grader's record: a point per held-out candidate of the
    # first split; the student's, the instructor's and random's curves over the search's budget
    pool = len(candidates(TINY_SHAPE, TINY))
    plan = ScoringPlan.for_pool(pool)
    figures = svg_images(ada)
    assert len(figures) == 2, ada
    ranking, search = figures
    assert len([c for c in ranking.iter(f"{SVG}circle") if "candidate" in c.get("class", "")]) == pool - plan.train
    curves = {c.get("class"): c.get("points").split() for c in search.iter(f"{SVG}polyline")}
    assert sorted(curves) == ["curve instructor", "curve random", "curve student"]
    assert {len(points) for points in curves.values()} == {max(plan.budgets)}
    assert svg_images(ben) == []  # a learner that failed in both parts: nothing to draw, its lines say why


def test_the_grades_reach_the_lms_once_the_written_answers_are_marked(term):
    root, _, _, _ = term
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}

    def export(fmt: str, *options: str) -> dict[str, dict]:
        path = root / f"export-{fmt}.csv"
        run([str(BIN / "tvm-course"), "export", ASSIGNMENT, "--format", fmt, "-o", str(path), "--course", str(root), *options],
            root, env)
        with open(path, newline="", encoding="utf-8") as handle:
            return {row["student" if fmt == "csv" else "ID"]: row for row in csv.DictReader(handle)}

    # the written answer is marked by hand: until then ada's score is not final, and none is written;
    # ben wrote none, which nbgrader scores 0 as it stands (an unchanged answer cell)
    before = export("csv")
    assert before[STUDENT]["score"] == "" and "written" in before[STUDENT]["pending"].split(","), before[STUDENT]
    assert before["ben"]["score"] == "0" and before["ben"]["pending"] == "", before["ben"]
    from autograder.course.course_dir import course_directory, load_course_config
    from nbgrader.api import Gradebook

    coursedir = course_directory(load_course_config(root))
    marks = {STUDENT: 1.5}
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:  # as the formgrader saves a mark
        for student, mark in marks.items():
            gradebook.find_grade("written", ASSIGNMENT, ASSIGNMENT, student).manual_score = mark
        gradebook.db.commit()
    with open(root / f"{ASSIGNMENT}-grades.csv", newline="", encoding="utf-8") as handle:
        graded = {row["student"]: row for row in csv.DictReader(handle)}
    expected = {}  # both autograded parts and the mark; none where a part is pending (the tiny table's search may be)
    for student in (STUDENT, "ben"):
        parts = [graded[student]["ranking"], graded[student]["search"]]
        expected[student] = None if "" in parts else sum(map(float, parts)) + marks.get(student, 0.0)
    after = export("csv")
    canvas = export("canvas", "--column", "Cost model (9031)")
    for student, score in expected.items():
        row = after[student]
        assert row["max_score"] == "10", row
        if score is None:
            assert row["score"] == "" and row["pending"] == "search", row
            assert canvas[CANVAS_IDS[student]]["Cost model (9031)"] == ""
        else:
            assert float(row["score"]) == pytest.approx(score) and row["pending"] == "", row
            assert float(canvas[CANVAS_IDS[student]]["Cost model (9031)"]) == pytest.approx(score)
    assert expected["ben"] == 0.0  # both parts 0: his learner's NaN


def svg_images(page: str) -> list[ET.Element]:
    """The SVG figures of a feedback page, which nbconvert shows as <img> data URLs."""
    return [ET.fromstring(base64.b64decode(found)) for found in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)]
