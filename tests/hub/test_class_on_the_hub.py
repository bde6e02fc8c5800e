"""The class on a real JupyterHub, in a real browser: two students log in, fetch `tiling`, see
their own variant, run the self-check and submit (one of them twice, both at once); the
instructor collects in the Formgrader, runs `tvm-course grade tiling` in a terminal on the hub
and releases feedback; a student fetches it and sees their grade. And what goes wrong on a hub:
a kernel killed mid-self-check, a file larger than the exchange takes, a student reading or
forging a classmate's exchange files, the Formgrader behind the hub's prefix, Release Feedback
pressed before grading has finished (issue 36, item 1: refused in the Formgrader's dialog, which
names each student and what to run, and nothing released). What the Formgrader and JupyterLab
show a class (issue 36, item 6): the roster's names, feedback that names each test cell, no
Jupyter news pop-up for a new user. And the cost-model assignment (issue 44): one student fetches
it, runs its self-check in her kernel on the hub, submits; the instructor collects and runs
`tvm-course grade cost-model` in a terminal.

The tests share one hub and run in order: each takes up the class where the last left it.
"""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from autograder.rehearsal.samples import load_samples
from autograder.rehearsal.scratch_course import BUNDLED_COURSE
from autograder.hub.classroom import COURSE_FOLDER, COURSE_ID, MAX_FILE_KB
from autograder.problems.variants import course_secret, variant_for

from . import jupyter_pages as jp
from .conftest import INSTRUCTOR, STUDENTS, timed

pytestmark = pytest.mark.slow

ADA, BEN = STUDENTS
SAMPLES = {s.student: s for s in load_samples(BUNDLED_COURSE, "tiling")}
SCHEDULE_CELL, SELF_CHECK_CELL, ARITHMETIC_CELL = 5, 7, 12


@pytest.fixture(scope="module")
def pages(hub, browser):
    """Each account's browser, logged in once; JupyterLab set to render every cell (it renders only
    those in view by default) and the terminal to keep its text in the page (screen-reader mode)."""
    for account in hub.accounts:
        settings = account.home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab"
        for plugin, values in (("notebook-extension/tracker", {"windowingMode": "none"}),
                               ("terminal-extension/plugin", {"screenReaderMode": True})):
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        subprocess.run(["chown", "-R", f"{account.name}:", str(account.home / ".jupyter")], check=True)
    opened = {}
    try:
        for account in hub.accounts:
            began = time.monotonic()
            opened[account.name] = jp.log_in(browser, hub, account.name)
            timed("log in and spawn the user's server until JupyterLab shows", time.monotonic() - began)
        yield opened
    finally:
        for page in opened.values():
            page.context.close()


def course_root(hub) -> Path:
    return hub.account(INSTRUCTOR).home / COURSE_FOLDER


def inbound(hub) -> Path:
    return hub.settings.exchange / COURSE_ID / "inbound"


def as_user(hub, name: str, code: str) -> subprocess.CompletedProcess:
    account = hub.account(name)
    return subprocess.run(["python3", "-c", code], user=account.uid, group=account.gid, extra_groups=[],
                          env={"HOME": str(account.home), "PATH": "/usr/bin:/bin"}, cwd="/",
                          capture_output=True, text=True, timeout=60)


def what_user_may_list(hub, name: str, folders: dict[str, Path]) -> dict[str, str]:
    probe = as_user(hub, name, f"""
import json, os
tried = {{}}
for what, path in {json.dumps({k: str(v) for k, v in folders.items()})}.items():
    try:
        os.listdir(path); tried[what] = "allowed"
    except PermissionError:
        tried[what] = "denied"
print(json.dumps(tried))
""")
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


def test_the_hub_prints_its_address_and_one_line_per_account_and_refuses_a_wrong_password(hub, browser):
    lines = hub.banner().splitlines()
    assert lines[0] == hub.url and hub.url.startswith("http://127.0.0.1:")
    assert lines[1:] == [f"student: {ADA} password: {hub.account(ADA).password}",
                         f"student: {BEN} password: {hub.account(BEN).password}",
                         f"instructor: {INSTRUCTOR} password: {hub.account(INSTRUCTOR).password}"]
    context = browser.new_context()
    page = context.new_page()
    page.goto(hub.url + "hub/login")
    page.fill("#username_input", ADA)
    page.fill("#password_input", hub.account(BEN).password)
    page.click("#login_submit")
    # The refusal comes after PAM's failure delay: wait for the page that says it, not the one loading.
    page.get_by_text("Invalid username or password").wait_for(timeout=30_000)
    assert "Invalid username or password" in page.locator("body").inner_text()
    context.close()


def test_each_student_fetches_tiling_and_sees_their_own_variant(hub, pages):
    secret = course_secret(course_root(hub))
    shown = {}
    for name in STUDENTS:
        page = pages[name]
        panel = jp.assignments(page)
        released = panel.locator("#released_assignments_list").first
        jp.wait_text(released, "tiling")
        assert "cost-model" in released.inner_text()  # the hub releases both
        began = time.monotonic()
        jp.assignment_row(released, "tiling").get_by_role("button", name="Fetch").click()
        jp.wait_text(jp.downloaded(panel), "Submit")
        timed("fetch (click to listed)", time.monotonic() - began)
        assert (hub.account(name).home / "tiling" / "tiling.ipynb").stat().st_uid == hub.account(name).uid
        jp.open_notebook(page, hub, name, "tiling/tiling.ipynb")
        jp.run_cell(page, 1)
        shown[name] = jp.output(page, 1, "Student")
        assert f"Student {name}: {variant_for(name, secret).describe()}." in shown[name]
    assert variant_for(ADA, secret) != variant_for(BEN, secret) and shown[ADA] != shown[BEN]


def test_no_one_is_greeted_by_jupyters_news(hub, pages):
    """JupyterLab asks every new user, in a toast on their first page, whether to fetch Jupyter's
    news (issue 36, item 6); on the hub nobody is asked. The pages have been open since log-in,
    long after the announcements plugin would have asked (a second or two)."""
    for name, page in pages.items():
        toasts = page.locator(".Toastify")
        assert toasts.filter(has_text="Jupyter news").count() == 0, (name, toasts.all_inner_texts())
        assert "Jupyter news" not in page.locator("body").inner_text(), name
        disabled = json.loads(page.locator("#jupyter-config-data").text_content())["disabledExtensions"]
        assert "@jupyterlab/apputils-extension:announcements" in disabled, (name, disabled)


def test_the_self_check_in_the_students_kernel_gives_the_verdict(hub, pages):
    for name, sample in ((ADA, SAMPLES["ada"]), (BEN, SAMPLES["ben"])):
        page = pages[name]
        jp.set_cell(page, SCHEDULE_CELL, sample.answers["schedule"])
        jp.set_cell(page, ARITHMETIC_CELL, sample.answers["tile-arithmetic"])
        jp.run_cell(page, SCHEDULE_CELL)
        began = time.monotonic()
        jp.run_cell(page, SELF_CHECK_CELL)
        report = jp.output(page, SELF_CHECK_CELL, "score")
        timed("self-check (run to report)", time.monotonic() - began)
        assert "PASSED — tile-fused-conv (cpu)" in report, report
        assert f"the variant of {name}" in report and "correctness" in report and "fusion" in report
        jp.save(page)


def test_a_kernel_killed_mid_self_check_restarts_and_leaves_no_grading_behind(hub, pages):
    page, account = pages[BEN], hub.account(BEN)
    kernels = [p for p in psutil.process_iter(["uids", "cmdline"])
               if p.info["uids"].real == account.uid and "ipykernel_launcher" in " ".join(p.info["cmdline"] or [])]
    assert len(kernels) == 1, kernels
    kernel = kernels[0]
    jp.run_cell(page, SELF_CHECK_CELL)
    deadline = time.monotonic() + 120
    while not kernel.children(recursive=True) and time.monotonic() < deadline:  # the grading has started
        time.sleep(0.2)
    grading = kernel.children(recursive=True)
    assert grading, "the self-check started no grading process"
    os.kill(kernel.pid, signal.SIGKILL)
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=60_000)
    assert "Kernel Restarting" in dialog.inner_text() or "died" in dialog.inner_text(), dialog.inner_text()
    dialog.get_by_role("button").last.click()
    _, alive = psutil.wait_procs(grading, timeout=30)
    assert not alive, f"grading processes outlived their kernel: {alive}"
    jp.run_cell(page, 1)
    assert f"Student {BEN}:" in jp.output(page, 1, "Student")  # a fresh kernel, the same variant


def test_two_students_submit_at_once_and_one_submits_twice_with_an_oversize_file(hub, pages):
    panels = {name: jp.assignments(pages[name]) for name in STUDENTS}
    began = time.monotonic()
    for name in STUDENTS:  # both clicks before either waits
        jp.assignment_row(jp.downloaded(panels[name]), "tiling").get_by_role("button", name="Submit").click()
    for name in STUDENTS:
        jp.wait_text(panels[name].locator("#submitted_assignments_list").first, "UTC")
    timed("submit, two students at once (clicks to both listed)", time.monotonic() - began)
    first = {name: sorted(p.name for p in inbound(hub).glob(f"{name}+tiling+*")) for name in STUDENTS}
    assert all(len(found) == 1 for found in first.values()), first

    ben = hub.account(BEN)
    big = ben.home / "tiling" / "big-data.bin"
    with open(big, "wb") as handle:
        handle.truncate((MAX_FILE_KB + 1) * 1024)
    os.chown(big, ben.uid, ben.gid)
    page = pages[BEN]
    jp.open_notebook(page, hub, BEN, "tiling/tiling.ipynb")
    jp.set_cell(page, SCHEDULE_CELL, "# second try\n" + SAMPLES["ben"].answers["schedule"])
    jp.save(page)
    panel = jp.assignments(page)
    began = time.monotonic()
    jp.assignment_row(jp.downloaded(panel), "tiling").get_by_role("button", name="Submit").click()
    submitted = panel.locator("#submitted_assignments_list").first
    deadline = time.monotonic() + 120
    while submitted.inner_text().count("UTC") < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    timed("submit (click to listed)", time.monotonic() - began)
    assert submitted.inner_text().count("UTC") == 2, submitted.inner_text()
    second = sorted(set(p.name for p in inbound(hub).glob(f"{BEN}+tiling+*")) - set(first[BEN]))
    assert len(second) == 1, second
    handed_in = inbound(hub) / second[0]
    assert (handed_in / "tiling.ipynb").is_file() and not (handed_in / "big-data.bin").exists()


def test_a_student_can_neither_read_nor_forge_a_classmates_exchange_files(hub):
    course = hub.settings.exchange / COURSE_ID
    ada_submission = next(inbound(hub).glob(f"{ADA}+tiling+*"))
    assert what_user_may_list(hub, BEN, {"inbound": course / "inbound", "ada's home": hub.account(ADA).home,
                                         "the course root": course_root(hub), "outbound": course / "outbound"}) == \
        {"inbound": "denied", "ada's home": "denied", "the course root": "denied", "outbound": "allowed"}
    # nbgrader's inbound is writable by every student: ben hands in a folder named as ada's, newer than hers.
    forged = inbound(hub) / f"{ADA}+tiling+2099-01-01 00:00:00.000000 UTC+forged"
    made = as_user(hub, BEN, f"""
import os, shutil
os.mkdir({str(forged)!r})
shutil.copy({str(hub.account(BEN).home / 'tiling' / 'tiling.ipynb')!r}, {str(forged / 'tiling.ipynb')!r})
open({str(forged / 'timestamp.txt')!r}, 'w').write('2099-01-01 00:00:00.000000 UTC')
""")
    assert made.returncode == 0, made.stderr
    assert ada_submission.is_dir()


def test_the_instructor_collects_in_the_formgrader_in_jupyterlab(hub, pages):
    page = pages[INSTRUCTOR]
    jp.menu(page, "Nbgrader", "Formgrader")
    grader = page.frame_locator("iframe[src*='formgrader']")
    row = grader.locator("tr", has_text="tiling").filter(has_not_text="gpu-tiling")
    row.locator("td.collect a").click()
    modal = grader.locator(".modal-dialog")
    text = jp.wait_text(modal, "Successfully collected")
    assert f"Collecting submission: {ADA} tiling" in text and f"Collecting submission: {BEN} tiling" in text, text
    assert "forged" in text and "not collected" in text, text  # the forgery is named in the log, and left
    collected = course_root(hub) / "submitted"
    assert "second try" in (collected / BEN / "tiling" / "tiling.ipynb").read_text()  # the later of ben's two
    ada_collected = (collected / ADA / "tiling" / "tiling.ipynb").read_text()
    assert ada_collected == (hub.account(ADA).home / "tiling" / "tiling.ipynb").read_text()  # hers, not ben's forgery
    modal.get_by_role("button", name="OK").click()
    formgrader_requests = [r for r in page.bad_responses if "formgrader" in r or "/api/" in r]
    assert not formgrader_requests, formgrader_requests  # every call the Formgrader made went through the prefix


def released_feedback(hub) -> list[str]:
    folder = hub.settings.exchange / COURSE_ID / "feedback"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def formgrader_assignments(page):
    """The Formgrader's Manage Assignments (in JupyterLab's iframe) and its row for tiling."""
    jp.menu(page, "Nbgrader", "Formgrader")
    grader = page.frame_locator("iframe[src*='formgrader']")
    grader.locator("a", has_text="Manage Assignments").first.click()
    row = grader.locator("tr", has_text="tiling").filter(has_not_text="gpu-tiling")
    jp.wait_text(row.locator("td.num-submissions"), "2")
    return grader, row


def test_release_feedback_before_grading_is_refused_in_the_formgrader_and_says_why(hub, pages):
    """Issue 36, item 1: Release Feedback pressed with both submissions collected and none graded.
    The Formgrader's error dialog shows the refusal: each student, why, and the command to run;
    nothing reaches the exchange, so the students have nothing to fetch."""
    from playwright.sync_api import expect

    page = pages[INSTRUCTOR]
    grader, row = formgrader_assignments(page)
    row.locator("td.release-feedback a").click()
    modal = grader.locator(".modal-dialog")
    shown = jp.wait_text(modal, "Nothing released", timeout=120_000)
    log_panel = grader.locator(".modal.in .modal-dialog .panel-warning")  # .in: Bootstrap's fade-in has begun
    expect(log_panel).to_be_in_viewport()  # in the Formgrader's frame, without scrolling down
    assert modal.locator(".modal-title").inner_text() == "Error", shown
    assert "There was an error releasing feedback of 'tiling'" in shown, shown
    log = log_panel.locator("pre")  # the Formgrader's "Log Output" box
    lines = [line.strip() for line in log.inner_text().splitlines()]
    assert lines[0] == "[CRITICAL] Nothing released: feedback on tiling unfinished for 2 student(s):", lines
    for name in STUDENTS:  # each student, why, and the command whole on a line of its own
        at = lines.index(f"{name}: not graded yet (or its last grading failed)")
        assert lines[at + 1] == f"tvm-course grade tiling --student {name}", lines
    assert "Grade first (tvm-course grade tiling writes the feedback), then release again." in " ".join(lines), lines
    # The box cuts lines wider than itself (a reader would have to scroll it sideways): none is.
    wide, box = log.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert wide <= box, f"the Log Output box is {box} px wide and its text {wide} px: {lines}"
    assert released_feedback(hub) == []
    modal.get_by_role("button", name="OK").click()
    modal.wait_for(state="detached")


def test_the_instructor_grades_in_a_terminal_on_the_hub_and_releases_feedback(hub, pages):
    from playwright.sync_api import expect

    page = pages[INSTRUCTOR]
    screen = jp.open_terminal(page)
    began = time.monotonic()
    shown = jp.run_in_terminal(page, screen, f"cd ~/{COURSE_FOLDER} && tvm-course grade tiling --workers 1")
    timed("tvm-course grade tiling in the terminal (2 students)", time.monotonic() - began)
    assert f"COMMAND-EXIT 0 {INSTRUCTOR}" in shown, shown[-3000:]
    with open(course_root(hub) / "tiling-grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(rows[ADA]["correctness"]) == 4 and float(rows[BEN]["correctness"]) == 4, rows

    grader, row = formgrader_assignments(page)
    row.locator("td.release-feedback a").click()
    modal = grader.locator(".modal-dialog")
    shown = jp.wait_text(modal, "Released feedback on tiling")
    expect(grader.locator(".modal.in .modal-dialog .panel-warning")).to_be_in_viewport()
    assert modal.locator(".modal-title").inner_text() == "Success", shown
    assert f"Released feedback on tiling to 2 student(s): {ADA}, {BEN}" in shown, shown
    assert len(released_feedback(hub)) == 2
    modal.get_by_role("button", name="OK").click()
    modal.wait_for(state="detached")


def test_the_formgrader_lists_the_class_by_their_roster_names(hub, pages):
    """Issue 36, item 6: the Formgrader's students and submissions carry the names the roster
    enrolled (nbgrader shows a student without them as 'None, None')."""
    read = as_user(hub, INSTRUCTOR, f"""
import json, sqlite3
db = sqlite3.connect({'file:' + str(course_root(hub) / 'gradebook.db') + '?mode=ro'!r}, uri=True)
print(json.dumps({{i: f"{{last}}, {{first}}" for i, first, last in db.execute("select id, first_name, last_name from student")}}))
""")  # as the instructor: the gradebook is theirs, and nothing of root's is left beside it
    assert read.returncode == 0, read.stderr
    names = {name: json.loads(read.stdout)[name] for name in STUDENTS}
    assert all("None" not in shown for shown in names.values()), names
    page = pages[INSTRUCTOR]
    grader, row = formgrader_assignments(page)
    row.locator("td.num-submissions a").click()  # Manage Submissions of tiling
    for name in STUDENTS:
        submission = grader.locator("tr", has=grader.locator("td.student-id", has_text=name))
        assert jp.wait_text(submission.locator("td.student-name"), names[name]).strip() == names[name]
    assert "None, None" not in grader.locator("body").inner_text()
    grader.locator("a", has_text="Manage Students").first.click()
    for name in STUDENTS:
        student = grader.locator("tr", has=grader.locator("td.id", has_text=name))
        assert jp.wait_text(student.locator("td.name"), names[name]).strip() == names[name]
    assert "None, None" not in grader.locator("body").inner_text()


def test_a_student_fetches_feedback_and_sees_their_grade(hub, pages):
    page = pages[ADA]
    panel = jp.assignments(page)
    submitted = panel.locator("#submitted_assignments_list").first
    submitted.get_by_role("button", name="Fetch Feedback").click()
    home = hub.account(ADA).home
    deadline = time.monotonic() + 120
    while not (feedback := sorted((home / "tiling" / "feedback").glob("*/tiling.html"))) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(feedback) == 1, feedback
    with open(course_root(hub) / "tiling-grades.csv", newline="", encoding="utf-8") as handle:
        row = {r["student"]: r for r in csv.DictReader(handle)}[ADA]
    page.goto(f"{hub.url}user/{ADA}/files/{feedback[0].relative_to(home)}")
    heading = page.locator("h4", has_text="Score:").first.inner_text()
    found = re.search(r"tiling \(Score: ([\d.]+) / ([\d.]+)", heading)
    assert found, heading
    assert (float(found[1]), float(found[2])) == (float(row["score"]), float(row["max_score"])), (heading, row)
    assert float(found[1]) > 0
    # Issue 36, item 6: the page's contents name each test cell (nbgrader's template says "Test cell")
    contents = page.locator("#toc li", has_text="— test cell").all_inner_texts()
    assert [entry.split(" — ")[0] for entry in contents] == ["correctness", "fusion", "speed", "tile-arithmetic-marks"], contents
    assert "Test cell" not in page.locator("body").inner_text()
    feedback_public = hub.settings.exchange / COURSE_ID / "feedback"
    assert what_user_may_list(hub, BEN, {"feedback": feedback_public}) == {"feedback": "denied"}


COST_MODEL = "cost-model"
COST_MODEL_SAMPLES = {s.student: s for s in load_samples(BUNDLED_COURSE, COST_MODEL)}
COST_MODEL_SETUP_CELL, COST_MODEL_ANSWER_CELL, COST_MODEL_SELF_CHECK_CELL = 1, 5, 7
# The notebook's own quick check, which its text offers beside the self-check cell: the same
# measurement in the student's kernel and the same sandbox and metrics, on the tiny table.
TINY_SELF_CHECK = 'check = self_check(features, Model, grid="tiny")\ncheck'


def test_a_student_checks_and_submits_a_cost_model_and_the_instructor_grades_it_on_the_hub(hub, pages):
    """Issue 44: the cost-model assignment goes where tiling goes. ada fetches it, writes the
    instructor's model (the sample's answer) and runs the notebook's self-check in her kernel on
    the hub, which measures a candidate table there and grades her cell in the learner sandbox;
    she submits; the instructor collects and runs `tvm-course grade cost-model` in a terminal,
    and her row has both autograded parts.

    Both sides use the tiny table (24 candidates, measured in seconds): the student the quick check
    the notebook offers beside its self-check cell, the class run the course's setting, as
    tests/course's term test does. The cell as released measures 320 candidates: 97 s on the hub
    at load 7 to 9 on two cores, and the grader's own first table as long again; the real table is
    tests/costmodel's. Here it is the path through the hub: the real kernel, measurement, sandbox
    and class run."""
    page, home = pages[ADA], hub.account(ADA).home
    page.goto(f"{hub.url}user/{ADA}/lab")
    jp.wait_for_lab(page)
    panel = jp.assignments(page)
    began = time.monotonic()
    jp.assignment_row(panel.locator("#released_assignments_list").first, COST_MODEL).get_by_role("button", name="Fetch").click()
    jp.wait_text(jp.assignment_row(jp.downloaded(panel), COST_MODEL), "Submit")
    timed("fetch cost-model (click to listed)", time.monotonic() - began)
    assert (home / COST_MODEL / f"{COST_MODEL}.ipynb").stat().st_uid == hub.account(ADA).uid

    jp.open_notebook(page, hub, ADA, f"{COST_MODEL}/{COST_MODEL}.ipynb")
    jp.run_cell(page, COST_MODEL_SETUP_CELL)
    assert f"Student {ADA}" in jp.output(page, COST_MODEL_SETUP_CELL, "Your workload: ")
    jp.set_cell(page, COST_MODEL_ANSWER_CELL, COST_MODEL_SAMPLES["ada"].answers["cost-model"])
    jp.run_cell(page, COST_MODEL_ANSWER_CELL)
    released_cells = jp.cells(page).count()
    jp.select_cell(page, COST_MODEL_SELF_CHECK_CELL)  # the student's own check goes in a new cell below it
    page.keyboard.press("b")
    jp.cells(page).nth(released_cells).wait_for()
    tiny_check = COST_MODEL_SELF_CHECK_CELL + 1
    jp.set_cell(page, tiny_check, TINY_SELF_CHECK)
    began = time.monotonic()
    jp.run_cell(page, tiny_check)
    report = jp.output(page, tiny_check, "The class run scores each part")
    timed("cost-model self-check, tiny table (run to report)", time.monotonic() - began)
    assert "ranking:" in report and "search:" in report and "pairwise accuracy" in report, report
    assert "the baseline" in report, report
    jp.save(page)

    panel = jp.assignments(page)
    jp.assignment_row(jp.downloaded(panel), COST_MODEL).get_by_role("button", name="Submit").click()
    jp.wait_text(jp.assignment_row(panel.locator("#submitted_assignments_list").first, COST_MODEL), "UTC")
    assert len(list(inbound(hub).glob(f"{ADA}+{COST_MODEL}+*"))) == 1

    root = course_root(hub)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:  # stays the instructor's file
        config.write('\nc.TrustedGrader.cost_model_grid = "tiny"  # the hub test\'s: 24 candidates\n')
    instructor = pages[INSTRUCTOR]
    screen = jp.open_terminal(instructor)
    began = time.monotonic()
    shown = jp.run_in_terminal(instructor, screen, f"cd ~/{COURSE_FOLDER} && nbgrader collect {COST_MODEL} "
                                                   f"&& tvm-course grade {COST_MODEL} --workers 1")
    timed("collect and tvm-course grade cost-model in the terminal (1 student)", time.monotonic() - began)
    assert f"COMMAND-EXIT 0 {INSTRUCTOR}" in shown, shown[-3000:]
    # A line wider than the terminal goes on in its next row: the rows are read joined. The run's
    # table says how each part went (the search pending where the tiny table cannot tell the
    # instructor's model from random: a grader fault, never a zero).
    joined = shown.replace("\n", "")
    assert f"Collecting submission: {ADA} {COST_MODEL}" in joined, shown[-3000:]
    assert re.search(r"ranking 100% / search (100%|pending)", joined), shown[-3000:]
    with open(root / f"{COST_MODEL}-grades.csv", newline="", encoding="utf-8") as handle:
        row = {r["student"]: r for r in csv.DictReader(handle)}[ADA]
    assert float(row["ranking"]) == 4.0, row
    if row["search"] == "":
        assert "no better than random" in (root / f"{COST_MODEL}-grader-faults.log").read_text(), row
    else:
        assert float(row["search"]) == 4.0, row


def test_the_hub_stops_cleanly(hub, pages):
    for page in pages.values():
        page.context.close()
    pages.clear()
    hub.stop()
    assert hub.process.returncode is not None
    assert hub.leftovers() == []
    with pytest.raises(OSError):
        import urllib.request
        urllib.request.urlopen(hub.url + "hub/api/", timeout=5)
