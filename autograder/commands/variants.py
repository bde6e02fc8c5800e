"""`tvm-course variants`: the course secret and the students' workloads (problems/variants.py)."""
from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode


def _root(args):
    from ..course.course_dir import find_course_root

    return find_course_root(args.course)


def init(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError
    from ..problems.variants import VariantError, create_secret

    try:
        path = create_secret(_root(args))
    except (CourseError, VariantError) as error:
        print(f"tvm-course variants init: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"wrote {path} (owner-only). Keep it for the whole term and out of git and every release: "
          "each student's variant is derived from it, at release and at grading.")
    return ExitCode.OK


def show(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError
    from ..problems.variants import VariantError, course_secret, variant_for

    try:
        secret = course_secret(_root(args))
        for student in args.students:
            print(f"{student}: {variant_for(student, secret).describe()}")
    except (CourseError, VariantError) as error:
        print(f"tvm-course variants show: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.OK


def register(subparsers) -> None:
    variants = subparsers.add_parser(
        "variants",
        help="the course secret and each student's own workload",
        description="Every student schedules, and does the tile arithmetic on, a workload of their own, derived "
        "from their student id and the course secret ($TVM_COURSE_SECRET, or COURSE/variant-secret). "
        "`nbgrader generate_assignment` writes the table students look theirs up in (variants.json).",
    )
    commands = variants.add_subparsers(dest="variants_command", metavar="COMMAND")
    commands.required = True
    make = commands.add_parser("init", help="create the course secret (COURSE/variant-secret, owner-only)")
    make.add_argument("--course", metavar="DIR", help="the course root (default: . or ./course)")
    make.set_defaults(handler=init)
    tell = commands.add_parser("show", help="print students' variants (instructor only: needs the secret)")
    tell.add_argument("students", metavar="STUDENT", nargs="+")
    tell.add_argument("--course", metavar="DIR", help="the course root (default: . or ./course)")
    tell.set_defaults(handler=show)
