"""`tvm-course collect ASSIGNMENT --from canvas|moodle ZIP`: an LMS download into submitted/.

    read the zip as untrusted input and decide, entry by entry, what is collected and for whom
    (download.plan_download; nothing found is an error that says what was looked for)
    ─► put the zip in downloaded/ASSIGNMENT/archive/ (what was there moves to previous/)
    ─► keep a copy of each submission it replaces (downloaded/ASSIGNMENT/replaced/WHEN/)
    ─► nbgrader's own `nbgrader zip_collect ASSIGNMENT --force`, with the course's plugins
       (lms/nbgrader_collector.py), which extracts and collects the same entries
    ─► check that submitted/STUDENT/ASSIGNMENT/ holds exactly what the plan accepted

nbgrader writes no timestamp.txt: neither LMS puts a submission time in its download (Canvas
marks late ones LATE in the name; the report lists them). Everything is written owner-only.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..course.course_dir import CourseError, course_directory, find_course_root, load_course_config
from .download import CANVAS_NAMED_REGEXP, DownloadError, DownloadPlan, plan_download, read_worksheet, roster_from_gradebook

NBGRADER_TIMEOUT_S = 600


class NothingCollected(CourseError):
    """The download held nothing to collect; the message says what was looked for."""


@dataclass
class CollectReport:
    assignment: str
    lms: str
    archive: Path  # the copy in downloaded/ASSIGNMENT/archive/
    plan: DownloadPlan
    replaced: list[str] = field(default_factory=list)  # students whose earlier submission this one replaced
    backup: Path | None = None  # where the replaced submissions were kept
    nbgrader_log: str = ""
    unenrolled: list[str] = field(default_factory=list)  # collected with enrol, not in the gradebook before: enrolled now
    tables: list[Path] = field(default_factory=list)  # released variants tables rewritten for them


def collect_download(assignment: str, lms: str, archive: str | Path, *, course: str | Path | None = None,
                     worksheet: str | Path | None = None, enrol: bool = False) -> CollectReport:
    previous = os.umask(0o077)
    try:
        return _collect(assignment, lms, Path(archive), course, Path(worksheet) if worksheet else None, enrol)
    finally:
        os.umask(previous)


def _collect(assignment: str, lms: str, archive: Path, course, worksheet: Path | None, enrol: bool) -> CollectReport:
    root = find_course_root(course)
    config = load_course_config(root)
    coursedir = course_directory(config)
    release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
    notebooks = sorted(p.name for p in release.glob("*.ipynb"))
    if not notebooks:
        raise CourseError(f"{assignment!r} has no released notebook in {release}: release it first "
                          f"(`nbgrader generate_assignment {assignment}` in {root})")
    if worksheet is not None and lms != "moodle":
        raise CourseError("--worksheet is for Moodle downloads (a Canvas download names each student's user id itself)")
    try:
        sheet = read_worksheet(worksheet) if worksheet is not None else None
        pattern = config.FileNameCollectorPlugin.get("named_regexp") or CANVAS_NAMED_REGEXP
        again = ["tvm-course", "collect", assignment, str(archive.resolve()), "--from", lms, "--course", str(root), "--enrol"]
        plan = plan_download(archive, lms, assignment, notebooks, worksheet=sheet, roster=roster_from_gradebook(coursedir),
                             canvas_regexp=pattern, enrol=enrol,
                             enrol_command=shlex.join(again + (["--worksheet", str(worksheet.resolve())] if worksheet else [])))
    except DownloadError as error:
        raise CourseError(str(error)) from None
    if not plan.accepted:
        refused = "; ".join(f"{r.entry}: {r.reason}" for r in plan.refused[:5])
        if plan.strangers or plan.test_students:
            refused = f"not on the roster: {', '.join(plan.strangers[:20]) or 'none'}; " + refused
        more = f" (and {len(plan.refused) - 5} more)" if len(plan.refused) > 5 else ""
        raise NothingCollected(
            f"found no submission of {assignment} in {archive}: looked for {plan.looked_for()}"
            + (f"; refused {len(plan.refused)} entr{'y' if len(plan.refused) == 1 else 'ies'}: {refused}{more}" if plan.refused
               else "; the archive holds no file at all" if not plan.ignored else "; it holds only folders and OS metadata")
        )

    downloaded = root / str(config.ZipCollectApp.get("downloaded_directory", "downloaded")) / assignment
    when = datetime.now().strftime("%Y%m%d-%H%M%S")
    placed = _place_archive(archive, downloaded, lms, when)
    report = CollectReport(assignment, lms, placed, plan)
    report.replaced, report.backup = _keep_replaced(coursedir, assignment, plan, downloaded / "replaced" / when)
    command = [sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--force", f"--LMSDownload.lms={lms}",
               f"--LMSDownload.enrol={enrol}"]
    if worksheet is not None:
        command.append(f"--LMSDownload.worksheet={worksheet.resolve()}")
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=NBGRADER_TIMEOUT_S,
                              env={**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])})
    except subprocess.TimeoutExpired:
        raise CourseError(f"nbgrader zip_collect did not finish in {NBGRADER_TIMEOUT_S} s") from None
    report.nbgrader_log = (done.stdout + done.stderr)[-6000:]
    if done.returncode != 0:
        raise CourseError(f"nbgrader zip_collect failed (exit status {done.returncode}):\n{report.nbgrader_log[-3000:]}")
    wrong = _check_collected(coursedir, assignment, plan)
    if wrong:
        raise CourseError("nbgrader zip_collect did not collect what the download holds: " + "; ".join(wrong)
                          + f"\nits log:\n{report.nbgrader_log[-3000:]}")
    report.unenrolled = _record_identities(coursedir, plan, sheet)
    if report.unenrolled:  # late joiners: their variants go into the tables already released
        from .roster import refresh_variant_tables

        report.tables = refresh_variant_tables(coursedir)
    return report


def _record_identities(coursedir, plan: DownloadPlan, sheet) -> list[str]:
    """Keep each collected student's LMS identity in the gradebook (for `tvm-course export`):
    Canvas's user id as lms_user_id, Moodle's email; nothing already set is overwritten.
    Returns the students who were not in the gradebook (not enrolled when it was released)."""
    import warnings

    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    unenrolled = []
    with warnings.catch_warnings(), Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        warnings.simplefilter("ignore", SAWarning)
        for accepted in {a.student: a for a in plan.accepted}.values():
            try:
                student = gradebook.find_student(accepted.student)
            except MissingEntry:
                unenrolled.append(accepted.student)
                student = gradebook.update_or_create_student(accepted.student)
            if plan.lms == "canvas" and not student.lms_user_id:
                student.lms_user_id = accepted.lms_id
            elif plan.lms == "moodle" and sheet and accepted.lms_id in sheet:
                entry = sheet[accepted.lms_id]
                if not student.email and "@" in entry.identity:
                    student.email = entry.identity
                if not (student.first_name or student.last_name) and entry.full_name:
                    student.first_name, student.last_name = _split_name(entry.full_name)
        gradebook.db.commit()
    return sorted(unenrolled)


def _split_name(full_name: str) -> tuple[str, str]:
    first, _, last = full_name.strip().rpartition(" ")
    return (first, last) if first else (last, "")


def _place_archive(archive: Path, downloaded: Path, lms: str, when: str) -> Path:
    """downloaded/ASSIGNMENT/archive/ holds this download alone (nbgrader reads every zip there)."""
    folder = downloaded / "archive"
    folder.mkdir(parents=True, exist_ok=True)
    earlier = [p for p in folder.iterdir()]
    if earlier:
        kept = downloaded / "previous" / when
        kept.mkdir(parents=True, exist_ok=True)
        for path in earlier:
            shutil.move(str(path), kept / path.name)
    target = folder / f"{lms}-{when}.zip"
    shutil.copyfile(archive, target)
    return target


def _keep_replaced(coursedir, assignment: str, plan: DownloadPlan, backup: Path) -> tuple[list[str], Path | None]:
    """Keep a copy of each submission this download changes (the same download collected again changes nothing)."""
    replaced = []
    for student in plan.students:
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
        same = all((submitted / a.notebook).is_file() and hashlib.sha256((submitted / a.notebook).read_bytes()).hexdigest() == a.sha256
                   for a in plan.accepted if a.student == student)
        if submitted.is_dir() and any(submitted.iterdir()) and not same:
            shutil.copytree(submitted, backup / student / assignment)
            replaced.append(student)
    return replaced, (backup if replaced else None)


def _check_collected(coursedir, assignment: str, plan: DownloadPlan) -> list[str]:
    wrong = []
    for accepted in plan.accepted:
        path = Path(coursedir.format_path(coursedir.submitted_directory, accepted.student, assignment)) / accepted.notebook
        if not path.is_file():
            wrong.append(f"{accepted.student}'s {accepted.notebook} is missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != accepted.sha256:
            wrong.append(f"{accepted.student}'s {accepted.notebook} differs from the download's")
    return wrong
