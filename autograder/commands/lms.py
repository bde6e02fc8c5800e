"""`tvm-course roster`, `collect` and `export`: the class and the submissions in from the LMS, grades out."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..engine.untrusted_text import visible
from ..errors import ExitCode

LMS_CHOICES = ("canvas", "moodle")


def roster(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError, course_directory, find_course_root, load_course_config
    from ..lms.roster import import_roster

    try:
        coursedir = course_directory(load_course_config(find_course_root(args.course)))
        report = import_roster(coursedir, Path(args.file), args.source)
    except CourseError as error:
        print(f"tvm-course roster: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"{len(report.added)} student(s) added, {len(report.updated)} updated, in {coursedir.db_url}")
    for line in report.skipped:
        print(f"  skipped {visible(line)}", file=sys.stderr)
    if report.tables:
        assignments = [t.parent.name for t in report.tables]
        print(f"wrote the variants of the class again into {', '.join(str(t) for t in report.tables)}; on JupyterHub, "
              "release again so that the students who join fetch theirs: "
              + "; ".join(f"`nbgrader release_assignment {a} --force`" for a in assignments))
    else:
        print("Release the assignments now (`nbgrader generate_assignment ASSIGNMENT`): each enrolled student's variant "
              "goes into the release.")
    return ExitCode.OK


def collect(args: argparse.Namespace) -> int:
    from ..lms.collect import collect_download
    from ..lms.download import enrol_advice
    from ..course.course_dir import CourseError

    try:
        report = collect_download(args.assignment, args.source, args.zip, course=args.course, worksheet=args.worksheet,
                                  enrol=args.enrol)
    except CourseError as error:
        print(f"tvm-course collect: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    plan = report.plan
    late = sorted({a.student for a in plan.accepted if a.late})
    print(f"collected {len(plan.accepted)} notebook(s) of {len(plan.students)} student(s) from {args.zip} into submitted/ "
          f"(the download is kept as {report.archive})")
    for accepted in plan.accepted:
        print(f"  {accepted.student}: {accepted.notebook}" + (" (LATE in Canvas)" if accepted.late else "")
              + (f"  <- {visible(accepted.entry)}" if args.verbose else ""))
    for note in plan.notes:
        print(f"  note: {note}")
    if report.replaced:
        print(f"replaced the earlier submission of {', '.join(report.replaced)} (kept in {report.backup}); "
              "`tvm-course grade` grades what changed")
    if report.unenrolled:
        print(f"enrolled now (--enrol; not in the gradebook before): {', '.join(report.unenrolled)}"
              + (f"; their variants are in {', '.join(str(t) for t in report.tables)} now" if report.tables else ""))
    if late:
        print(f"marked LATE by Canvas: {', '.join(late)} (no submission time comes with the download: "
              "nbgrader applies no late penalty; Canvas's own late policy applies there)")
    if plan.strangers:
        print(f"not on the roster, not collected: {', '.join(plan.strangers)}; {enrol_advice(plan.enrol_command)}", file=sys.stderr)
    if plan.test_students:
        print(f"Canvas's Test Student, not collected: {', '.join(plan.test_students)}", file=sys.stderr)
    if plan.refused:
        print(f"\nnot collected ({len(plan.refused)}):", file=sys.stderr)
        for refused in plan.refused:
            print(f"  {refused.entry}: {refused.reason}", file=sys.stderr)
        return ExitCode.PARTLY
    return ExitCode.OK


def export(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError, course_directory, find_course_root, load_course_config
    from ..lms.export import export_grades

    try:
        root = find_course_root(args.course)
        coursedir = course_directory(load_course_config(root))
        path = Path(args.output) if args.output else root / f"{args.assignment}-{args.format}.csv"
        report = export_grades(coursedir, args.assignment, args.format, path, column=args.column, omit_pending=args.omit_pending)
    except CourseError as error:
        print(f"tvm-course export: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"wrote {report.path}: {report.rows} row(s), {report.scored} with a score")
    if report.unfinished:
        print(f"warning: a grading run of {args.assignment} has not finished ({report.unfinished}): submissions it was "
              f"grading are left empty or have their earlier grades; run `tvm-course grade {args.assignment}` to the end, "
              "then export again", file=sys.stderr)
    for why, students in sorted(report.empty.items()):
        print(f"  left empty ({why}): {', '.join(students)}")
    if report.omitted:
        print(f"  left out (--omit-pending): {', '.join(report.omitted)}")
    if report.not_enrolled:
        print(f"  left out (not in the gradebook): {', '.join(report.not_enrolled)}: enrol them (`tvm-course roster`) "
              "to export their grades")
    if args.format == "canvas":
        print("Canvas: Grades > Import, choose this file; its assignment column is matched by the (id) at the end of "
              "its title, else by its exact title.")
        if not args.column:
            print(f"warning: the grade column is titled {args.assignment!r}: unless a Canvas assignment has exactly that "
                  "title, Canvas's import creates a new assignment. Pass --column with the header of Canvas's own "
                  "export, e.g. --column 'Tiling (123456)'.", file=sys.stderr)
    elif args.format == "moodle":
        print("Moodle: Grades > Import > CSV file; map 'Email address' to useremail and the grade column to the "
              "assignment. An empty cell clears a grade in Moodle: --omit-pending leaves those rows out.")
    if args.format in ("canvas", "moodle"):
        print(f"Scores are out of {report.max_score:g}: set the LMS assignment's maximum points to {report.max_score:g} "
              "(Moodle's default is 100, Canvas's is what you typed), or the LMS reads them out of its own.")
    return ExitCode.OK


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "roster", help="enrol the class from the LMS's export (Canvas gradebook CSV, Moodle participants/grades CSV)",
        description="Add (or update) the students of an LMS export in the course's nbgrader gradebook, under the ids "
                    "the LMS's downloads name: Canvas user ids, Moodle email addresses. Nothing is removed. Release "
                    "the assignments after it: each enrolled student's variant goes into the release.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--from", dest="source", choices=("canvas", "moodle", "csv"), required=True,
                        help="canvas: Grades > Export; moodle: an export with 'Email address' and names; csv: nbgrader's columns")
    parser.add_argument("--course", metavar="DIR", help="the nbgrader course root (default: . or ./course)")
    parser.set_defaults(handler=roster)

    parser = subparsers.add_parser(
        "collect", help="collect an LMS's 'download all submissions' zip into submitted/ (nbgrader zip_collect)",
        description="Read ZIP (Canvas's or Moodle's download of every submission of ASSIGNMENT) as untrusted input, "
                    "then collect it with nbgrader zip_collect into submitted/STUDENT/ASSIGNMENT/, the student id taken "
                    "from the LMS (Canvas user id; for Moodle, the grading worksheet's email address). Entries that are "
                    "not submissions are refused with their reason; exit status 1 when some were, 2 when nothing was "
                    "collected.",
    )
    parser.add_argument("assignment", metavar="ASSIGNMENT")
    parser.add_argument("zip", metavar="ZIP")
    parser.add_argument("--from", dest="source", choices=LMS_CHOICES, required=True, help="the LMS the download is from")
    parser.add_argument("--worksheet", metavar="CSV", help="Moodle: the assignment's grading worksheet (pairs participant numbers with students)")
    parser.add_argument("--course", metavar="DIR", help="the nbgrader course root (default: . or ./course)")
    parser.add_argument("--enrol", action="store_true", help="collect students who are not in the gradebook, and enrol "
                        "them (default: their uploads are refused, listed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="name the zip entry of each collected notebook")
    parser.set_defaults(handler=collect)

    parser = subparsers.add_parser(
        "export", help="write the grades as a file the LMS imports (Canvas, Moodle) or as a full CSV",
        description="Write ASSIGNMENT's grades, one row per student: a Canvas gradebook import, a Moodle grade import "
                    "or a CSV of everything. Scores are the gradebook's, after the late penalty; pending points, "
                    "submissions not graded (or changed since) and missing submissions leave the cell empty, never a number.",
    )
    parser.add_argument("assignment", metavar="ASSIGNMENT")
    parser.add_argument("--format", choices=("canvas", "moodle", "csv"), required=True)
    parser.add_argument("-o", "--output", metavar="FILE", help="where to write it (default: COURSE/ASSIGNMENT-FORMAT.csv)")
    parser.add_argument("--column", metavar="NAME",
                        help="the grade column's header: the LMS assignment, e.g. 'Tiling (123456)' as Canvas's export "
                             "names it (default: ASSIGNMENT)")
    parser.add_argument("--omit-pending", action="store_true", help="leave out the rows without a final score (Moodle clears a grade for an empty cell)")
    parser.add_argument("--course", metavar="DIR", help="the nbgrader course root (default: . or ./course)")
    parser.set_defaults(handler=export)
