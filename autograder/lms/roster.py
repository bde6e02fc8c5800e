"""`tvm-course roster --from canvas|moodle FILE`: the class, from the LMS's own export, into the gradebook.

Students must be in nbgrader's gradebook before an assignment is released: the release lists
each enrolled student's variant (problems/variants.py), derived from their student id. The
student id is the one the LMS's download names, so a collected submission lands on the same
student:

- canvas: the gradebook export (Grades > Export > CSV), whose columns are "Student" ("Last,
  First"), "ID" (the Canvas user id), "SIS User ID", "SIS Login ID", "Section", then the
  assignments; its second row may be "Points Possible". The student id is the Canvas user
  id, kept as nbgrader's lms_user_id too (for `tvm-course export --format canvas`).
- moodle: any Moodle export with "Email address" and the names ("First name" and "Last name"
  or "Surname"): the gradebook's export (Grades > Export > Plain text file) or the
  participants page's download. The student id is the email address, lower-cased: what the
  assignment's grading worksheet names for each participant (lms/download.py).
- csv: nbgrader's own roster columns (id, first_name, last_name, email, lms_user_id), as
  `nbgrader db student import` reads them.

Nothing is removed: students already in the gradebook keep their grades and get the names,
email and LMS id given. A row without a usable id (or a second row for the same id) is
reported and skipped, never guessed at; so is the LMS's test student (Canvas's "Student, Test").

Students who join after a release: nbgrader's generate_assignment keeps an existing release
(unless --force), so the variants table released beside each assignment (variants.json) is
written again here, for everyone in the gradebook (refresh_variant_tables); the exchange gets
it with `nbgrader release_assignment ASSIGNMENT --force`. The gradebook is owner-only.
"""
from __future__ import annotations

import csv
import io
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..course.course_dir import CourseError
from ..problems.variants import VariantError, check_student_id

FORMATS = ("canvas", "moodle", "csv")
MAX_BYTES = 20 << 20


@dataclass
class RosterReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "row N: why"
    tables: list[Path] = field(default_factory=list)  # released variants tables written again (students were added)


def read_roster(path: Path, fmt: str) -> tuple[list[dict], list[str]]:
    """The students in an LMS export: ([{id, first_name, last_name, email, lms_user_id}], problems)."""
    if fmt not in FORMATS:
        raise CourseError(f"unknown roster format {fmt!r}: one of {', '.join(FORMATS)}")
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise CourseError(f"cannot read {path}: {error.strerror or error}") from None
    if len(raw) > MAX_BYTES:
        raise CourseError(f"{path} is larger than a class list may be ({MAX_BYTES >> 20} MiB)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CourseError(f"{path} is not UTF-8 text: export it again as CSV (UTF-8)") from None
    table = list(csv.DictReader(io.StringIO(text), delimiter=";" if _semicolons(text) else ","))
    columns = {c.strip() for c in (table[0].keys() if table else []) if c}
    required = {"canvas": {"Student", "ID"}, "moodle": {"Email address"}, "csv": {"id"}}[fmt]
    if not required <= columns:
        raise CourseError(f"{path} is not a {fmt} export: it has no {', '.join(sorted(required - columns))} column "
                          f"(its columns: {', '.join(sorted(columns)[:12]) or 'none'})")
    students, problems, seen = [], [], set()
    for number, row in enumerate(table, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
        entry = _entry(row, fmt)
        if entry is None:
            continue  # Canvas's "Points Possible" row, or a blank line
        if "test_student" in entry:
            problems.append(f"row {number}: Canvas's Test Student (user {entry['test_student'] or 'without an ID'}): "
                            "not a student of the class, not enrolled")
            continue
        try:
            check_student_id(entry["id"])
        except VariantError as error:
            problems.append(f"row {number}: {error}")
            continue
        if entry["id"] in seen:
            problems.append(f"row {number}: {entry['id']} again (a second row for the same student): skipped")
            continue
        seen.add(entry["id"])
        students.append(entry)
    return students, problems


def import_roster(coursedir, path: Path, fmt: str) -> RosterReport:
    students, problems = read_roster(path, fmt)
    if not students:
        raise CourseError(f"{path} lists no student with a usable id" + (f": {'; '.join(problems[:5])}" if problems else ""))
    return enrol(coursedir, students, RosterReport(skipped=problems))


def enrol(coursedir, students: list[dict], report: RosterReport | None = None) -> RosterReport:
    """Add or update `students` ({id, first_name, last_name, email, lms_user_id}: what is given
    and not empty) in the gradebook, names included: nbgrader's formgrader lists a student it
    has no names for as "None, None". Released variants tables are written again for new ones."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    report = report or RosterReport()
    students = [dict(entry) for entry in students]
    previous = os.umask(0o077)  # nbgrader creates the gradebook 644: it holds every grade
    try:
        with warnings.catch_warnings(), Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
            warnings.simplefilter("ignore", SAWarning)
            _add(gradebook, students, report)
    finally:
        os.umask(previous)
    _owner_only(coursedir.db_url)
    if report.added:
        report.tables = refresh_variant_tables(coursedir)
    return report


def _add(gradebook, students: list[dict], report: RosterReport) -> None:
    from nbgrader.api import MissingEntry

    for entry in students:
        student_id = entry.pop("id")
        given = {k: v for k, v in entry.items() if v}
        try:
            gradebook.find_student(student_id)
            (report.updated if given else report.skipped).append(student_id if given else f"{student_id}: nothing new")
        except MissingEntry:
            report.added.append(student_id)
        gradebook.update_or_create_student(student_id, **given)


def _owner_only(url: str) -> None:
    if url.startswith("sqlite:///") and Path(url[len("sqlite:///"):]).exists():
        Path(url[len("sqlite:///"):]).chmod(0o600)


def refresh_variant_tables(coursedir) -> list[Path]:
    """Write each released assignment's variants.json again, for every student in the gradebook
    (nbgrader's generate_assignment would keep the release as it is). Returns the tables written."""
    from nbgrader.api import Gradebook

    from ..problems.variants import TABLE_FILE, VariantError, course_secret, write_table

    releases = sorted(Path(coursedir.format_path(coursedir.release_directory, ".", ".")).glob(f"*/{TABLE_FILE}"))
    if not releases:
        return []
    try:
        secret = course_secret(coursedir.root)
    except VariantError:
        return []  # no secret, no tables: the release said so when it was made
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        students = [s.id for s in gradebook.students]
    usable = []
    for student in students:
        try:
            usable.append(check_student_id(student))
        except VariantError:
            continue
    for table in releases:  # rewritten in place: it keeps the mode the release gave it (students get it)
        write_table(table, usable, secret)
    return releases


def _entry(row: dict, fmt: str) -> dict | None:
    if fmt == "canvas":
        name, canvas_id = row.get("Student", ""), row.get("ID", "")
        if name.startswith("Points Possible") or not (name or canvas_id):
            return None  # Canvas's points row, a blank line; a student without an ID is reported
        if name.lower() == "student, test":
            return {"id": "", "test_student": canvas_id}
        last, _, first = name.partition(",")
        login = row.get("SIS Login ID", "")
        return {"id": canvas_id, "first_name": first.strip(), "last_name": last.strip(),
                "email": login if "@" in login else "", "lms_user_id": canvas_id}
    if fmt == "moodle":
        email = row.get("Email address", "")
        if not (email or row.get("First name") or row.get("Last name") or row.get("Surname")):
            return None
        return {"id": email.lower(), "first_name": row.get("First name", ""), "last_name": row.get("Last name") or row.get("Surname", ""),
                "email": email, "lms_user_id": ""}
    if not row.get("id"):
        return None
    return {"id": row["id"], "first_name": row.get("first_name", ""), "last_name": row.get("last_name", ""),
            "email": row.get("email", ""), "lms_user_id": row.get("lms_user_id", "")}


def _semicolons(text: str) -> bool:
    first = text.splitlines()[0] if text else ""
    return first.count(";") > first.count(",")
