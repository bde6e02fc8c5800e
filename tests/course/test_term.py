"""The instructor's term with nothing but the README's commands: LMS class list, release, LMS
download, grading, and grades back to the LMS, for a Canvas and a Moodle course (with the
exchange's part in test_exchange.py): a class of ten with the edges real classes have. Canvas:
a plain upload, a LATE one renamed tiling-1, a resubmission (Tiling.ipynb, then tiling (1).ipynb:
the newest is graded), a lower-case _late_, Canvas's Test Student and a stranger (refused, never
exported), a late joiner (enrolled after the release: the variants table is written again).
Moodle: a mixed-case email, and two uploads in one student's folder.

Real commands in subprocesses (tvm-course, nbgrader), real zip files built here as each LMS
builds its download (lms/download.py says from where), the real sandboxed grader. One
Canvas course is graded once, then again after one submission is edited in place (same
timestamp, same file time) and another comes in a second download; a Moodle course goes from
its class list and grading worksheet to a Moodle import file.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.rehearsal.samples import build_submission, load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.problems.variants import TABLE_FILE, course_secret, student_variant, variant_for

from .conftest import COURSE, REPO

pytestmark = pytest.mark.slow

GRADE_OPTIONS = ["--workers", "2", "--timing-rounds", "3", "--max-timing-rounds", "3", "--timing-budget-s", "1", "--min-repeat-ms", "5",
                 "--student-timeout-s", "3"]
CANVAS_EXPORT = ("Student,ID,SIS User ID,SIS Login ID,Section,Tiling (5551)\n"
                 "    Points Possible,,,,,14\n"
                 "\"Lovelace, Ada\",48213,U001,ada@uni.example,Section A,\n"
                 "\"Babbage, Ben\",48214,U002,ben@uni.example,Section A,\n"
                 "\"Babbage, Charles\",1002,U003,charles@uni.example,Section A,\n"
                 "\"Hopper, Grace\",1003,U004,grace@uni.example,Section A,\n"
                 "\"Student, Test\",48299,,,Section A,\n"
                 "\"Nobody, No Id\",,,,Section A,\n")
LATE_JOINER = CANVAS_EXPORT + "\"Latecomer, Lou\",48230,U005,lou@uni.example,Section A,\n"
MOODLE_EXPORT = ("First name,Last name,ID number,Institution,Department,Email address,\"Assignment: gpu\"\n"
                 "Dev,Devlin,,,,Dev.Devlin@uni.example,-\n"
                 "Eve,Evans,,,,eve@uni.example,-\n")
MOODLE_WORKSHEET = ("Identifier,\"Full name\",\"Email address\",Status,Grade,\"Maximum grade\",\"Grade can be changed\","
                    "\"Last modified (submission)\",\"Last modified (grade)\",\"Feedback comments\"\n"
                    "\"Participant 7001\",\"Dev Devlin\",Dev.Devlin@uni.example,\"Submitted for grading\",,14.00,Yes,-,-,\n"
                    "\"Participant 7002\",\"Eve Evans\",eve@uni.example,\"Submitted for grading\",,14.00,Yes,-,-,\n")


def command(*args, cwd=REPO, check=True, timeout=300):
    """A console command of the README, run as a subprocess; its result."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    program = [sys.executable, "-m", "autograder.cli"] if args[0] == "tvm-course" else [str(Path(sys.executable).parent / args[0])]
    done = subprocess.run([*program, *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and done.returncode not in (0, 1):
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def submission(root, student: str) -> str:
    """The released notebook as the sample `student` hands it in."""
    released = nbformat.read(root / "release" / "tiling" / "tiling.ipynb", as_version=4)
    return nbformat.writes(build_submission(released, next(s for s in load_samples(root, "tiling") if s.student == student)))


def write_zip(path: Path, entries: dict) -> Path:
    """Entries by name, or by zipfile.ZipInfo where the file's time matters (Moodle's folders)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    """A Canvas course: class list from Canvas's gradebook export, released, one download collected and graded."""
    work = tmp_path_factory.mktemp("canvas-term")
    root = copy_course(COURSE, work / "course")
    (work / "canvas-grades.csv").write_text(CANVAS_EXPORT, encoding="utf-8")
    roster = command("tvm-course", "roster", str(work / "canvas-grades.csv"), "--from", "canvas", "--course", str(root))
    command("nbgrader", "generate_assignment", "tiling", cwd=root)
    download = write_zip(work / "tvm-course-tiling_submissions.zip", {
        "lovelaceada_48213_900001_tiling.ipynb": submission(root, "ada"),
        "babbageben_LATE_48214_900002_tiling-1.ipynb": submission(root, "ben"),
        "babbagecharles_1002_900021_Tiling.ipynb": submission(root, "ada"),  # then uploaded again, renamed:
        "babbagecharles_1002_900035_tiling (1).ipynb": submission(root, "dev"),  # the newest is graded
        "hoppergrace_late_1003_900005_tiling.ipynb": submission(root, "eli"),
        "studenttest_48299_900006_tiling.ipynb": submission(root, "ada"),  # Canvas's Student View
        "strangersam_9999_900007_tiling.ipynb": submission(root, "ada"),  # not in the class
        "../../escaped_48215_900003_tiling.ipynb": submission(root, "ada"),
        "babbageben_48214_900004_notes.txt": "my notes",
    })
    collected = command("tvm-course", "collect", "tiling", str(download), "--from", "canvas", "--course", str(root))
    graded = command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS)
    exported = command("tvm-course", "export", "tiling", "--format", "canvas", "--column", "Tiling (5551)",
                       "-o", str(work / "to-canvas.csv"), "--course", str(root))
    return SimpleNamespace(work=work, root=root, roster=roster, collected=collected, graded=graded, exported=exported)


def test_the_class_comes_from_canvass_gradebook_export(canvas):
    assert canvas.roster.returncode == 0 and "4 student(s) added" in canvas.roster.stdout
    assert "row 8: no student id given" in canvas.roster.stderr  # the row without an ID is said, not guessed
    assert "row 7: Canvas's Test Student (user 48299)" in canvas.roster.stderr
    table = json.loads((canvas.root / "release" / "tiling" / "variants.json").read_text())
    assert len(table["variants"]) == 4  # every enrolled student can see their own shapes
    assert (canvas.root / "gradebook.db").stat().st_mode & 0o077 == 0  # every grade is in it


def test_a_canvas_download_is_collected_under_the_canvas_user_ids(canvas):
    out = canvas.collected.stdout + canvas.collected.stderr
    assert canvas.collected.returncode == 1, out  # collected, with entries refused: said, with their reasons
    assert "collected 4 notebook(s) of 4 student(s)" in out and "48214: tiling.ipynb (LATE in Canvas)" in out
    assert "1003: tiling.ipynb (LATE in Canvas)" in out  # Canvas's _LATE_, in either case
    assert "babbagecharles_1002_900021_Tiling.ipynb: an older upload of tiling.ipynb: " \
           "babbagecharles_1002_900035_tiling (1).ipynb is newer and is the one collected" in out
    assert "../../escaped_48215_900003_tiling.ipynb: a path with '..'" in out
    assert "babbageben_48214_900004_notes.txt: not a notebook" in out
    assert "not on the roster, not collected: 9999" in out and "Canvas's Test Student, not collected: 48299" in out
    assert sorted(p.name for p in (canvas.root / "submitted").iterdir()) == ["1002", "1003", "48213", "48214"]
    assert not (canvas.work / "escaped_48215_900003_tiling.ipynb").exists()
    assert list((canvas.root / "downloaded" / "tiling" / "archive").glob("canvas-*.zip"))
    submitted = canvas.root / "submitted" / "48214" / "tiling" / "tiling.ipynb"
    assert submitted.stat().st_mode & 0o077 == 0


def test_canvas_grades_go_back_as_a_canvas_gradebook_import(canvas):
    assert canvas.graded.returncode == 0, canvas.graded.stderr
    rows = read_csv(canvas.work / "to-canvas.csv")
    assert list(rows[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Tiling (5551)"]
    by_id = {row["ID"]: row for row in rows}
    assert set(by_id) == {"48213", "48214", "1002", "1003"} and by_id["48213"]["Student"] == "Lovelace, Ada"
    assert 12 <= float(by_id["48213"]["Tiling (5551)"]) <= 14 and float(by_id["48214"]["Tiling (5551)"]) == 7
    assert float(by_id["1002"]["Tiling (5551)"]) == 4  # the newest upload's grade (dev's answers), not the first's
    assert float(by_id["1003"]["Tiling (5551)"]) == 4
    assert "set the LMS assignment's maximum points to 14" in canvas.exported.stdout
    # without --column Canvas would make a new assignment: said; a submission from someone not in the gradebook
    # (put in submitted/ by hand, or by nbgrader collect from the exchange) is never written into the LMS's file
    stranger = canvas.root / "submitted" / "9999" / "tiling"
    stranger.mkdir(parents=True)
    shutil.copy2(canvas.root / "submitted" / "48213" / "tiling" / "tiling.ipynb", stranger / "tiling.ipynb")
    try:
        plain = command("tvm-course", "export", "tiling", "--format", "canvas", "-o", str(canvas.work / "plain.csv"),
                        "--course", str(canvas.root))
    finally:
        shutil.rmtree(stranger.parent)
    assert "Canvas's import creates a new assignment" in plain.stderr and "--column" in plain.stderr
    assert "left out (not in the gradebook): 9999" in plain.stdout
    assert {row["ID"] for row in read_csv(canvas.work / "plain.csv")} == set(by_id)
    # the table: the assignment's status apart from the schedule's, and the points ben lost, with why
    ben = next(line for line in canvas.graded.stdout.splitlines() if line.startswith("48214"))
    assert "points lost" in ben and "passed" in ben and "lost speed -3 of 3" in ben


def test_regrading_goes_by_content_and_a_new_download_replaces_what_it_must(canvas):
    ada = canvas.root / "submitted" / "48213" / "tiling" / "tiling.ipynb"
    before = ada.stat()
    ada.write_text(ada.read_text().replace("\n", " \n", 1))  # edited in place, its file time put back
    os.utime(ada, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = write_zip(canvas.work / "second.zip", {"babbageben_48214_900009_tiling-2.ipynb": submission(canvas.root, "cleo"),
                                                    "latecomerlou_48230_900010_tiling.ipynb": submission(canvas.root, "dev")})
    refused = command("tvm-course", "collect", "tiling", str(second), "--from", "canvas", "--course", str(canvas.root))
    assert refused.returncode == 1 and "not on the roster, not collected: 48230" in refused.stderr
    assert "replaced the earlier submission of 48214" in refused.stdout  # the others are collected all the same
    # the late joiner is enrolled: the release's variants table is written again, and says how to re-release
    (canvas.work / "with-lou.csv").write_text(LATE_JOINER, encoding="utf-8")
    enrolled = command("tvm-course", "roster", str(canvas.work / "with-lou.csv"), "--from", "canvas", "--course", str(canvas.root))
    assert "1 student(s) added" in enrolled.stdout and "nbgrader release_assignment tiling --force" in enrolled.stdout
    table = json.loads((canvas.root / "release" / "tiling" / "variants.json").read_text())
    assert len(table["variants"]) == 5
    collected = command("tvm-course", "collect", "tiling", str(second), "--from", "canvas", "--course", str(canvas.root))
    assert collected.returncode == 0 and "48230: tiling.ipynb" in collected.stdout and "replaced" not in collected.stdout
    with Gradebook(f"sqlite:///{canvas.root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_student("48230").lms_user_id == "48230"  # kept for the export to Canvas
    kept = list((canvas.root / "downloaded" / "tiling" / "replaced").glob("*/48214/tiling/tiling.ipynb"))
    assert len(kept) == 1 and kept[0].read_text() == submission(canvas.root, "ben")  # the one replaced is kept
    assert list((canvas.root / "downloaded" / "tiling" / "previous").glob("*/canvas-*.zip"))
    ours = ["--student", "48213", "--student", "48214"]  # the latecomer's grading is not what this test is about
    graded = command("tvm-course", "grade", "tiling", "--course", str(canvas.root), *ours, *GRADE_OPTIONS)
    assert "2 graded (changed 2), 0 not graded" in graded.stdout, graded.stdout + graded.stderr
    assert "48213: changed since it was graded: tiling.ipynb edited" in graded.stderr
    again = command("tvm-course", "grade", "tiling", "--course", str(canvas.root), *ours, *GRADE_OPTIONS)
    assert "0 graded, 2 not graded (unchanged 2)" in again.stdout


def test_a_download_with_nothing_to_collect_is_an_error_that_says_what_it_looked_for(canvas):
    deep = '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    junk = write_zip(canvas.work / "junk.zip", {"readme.txt": "hello", "Tiling Final.ipynb": submission(canvas.root, "ada"),
                                                "lovelaceada_48213_900099_tiling.ipynb": deep})  # nested 5,000 levels
    done = command("tvm-course", "collect", "tiling", str(junk), "--from", "canvas", "--course", str(canvas.root), check=False)
    assert done.returncode == 2
    assert "found no submission of tiling" in done.stderr and "lastfirst_[LATE_]USERID_ATTACHMENTID_NAME.ipynb" in done.stderr
    assert "Tiling Final.ipynb: not named as Canvas names submissions" in done.stderr
    assert "lovelaceada_48213_900099_tiling.ipynb: not a notebook: its JSON nests deeper" in done.stderr
    assert sorted(p.name for p in (canvas.root / "submitted").iterdir()) == ["1002", "1003", "48213", "48214", "48230"]  # nothing lost
    # nbgrader's own command, with the course's plugins, fails too (nbgrader alone exits 0 on nothing)
    archive = canvas.root / "downloaded" / "tiling" / "archive"
    for earlier in archive.iterdir():
        earlier.unlink()
    (archive / "junk.zip").write_bytes(junk.read_bytes())
    done = command("nbgrader", "zip_collect", "tiling", "--force", cwd=canvas.root, check=False)
    assert done.returncode == 1 and "found no submission" in done.stderr + done.stdout
    assert "nests deeper" in done.stderr + done.stdout and "Traceback" not in done.stderr + done.stdout
    assert sorted(p.name for p in (canvas.root / "submitted").iterdir()) == ["1002", "1003", "48213", "48214", "48230"]


def test_a_moodle_course_from_class_list_to_grade_import(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    (tmp_path / "participants.csv").write_text(MOODLE_EXPORT, encoding="utf-8")
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET, encoding="utf-8")
    assert "2 student(s) added" in command("tvm-course", "roster", str(tmp_path / "participants.csv"), "--from", "moodle",
                                           "--course", str(root)).stdout
    release_assignment(root, "tiling", students=[])  # `nbgrader generate_assignment tiling`, as the Canvas course ran it
    # Dev types his email as the LMS shows it, in its case: his notebook finds his variant
    found, variant = student_variant("Dev.Devlin@Uni.Example", root / "release" / "tiling" / TABLE_FILE, environ={})
    assert found == "dev.devlin@uni.example" and variant == variant_for(found, course_secret(root))
    download = write_zip(tmp_path / "moodle.zip", {
        "Dev Devlin_7001_assignsubmission_file_/tiling.ipynb": submission(root, "dev"),
        "Dev Devlin_7001_assignsubmission_onlinetext_/onlinetext.html": "<p>hi</p>",
        zipfile.ZipInfo("Eve Evans_7002_assignsubmission_file_/tiling.ipynb", (2026, 3, 1, 9, 0, 0)): submission(root, "cleo"),
        zipfile.ZipInfo("Eve Evans_7002_assignsubmission_file_/Tiling (1).ipynb", (2026, 3, 2, 9, 0, 0)): submission(root, "eli"),
    })
    without = command("tvm-course", "collect", "tiling", str(download), "--from", "moodle", "--course", str(root), check=False)
    assert without.returncode == 2 and "--worksheet" in without.stderr
    collected = command("tvm-course", "collect", "tiling", str(download), "--from", "moodle", "--worksheet",
                        str(tmp_path / "worksheet.csv"), "--course", str(root))
    assert "dev.devlin@uni.example: tiling.ipynb" in collected.stdout and "eve@uni.example: tiling.ipynb" in collected.stdout
    assert "Eve Evans_7002_assignsubmission_file_/tiling.ipynb: an older upload of tiling.ipynb" in collected.stderr
    assert command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS).returncode == 0
    exported = command("tvm-course", "export", "tiling", "--format", "moodle", "--column", "Tiling", "-o",
                       str(tmp_path / "to-moodle.csv"), "--course", str(root))
    assert "set the LMS assignment's maximum points to 14 (Moodle's default is 100" in exported.stdout
    dev, eve = read_csv(tmp_path / "to-moodle.csv")
    assert list(dev) == ["Email address", "First name", "Last name", "Tiling", "Status"]
    assert dev["Email address"] == "Dev.Devlin@uni.example" and dev["Tiling"] == "4" and dev["Status"] == "points lost"
    assert eve["Email address"] == "eve@uni.example" and eve["Tiling"] == "4"  # the newer upload's (eli's), not cleo's 6


def test_a_student_not_on_the_roster_is_refused_with_a_command_that_collects_them(tmp_path):
    """Issue 36: the refusal's hint is a command that works, for nbgrader's zip_collect (which has no
    --enrol) and for tvm-course collect: each hint is run here as printed."""
    root = copy_course(COURSE, tmp_path / "course")
    (tmp_path / "canvas-grades.csv").write_text(CANVAS_EXPORT, encoding="utf-8")
    command("tvm-course", "roster", str(tmp_path / "canvas-grades.csv"), "--from", "canvas", "--course", str(root))
    command("nbgrader", "generate_assignment", "tiling", cwd=root)
    download = write_zip(tmp_path / "download.zip", {"lovelaceada_48213_900001_tiling.ipynb": submission(root, "ada"),
                                                     "strangersam_9999_900007_tiling.ipynb": submission(root, "ben")})
    stranger = root / "submitted" / "9999" / "tiling" / "tiling.ipynb"
    # nbgrader's own command, reading downloaded/tiling/archive/ with the course's plugins
    archive = root / "downloaded" / "tiling" / "archive"
    archive.mkdir(parents=True)
    shutil.copyfile(download, archive / "download.zip")
    done = command("nbgrader", "zip_collect", "tiling", cwd=root)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "9999 is not on the course's roster: not collected" in log and not stranger.exists()
    hint = re.search(r"9999 is not on the course's roster: not collected; .*run: (.+)$", log, re.M).group(1)
    assert "--enrol " not in hint + " "  # zip_collect has no such flag
    again = command(*shlex.split(hint), cwd=root)
    assert again.returncode == 0, again.stdout + again.stderr
    assert stranger.is_file() and (root / "submitted" / "48213" / "tiling" / "tiling.ipynb").is_file()
    # the course's own command: the stranger is still not in the gradebook, and its hint enrols them
    stranger.unlink()
    refused = command("tvm-course", "collect", "tiling", str(download), "--from", "canvas", "--course", str(root))
    assert refused.returncode == 1 and not stranger.exists()
    hint = re.search(r"not on the roster, not collected: 9999; .*run: (.+)$", refused.stderr, re.M).group(1)
    enrolled = command(*shlex.split(hint), cwd=tmp_path)
    assert enrolled.returncode == 0, enrolled.stdout + enrolled.stderr
    assert "enrolled now (--enrol; not in the gradebook before): 9999" in enrolled.stdout and stranger.is_file()
