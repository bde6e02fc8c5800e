"""The instructor's grading run end to end: real nbgrader, the real sandbox, the real sqlite gradebook.

One scratch course is released, handed the bundled tiling samples plus one hostile submission,
and graded once with two workers (module fixture); the tests read what that run left. The last
tests grade again (a resubmission, a run past its deadline), so they come last. The course's
config runs no student notebook (test_resilient_execute.py grades with that switched on).
"""
from __future__ import annotations

import io
import json
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest
from nbclient import NotebookClient

from autograder.course.course_dir import CourseError, course_directory, load_course_config
from autograder.course.grading_run import Graded, GradingOptions, grade_assignment
from autograder.rehearsal.samples import Sample, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment, release_leaks, submit_samples
from autograder.course.submissions import fingerprint
from autograder.problems.variants import SECRET_ENV, STUDENT_ENV, TABLE_FILE, course_secret, variant_for

from .conftest import COURSE, REPO, source_notebook

pytestmark = pytest.mark.slow

TEST_SETTINGS = {"timing_rounds": 5, "min_repeat_ms": 5.0, "student_timeout_s": 3.0}
CELL_TIMEOUT = 8
RIGHT = ("TILES_PER_CHANNEL = (HEIGHT // TILE_ROWS) * (WIDTH // TILE_COLS)\nTILE_BYTES = TILE_ROWS * TILE_COLS * 4\n"
         "WHOLE_BYTES = OUT_CHANNELS * HEIGHT * WIDTH * 4\nHALO_PIXELS = (TILE_ROWS + 2) * (TILE_COLS + 2)")
# Not a bundled sample: a schedule cell that ignores interrupts and spins, and (hostile_cell) a
# cell of its own that attacks the grading, to exercise the machinery, not to teach.
HOSTILE = Sample(
    "zed", "tiling", "ignores SIGINT and spins",
    answers={"schedule": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n\ndef schedule(sch):\n    pass\n\nwhile True:\n    pass",
             "tile-arithmetic": RIGHT},
)


def hostile_cell(marker: Path, gradebook: Path | None = None) -> str:
    """A cell a student adds: leaves a file behind, and full marks for everyone in the gradebook."""
    source = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('student code ran during grading')\nprint('the kernel ran this')\n"
    if gradebook is not None:
        source += f"import sqlite3\nwith sqlite3.connect({str(gradebook)!r}) as db:\n    db.execute('UPDATE grade SET manual_score = 99')\n"
    return source


def submit_with_extra_cell(root: Path, sample: Sample, source: str) -> None:
    """Hand in `sample` with one more code cell, first in the notebook."""
    target = submit(course_directory(load_course_config(root)), sample)
    path = target / f"{sample.assignment}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(source))
    nbformat.write(notebook, path)


def pwned_marker() -> Path:
    return Path(tempfile.gettempdir()) / f"tvm-course-pwned-{secrets.token_hex(8)}"


def options(root, **overrides):
    settings = dict(course=root, workers=2, cell_timeout=CELL_TIMEOUT, grader_settings=dict(TEST_SETTINGS), progress=io.StringIO())
    settings.update(overrides)
    return GradingOptions("tiling", **settings)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = copy_course(COURSE, tmp_path_factory.mktemp("grading-run") / "course")
    release = release_assignment(root, "tiling")
    samples = submit_samples(root, "tiling")
    marker = pwned_marker()
    submit_with_extra_cell(root, HOSTILE, hostile_cell(marker, root / "gradebook.db"))
    submitted_before = fingerprint(root / "submitted")
    opts = options(root)
    report = grade_assignment(opts)
    yield SimpleNamespace(
        root=root, release=release, samples=samples, report=report, progress=opts.progress.getvalue(),
        submitted_before=submitted_before, submitted_after=fingerprint(root / "submitted"),
        rows={row.student: row for row in report.rows}, marker=marker, marker_existed=marker.exists(),
    )
    marker.unlink(missing_ok=True)


def cells(path):
    notebook = nbformat.read(path, as_version=4)
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}, notebook


def grade_rows(root):
    with sqlite3.connect(root / "gradebook.db") as db:
        return db.execute("SELECT COUNT(*), COUNT(DISTINCT notebook_id || cell_id) FROM grade").fetchone()


def test_the_release_has_no_solutions_and_no_hidden_tests(run):
    assert release_leaks(run.release) == []
    released, _ = cells(run.release / "tiling.ipynb")
    assert "decompose_reduction" not in released["schedule"].source  # the solution's code
    assert "NotImplementedError" in released["schedule"].source
    assert "question_points" not in released["tile-arithmetic-marks"].source


def test_every_submission_is_graded_and_shows_progress(run):
    assert run.report.failures == {}
    assert sorted(run.report.graded) == sorted([*run.samples, "zed"])
    for student in run.report.graded:
        assert f"] {student}: " in run.progress
    assert "[9/9]" in run.progress


def test_every_sample_scores_what_its_file_expects(run):
    for student, sample in run.samples.items():
        assert sample.mismatches(run.rows[student].parts, run.rows[student].schedule) == [], student


def test_one_grade_per_cell_and_submission(run):
    total, distinct = grade_rows(run.root)
    assert total == distinct == 9 * 4


def test_crashing_and_hanging_submissions_get_zero_for_the_schedule_only(run):
    for student, status in (("eli", "crashed"), ("fay", "timeout"), ("zed", "timeout")):
        row = run.rows[student]
        assert row.schedule == status and row.status == "points lost"
        assert [row.parts[p] for p in ("correctness", "fusion", "speed")] == [0.0, 0.0, 0.0]
        assert row.parts["tile-arithmetic-marks"] == 4.0  # read from the cell's source, never run


def test_no_student_code_runs_in_a_kernel_while_grading(run):
    assert not run.marker_existed  # zed's own first cell would have written it
    with sqlite3.connect(run.root / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM grade WHERE manual_score IS NOT NULL").fetchone() == (0,)
    assert run.rows["zed"].parts["tile-arithmetic-marks"] == 4.0 and run.rows["zed"].parts["speed"] == 0.0
    for student in run.report.graded:  # outputs only where the trusted grader wrote them
        graded, notebook = cells(run.root / "autograded" / student / "tiling" / "tiling.ipynb")
        trusted = {"self-check", "correctness", "fusion", "speed", "tile-arithmetic-marks"}
        assert all(graded[t].outputs for t in trusted), student
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade_id") not in trusted:
                assert cell.outputs == [] and cell.execution_count is None, (student, cell.source[:60])


def test_edited_test_cells_are_restored_before_grading(run):
    source, _ = cells(source_notebook("tiling"))
    submitted, _ = cells(run.root / "submitted" / "trudy" / "tiling" / "tiling.ipynb")
    graded, _ = cells(run.root / "autograded" / "trudy" / "tiling" / "tiling.ipynb")
    assert submitted["speed"].source == "3"
    assert graded["speed"].source == source["speed"].source
    assert graded["tile-arithmetic-marks"].source == source["tile-arithmetic-marks"].source  # hidden test back in
    assert run.rows["trudy"].parts["speed"] == 0.0 and run.rows["trudy"].parts["tile-arithmetic-marks"] == 0.0


def run_as_student(run, student, tmp_path, monkeypatch):
    """The student's notebook run top to bottom in a real kernel, where they work: beside the
    variants.json released with it, with their id set as the README says."""
    shutil.copy(run.release / TABLE_FILE, tmp_path / TABLE_FILE)
    monkeypatch.setenv(STUDENT_ENV, student)
    submitted = nbformat.read(run.root / "submitted" / student / "tiling" / "tiling.ipynb", as_version=4)
    NotebookClient(submitted, kernel_name="python3", timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}).execute()
    return submitted


def test_a_student_sees_their_own_variant_and_is_graded_on_it(run, tmp_path, monkeypatch):
    variant = variant_for("ada", course_secret(run.root))
    notebook = run_as_student(run, "ada", tmp_path, monkeypatch)
    text = {c.metadata.get("nbgrader", {}).get("grade_id") or c.get("id"): "".join(
        o.get("text", "") + o.get("data", {}).get("text/html", o.get("data", {}).get("text/plain", "")) for o in c.get("outputs", []))
        for c in notebook.cells}
    assert f"Student ada: {variant.describe()}" in text["tiling-1"]
    assert f"T.int64({variant.out_channels}), T.int64({variant.height}), T.int64({variant.width})), \"float32\")" in text["tiling-3"]
    assert "PASSED" in text["self-check"] and "the variant of ada" in text["self-check"]
    assert "All answers are there" in text["tile-arithmetic-marks"]
    graded = json.loads((run.root / "autograded" / "ada" / "tiling" / "tiling.ipynb").read_text())["metadata"]["tvm_course"]
    assert graded["results"]["schedule"]["variant"] == {"student": "ada", **variant.to_dict()}
    assert run.rows["ada"].parts["tile-arithmetic-marks"] == 4.0 and run.rows["ben"].parts["tile-arithmetic-marks"] == 0.0


def test_a_run_without_the_course_secret_refuses_to_start_and_says_where_to_set_it(run, tmp_path, monkeypatch):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    root = copy_course(COURSE, tmp_path / "course")
    (root / "variant-secret").unlink()
    with pytest.raises(CourseError, match="refusing to grade: no course secret.*tvm-course variants init"):
        grade_assignment(GradingOptions("tiling", course=root, progress=None))


def test_tampering_inside_the_kernel_fools_the_kernel_but_not_the_gradebook(run, tmp_path, monkeypatch):
    submitted = run_as_student(run, "mallory", tmp_path, monkeypatch)
    shown = {
        c.metadata["nbgrader"]["grade_id"]: float(o["data"]["text/plain"])
        for c in submitted.cells if c.metadata.get("nbgrader", {}).get("grade")
        for o in c.outputs if o.output_type == "execute_result"
    }
    assert shown == {"correctness": 4.0, "fusion": 3.0, "speed": 3.0}  # what the patched helpers claim
    schedule_parts = ("correctness", "fusion", "speed")  # what the same schedule as ben's honestly earns
    assert [run.rows["mallory"].parts[p] for p in schedule_parts] == [run.rows["ben"].parts[p] for p in schedule_parts]
    assert run.rows["mallory"].parts["speed"] == 0.0
    graded, _ = cells(run.root / "autograded" / "mallory" / "tiling" / "tiling.ipynb")
    assert "outside your notebook's kernel" in graded["speed"].outputs[0].text


def test_feedback_shows_trusted_verdicts_and_no_hidden_test_code(run):
    for student in run.report.graded:
        html = (run.root / "feedback" / student / "tiling" / "tiling.html").read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in html and "question_points" not in html
        assert "outside your notebook" in html


def test_the_csv_has_a_row_per_submission(run):
    lines = run.report.csv_path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("student,score,max_score,status,speedup")
    assert sorted(line.split(",")[0] for line in lines[1:]) == sorted([*run.samples, "zed"])


def test_submissions_are_not_modified(run):
    assert run.submitted_after == run.submitted_before


def test_what_the_run_writes_is_readable_by_its_owner_only(run):
    written = [run.report.csv_path, run.root / "gradebook.db"]
    for folder in ("autograded", "feedback"):
        written += [run.root / folder, *(run.root / folder).rglob("*")]
    assert len(written) > 10
    exposed = [str(p) for p in written if p.stat().st_mode & 0o077]
    assert exposed == []


def test_the_run_warns_when_the_solutions_are_readable_by_other_users(run):
    source = run.root / "source"
    assert source.stat().st_mode & 0o004  # a plain copy of the course, as a checkout is
    assert any(str(source) in w and "chmod -R go-rwx" in w for w in run.report.warnings)
    assert "readable by every user" in run.progress


def test_a_class_run_refuses_to_grade_where_student_code_cannot_be_confined(run, monkeypatch, tmp_path):
    """No machine here lacks Landlock and seccomp, so their absence is what `available` reports."""
    from autograder.engine import confine

    monkeypatch.setattr(confine, "available", lambda: confine.Status(0, False, "Landlock: not in this kernel"))
    with pytest.raises(CourseError, match="refusing to grade: student code cannot be confined") as refused:
        grade_assignment(options(run.root))
    assert "--allow-unconfined" in str(refused.value) and "Landlock: not in this kernel" in str(refused.value)
    unreleased = copy_course(COURSE, tmp_path / "course")
    with pytest.raises(CourseError, match="there is no gradebook"):  # the flag lets the run go on
        grade_assignment(GradingOptions("tiling", course=unreleased, progress=None, allow_unconfined=True))


def test_a_class_run_refuses_to_grade_where_gradings_are_not_kept_apart(run, monkeypatch):
    """Confined, but without namespaces or Landlock's signal scoping (ABI 6): one submission could
    reach another grading running beside it."""
    from autograder.engine import confine

    monkeypatch.setattr(confine, "available", lambda: confine.Status(5, True, "namespaces: refused", namespaces=False))
    with pytest.raises(CourseError, match="each grading apart from the others") as refused:
        grade_assignment(options(run.root))
    assert "--allow-unconfined" in str(refused.value) and "isolation between gradings" in str(refused.value)


def test_a_machine_that_cannot_grade_its_own_schedule_grades_no_one(run):
    """The preflight: the bundled journal graded confined, before anyone; here with too little
    memory for the runner to run even the grader's own baseline."""
    before = grade_rows(run.root)
    with pytest.raises(CourseError, match="cannot grade on this machine.*journal") as stopped:
        grade_assignment(options(run.root, force=True, grader_settings={**TEST_SETTINGS, "evaluate_memory_mb": 1}))
    assert "What to do" in str(stopped.value) and "Nothing was graded" in str(stopped.value)
    assert grade_rows(run.root) == before


def test_a_course_configured_for_stock_nbgrader_is_refused_with_the_lines_to_add_and_grades_no_one(run):
    """Without the trusted steps in its nbgrader_config.py, nbgrader would run zed's notebook in a
    kernel (whose extra cell writes the marker and full marks into the gradebook) and score what
    it printed: the run refuses before anyone is graded, and names the lines that put it right."""
    from autograder.nbgrader_ext import trusted_steps

    config = run.root / "nbgrader_config.py"
    shipped = config.read_text(encoding="utf-8")
    before, graded_before = grade_rows(run.root), fingerprint(run.root / "autograded")
    config.write_text(shipped.replace("c.Autograde.sanitize_preprocessors = trusted_steps.sanitize_preprocessors()", "")
                      .replace("c.Autograde.autograde_preprocessors = trusted_steps.autograde_preprocessors(c)", ""), encoding="utf-8")
    try:
        with pytest.raises(CourseError, match="Not grading") as refused:
            grade_assignment(options(run.root, force=True))
    finally:
        config.write_text(shipped, encoding="utf-8")
    said = str(refused.value)
    assert "NormaliseSubmission must come first" in said and "Execute would run the student's notebook" in said
    assert said.rstrip().endswith("\n".join(f"    {line}" for line in (
        trusted_steps.IMPORT_LINE, "c.Autograde.sanitize_preprocessors = trusted_steps.sanitize_preprocessors()",
        "c.Autograde.autograde_preprocessors = trusted_steps.autograde_preprocessors(c)")))
    assert grade_rows(run.root) == before and fingerprint(run.root / "autograded") == graded_before
    assert not run.marker.exists()


def test_errors_that_stop_a_run_say_what_to_do(run, tmp_path):
    unreleased = copy_course(COURSE, tmp_path / "course")
    with pytest.raises(CourseError, match="there is no gradebook"):
        grade_assignment(GradingOptions("tiling", course=unreleased, progress=None))
    assert not (unreleased / "gradebook.db").exists()
    with pytest.raises(CourseError, match="release it first"):
        grade_assignment(GradingOptions("gpu-tiling", course=run.root, progress=None))
    with pytest.raises(CourseError, match="no submission of 'tiling' from nobody"):
        grade_assignment(options(run.root, students=["nobody"]))
    with pytest.raises(CourseError, match="--mcpu: LLVM does not know a CPU named 'pentium-9000'"):
        grade_assignment(options(run.root, grader_settings={**TEST_SETTINGS, "mcpu": "pentium-9000"}))
    with pytest.raises(CourseError, match="no nbgrader course root"):
        grade_assignment(GradingOptions("tiling", course=run.root / "source", progress=None))


def test_the_command_regrades_only_a_resubmission_in_place(run):
    root = run.root
    untouched = {s: run.rows[s].parts for s in run.samples if s != "ben"}
    time.sleep(0.01)
    ada = next(s for s in run.samples.values() if s.student == "ada")
    submit(course_directory(load_course_config(root)), Sample("ben", "tiling", "resubmits ada's answers", ada.answers))
    before = fingerprint(root / "submitted")
    command = [sys.executable, "-m", "autograder.cli", "grade", "tiling", "--course", str(root), "--workers", "2",
               "--cell-timeout", str(CELL_TIMEOUT), "--timing-rounds", "5", "--min-repeat-ms", "5", "--student-timeout-s", "3"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 graded (changed 1), 8 not graded (unchanged 8), 0 failed" in done.stdout
    assert "ben: changed since it was graded: tiling.ipynb edited, timestamp.txt edited" in done.stderr
    table = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:11]}
    assert table["ben"][2:4] == ["/", "14"] and 12 <= float(table["ben"][1]) <= 14  # ada's answers now
    assert grade_rows(root) == (9 * 4, 9 * 4)
    rerun = grade_assignment(options(root, progress=None))
    assert rerun.graded == [] and {s: r.parts for s, r in ((r.student, r) for r in rerun.rows) if s in untouched} == untouched
    assert fingerprint(root / "submitted") == before


def test_a_submission_past_its_deadline_is_stopped_and_the_rest_survive(run):
    started = time.time()
    slow_sandbox = dict(TEST_SETTINGS, student_timeout_s=120.0)  # zed's schedule spins past the deadline
    report = grade_assignment(options(run.root, students=["zed", "dev"], force=True, submission_timeout_s=6, grader_settings=slow_sandbox))
    assert "took longer than 6 s" in report.failures["zed"]
    rows = {row.student: row for row in report.rows}
    assert rows["zed"].status == "grading-failed"
    assert "dev" not in report.failures and rows["dev"].parts == run.rows["dev"].parts
    time.sleep(1)
    assert _sandboxes_since(started) == []  # the stopped worker's sandbox went with it


def _sandboxes_since(started: float) -> list[int]:
    """Grading sandboxes (the student's child and the evaluator) started since `started`."""
    found = []
    for process in psutil.process_iter(["cmdline", "create_time"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if ("autograder.engine.student_runner" in cmdline or "autograder.engine.evaluate" in cmdline) and process.info["create_time"] >= started - 1:
            found.append(process.pid)
    return found


def test_a_run_on_another_cpu_than_the_named_grading_machine_warns_and_says_what_to_set():
    """Students are told which CPU times their speed (grading-machine.json, from
    c.GradingMachine.cpu): a class run on another CPU says so before grading, and how to mend it."""
    from traitlets.config import Config

    from autograder.course.grading_run import not_the_named_machine
    from autograder.nbgrader_ext.grading_machine import this_cpu

    here = this_cpu()
    assert not_the_named_machine(Config()) == []  # none named: every self-check already says so
    same = Config()
    same.GradingMachine.cpu = here
    assert not_the_named_machine(same) == []
    other = Config()
    other.GradingMachine.cpu = "haswell" if here != "haswell" else "znver4"
    (warning,) = not_the_named_machine(other)
    assert repr(other.GradingMachine.cpu) in warning and repr(here) in warning
    assert f"c.GradingMachine.cpu = {here!r}" in warning and "generate_assignment --force" in warning


def test_every_reason_a_submission_was_graded_again_is_kept():
    """A worker lost while grading it, then its timing disturbed: the report says both (a later
    reason once replaced the earlier, and the instructor never read that a worker was lost)."""
    graded = Graded()
    graded.retry("ben", "started on 2 workers (a, b): a worker was lost while grading it")
    graded.retry("ben", "timed again: its core ran the FMA peak kernel at 0.6 of the machine's")
    graded.retry("ada", "timed again: its core was busy")
    assert graded.retried == {
        "ben": "started on 2 workers (a, b): a worker was lost while grading it; then timed again: its core ran the FMA "
               "peak kernel at 0.6 of the machine's",
        "ada": "timed again: its core was busy",
    }
