"""`tvm-course similar ASSIGNMENT`: which graded submissions' schedules are the same, or nearly."""
from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode


def similar(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError, course_directory, find_course_root, load_course_config
    from ..similarity import course_hints, format_hints

    if not 0 <= args.near < 1 or args.limit < 1:
        print("tvm-course similar: --near must be from 0 to below 1 and --limit at least 1", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        coursedir = course_directory(load_course_config(find_course_root(args.course)))
    except CourseError as error:
        print(f"tvm-course similar: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(format_hints(args.assignment, course_hints(coursedir, args.assignment, args.near), limit=args.limit))
    return ExitCode.OK


def register(subparsers) -> None:
    from ..similarity import LIMIT, NEAR

    parser = subparsers.add_parser(
        "similar",
        help="after grading: pairs and clusters of submissions with the same schedule, or nearly (a hint, not a verdict)",
        description=(
            "Compare what the schedules of ASSIGNMENT's graded submissions do, as the trusted grader recorded "
            "it: the loop nest each leaves on the problem's default workload (loops by depth, extent and kind, "
            "blocks by their bindings, loops of one iteration left out), so that instructions that change "
            "nothing change nothing here, and copies of one schedule match across students' workload variants "
            "(grades kept before loop nests were: their traces' instructions, compared among themselves). "
            "Lists students whose outlines are identical (grouped when more than two share one), then near "
            "pairs (at most --near of the longer outline's lines inserted, deleted or changed), then what matches or nearly matches "
            "shared material: the yardsticks, the journal's tiling and the other schedules the lessons show. "
            "This is a hint where to look, never a verdict: students who read the same lessons write "
            "similar schedules, and a short schedule has few ways to be written. Read the submissions "
            "before concluding anything. Run `tvm-course grade ASSIGNMENT` first."
        ),
    )
    parser.add_argument("assignment", metavar="ASSIGNMENT")
    parser.add_argument("--course", metavar="DIR", help="the nbgrader course root (default: . if it holds nbgrader_config.py, else ./course)")
    parser.add_argument("--near", type=float, default=NEAR, metavar="FRACTION",
                        help="largest share of differing lines for a near pair (default: %(default)s, one in five; "
                             "outlines shorter than 1/FRACTION lines are never near)")
    parser.add_argument("--limit", type=int, default=LIMIT, help="groups or pairs listed per section (default: %(default)s)")
    parser.set_defaults(handler=similar)
