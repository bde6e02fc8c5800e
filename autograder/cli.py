"""`tvm-course`: a thin command line over the package's stages.

Each stage module registers its own subcommands through `register(subparsers)`; this file only
lists them, so adding a stage is one line in COMMAND_MODULES.
Exit codes are `errors.ExitCode`: 0 success / passed, 1 ran but did not pass, 2 usage error,
130 interrupted. An error the package raises on purpose (`errors.TvmCourseError`) that no command
caught ends the command with its message and its exit code; anything else is a bug, and keeps its
traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .errors import ExitCode, TvmCourseError

# Modules that contribute subcommands, in the order `--help` lists them.
COMMAND_MODULES = [
    "autograder.commands.grading",
    "autograder.commands.doctor",
    "autograder.commands.course",
    "autograder.commands.cost_model",
    "autograder.commands.lms",
    "autograder.commands.variants",
    "autograder.commands.similarity",
    "autograder.commands.quiz",
    "autograder.commands.course_map",
    "autograder.commands.site",
    "autograder.commands.hub",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvm-course",
        description="Courseware for the TVM unit: grade schedules, quizzes, the course map and the grading run.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A report may quote a submission's text: a terminal that cannot show a character gets an
    # escape for it, never a UnicodeEncodeError in place of the report.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or ExitCode.OK)
    except TvmCourseError as error:  # what a command did not catch itself: one line, never a traceback
        print(f"tvm-course {args.command}: {error}", file=sys.stderr)
        return int(error.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
