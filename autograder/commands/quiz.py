"""`tvm-course quiz ...`: validate, key, check, release, take, gift, schema.

The quiz package is imported inside the handlers, so that building the `tvm-course` parser
(for any command) does not pay for importing jsonschema.

Exit codes: 0 ok (or every answer correct), 1 checked but not all correct, or the quiz is
invalid, 2 usage errors (a missing file, bad arguments, an -o file that cannot be written).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..errors import ExitCode


def register(subparsers) -> None:
    parser = subparsers.add_parser("quiz", help="self-check quizzes: validate, key, check, release, take, gift, schema",
                                   description="Self-check quizzes (see quizzes/README.md).")
    sub = parser.add_subparsers(dest="quiz_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("validate", help="check quiz files and report problems with file:line")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.set_defaults(handler=run_validate)

    p = sub.add_parser("key", help="print the answer key as an answers file (instructor copy only)")
    p.add_argument("quiz", metavar="QUIZ")
    p.set_defaults(handler=run_key)

    p = sub.add_parser("check", help="check an answers file (YAML: question id -> answer)")
    p.add_argument("quiz", metavar="QUIZ", help="the instructor copy or a released copy")
    p.add_argument("answers", metavar="ANSWERS")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--skip-code", action="store_true", help="do not grade code answers (they are not scored)")
    p.set_defaults(handler=run_check)

    p = sub.add_parser("release", help="write the student copy, with the key replaced by salted hashes")
    p.add_argument("quiz", metavar="QUIZ")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="a .yaml file, or .json for the website")
    p.set_defaults(handler=run_release)

    p = sub.add_parser("take", help="take a quiz interactively in the terminal")
    p.add_argument("quiz", metavar="QUIZ")
    p.add_argument("--skip-code", action="store_true", help="do not grade code answers")
    p.set_defaults(handler=run_take)

    p = sub.add_parser("gift", help="export to Moodle GIFT (code questions are skipped with a note)")
    p.add_argument("quiz", metavar="QUIZ")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    p.set_defaults(handler=run_gift)

    p = sub.add_parser("schema", help="print the JSON Schema of the quiz format (for editors)")
    p.add_argument("--released", action="store_true", help="the released copy's schema instead")
    p.set_defaults(handler=run_schema)


def _missing(*paths: str) -> bool:
    for path in paths:
        if not Path(path).is_file():
            print(f"tvm-course quiz: no such file: {path}", file=sys.stderr)
            return True
    return False


def _unwritable(path: str, makes_folders: bool = False) -> str | None:
    """Why `path` cannot be written, where that shows before writing (a directory, a folder that
    is missing or is a file, no permission), or None: so that a release says so before it spends
    seconds deriving its keys. The write itself still reports what only writing finds.
    `makes_folders`: the writer creates missing folders (write_released does)."""
    target = Path(path)
    if target.is_dir():
        return "it is a directory; give a file name"
    folder = target.parent
    while makes_folders and not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.exists():
        return f"no folder {folder}"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(target if target.exists() else folder, os.W_OK):
        return "permission denied"
    return None


def _said_unwritable(path: str, makes_folders: bool = False) -> bool:
    """Whether `path` cannot be written (_unwritable), said in one line."""
    why = _unwritable(path, makes_folders)
    if why:
        print(f"tvm-course quiz: cannot write {path}: {why}", file=sys.stderr)
    return why is not None


def _write_output(path: str, write, checked: bool = False) -> int:
    """Run `write()`, which writes `path`; a path that cannot be written is a usage error, one line.
    `checked`: the caller has already asked _said_unwritable."""
    if not checked and _said_unwritable(path):
        return ExitCode.USAGE_ERROR
    try:
        write()
    except OSError as err:
        print(f"tvm-course quiz: cannot write {path}: {err.strerror or err}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.OK


def _report(problems) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)


def run_validate(args) -> int:
    from autograder.quiz import QuizFileError, load

    if _missing(*args.paths):
        return ExitCode.USAGE_ERROR
    status = ExitCode.OK
    for path in args.paths:
        try:
            loaded = load(path)
        except QuizFileError as err:
            _report(err.problems)
            status = ExitCode.FAILED
            continue
        _report(loaded.problems)
        if loaded.errors:
            status = ExitCode.FAILED
            print(f"{path}: INVALID ({len(loaded.errors)} error(s))")
        else:
            count = len(loaded.released.questions)
            warnings = len(loaded.problems)
            tail = f", {warnings} warning(s)" if warnings else ""
            print(f"{path}: ok ({loaded.kind} copy, {count} questions{tail})")
    return status


def _instructor_or_fail(path: str):
    """The instructor quiz, or None after reporting why it cannot be used as one."""
    from autograder.quiz import QuizFileError, load_instructor

    try:
        quiz, problems = load_instructor(path)
    except QuizFileError as err:
        _report(err.problems)
        return None
    _report(problems)
    if any(p.is_error for p in problems):
        print(f"{path}: fix the errors above first", file=sys.stderr)
        return None
    return quiz


def run_key(args) -> int:
    if _missing(args.quiz):
        return ExitCode.USAGE_ERROR
    quiz = _instructor_or_fail(args.quiz)
    if quiz is None:
        return ExitCode.FAILED
    from autograder.quiz.key import key_yaml

    sys.stdout.write(key_yaml(quiz))
    return ExitCode.OK


def run_check(args) -> int:
    from autograder.quiz import QuizFileError, check_quiz, load
    from autograder.quiz.answers import load_answers

    if _missing(args.quiz, args.answers):
        return ExitCode.USAGE_ERROR
    try:
        loaded = load(args.quiz)
        sheet = load_answers(args.answers, loaded.released)
    except QuizFileError as err:
        if args.json:
            print(json.dumps({"quiz": None, "correct": 0, "total": 0, "score": 0.0, "questions": [],
                              "problems": [p.to_dict() for p in err.problems]}, indent=2))
        else:
            _report(err.problems)
        return ExitCode.FAILED
    report = check_quiz(loaded.released, sheet, skip_code=args.skip_code, problems=loaded.problems)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        from autograder.quiz.terminal import format_report

        print(format_report(report))
    return ExitCode.OK if report.all_correct else ExitCode.FAILED


def run_release(args) -> int:
    from autograder.quiz import release, write_released

    if _missing(args.quiz):
        return ExitCode.USAGE_ERROR
    quiz = _instructor_or_fail(args.quiz)
    if quiz is None:
        return ExitCode.FAILED
    if _said_unwritable(args.output, makes_folders=True):  # before the keys, which take seconds
        return ExitCode.USAGE_ERROR
    document = release(quiz)
    status = _write_output(args.output, lambda: write_released(document, Path(args.output)), checked=True)
    if status != ExitCode.OK:
        return status
    print(f"wrote {args.output}: {len(document['questions'])} questions, key replaced by salted hashes")
    return ExitCode.OK


def run_take(args) -> int:
    from autograder.quiz import QuizFileError, load

    if _missing(args.quiz):
        return ExitCode.USAGE_ERROR
    try:
        loaded = load(args.quiz)
    except QuizFileError as err:
        _report(err.problems)
        return ExitCode.FAILED
    _report(loaded.problems)
    from autograder.quiz.terminal import take

    report = take(loaded.released, skip_code=args.skip_code)
    return ExitCode.OK if report.all_correct else ExitCode.FAILED


def run_gift(args) -> int:
    if _missing(args.quiz):
        return ExitCode.USAGE_ERROR
    quiz = _instructor_or_fail(args.quiz)
    if quiz is None:
        return ExitCode.FAILED
    from autograder.quiz.gift import to_gift

    text, notes = to_gift(quiz)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.output:
        status = _write_output(args.output, lambda: Path(args.output).write_text(text, encoding="utf-8"))
        if status != ExitCode.OK:
            return status
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return ExitCode.OK


def run_schema(args) -> int:
    from autograder.quiz.schema import schema_text

    print(schema_text("released" if args.released else "instructor"))
    return ExitCode.OK

