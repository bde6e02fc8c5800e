"""`tvm-course map`: print the course map and check that everything it names exists."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from ..errors import ExitCode


def course_map(args: argparse.Namespace) -> int:
    from .. import syllabus

    from pathlib import Path

    if args.syllabus == str(syllabus.DEFAULT_PATH) and not Path(args.syllabus).is_file():
        print("tvm-course map: the course map is an instructor's and author's command: it checks course/syllabus.yaml "
              "of the course's repository, which this installation has not (students: README.md beside the lessons lists "
              "them, the website's index too).", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        loaded = syllabus.load(args.syllabus)
    except syllabus.SyllabusError as error:
        print(f"tvm-course map: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    issues = syllabus.problems(loaded, args.root)
    if args.json:
        units = [asdict(unit) for unit in loaded.units]
        for unit, described in zip(loaded.units, units):  # what a student is told of each: how it is graded and checked
            for assignment, entry in zip(unit.assignments, described["assignments"]):
                entry.update(graded_on=assignment.graded_on, check_it=list(assignment.check_it))
        document = {"course": loaded.course, "units": units, "problems": issues}
        print(json.dumps(document, indent=2))
    else:
        print(syllabus.render(loaded, args.root))
        if issues:
            print("\nProblems:", *(f"  - {issue}" for issue in issues), sep="\n")
    return ExitCode.PROBLEMS if issues else ExitCode.OK


def register(subparsers) -> None:
    from ..syllabus import DEFAULT_PATH

    parser = subparsers.add_parser(
        "map",
        help="print the course map: units, lessons, quizzes, assignments",
        description="Print the course map from course/syllabus.yaml. Exits 1 when a path it names is missing "
        "or the map is inconsistent, 2 when the file cannot be read.",
    )
    parser.add_argument("--syllabus", default=str(DEFAULT_PATH), help=f"the syllabus file (default: {DEFAULT_PATH})")
    parser.add_argument("--root", default=None, help="directory the syllabus paths are relative to (default: the one holding course/)")
    parser.add_argument("--json", action="store_true", help="print the map and its problems as JSON")
    parser.set_defaults(handler=course_map)
