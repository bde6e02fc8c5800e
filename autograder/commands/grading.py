"""`tvm-course grade-schedule`, `bench-grader` and `demo`: the schedule autograder's commands."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import typing

from ..engine.config import GraderConfig
from ..errors import ExitCode, UsageError



def _value_type(annotation) -> type:
    """int for `int`, `int | None` and the like."""
    options = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    return options[0]


def add_config_arguments(
    parser: argparse.ArgumentParser,
    *,
    title: str = "grader settings",
    only_when_given: bool = False,
    skip: tuple[str, ...] = (),
) -> None:
    """Every GraderConfig field as an option, typed from its annotation.

    With `only_when_given`, an option left out is absent from the parsed arguments (so it can
    override settings that come from elsewhere, such as a course's configuration).
    """
    group = parser.add_argument_group(title)
    hints = typing.get_type_hints(GraderConfig)
    for name, default, help_text in GraderConfig.describe():
        if name in skip:
            continue
        help_text = help_text.replace("%", "%%")  # argparse formats help with %: a literal one must be doubled
        flag = "--" + name.replace("_", "-")
        kind = _value_type(hints[name])
        given_default = argparse.SUPPRESS if only_when_given else default
        if kind is bool:
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=given_default, help=help_text)
        else:
            group.add_argument(flag, dest=name, type=kind, default=given_default, help=f"{help_text} (default: {default})")


def config_values(args: argparse.Namespace) -> dict:
    """The GraderConfig fields present in `args`, with --rpc/--key under their field names."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(GraderConfig) if hasattr(args, f.name)}
    if getattr(args, "rpc", None):
        values["rpc_tracker"] = args.rpc
    if getattr(args, "key", None):
        values["rpc_key"] = args.key
    return values


def config_from(args: argparse.Namespace) -> GraderConfig:
    return GraderConfig(**config_values(args))


def grade_schedule(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError
    from ..engine.pipeline import grade_source, read_submission
    from ..engine.preflight import GraderUnusable
    from ..problems.variants import VariantError

    try:
        source = read_submission(args.file)
    except (OSError, UnicodeDecodeError) as error:
        print(f"tvm-course grade-schedule: cannot read {args.file}: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        variant = _student_variant(args)
        result = grade_source(args.problem, source, config_from(args), args.target, variant=variant, student=args.student)
    except (UsageError, CourseError, VariantError, GraderUnusable) as error:  # a bug keeps its traceback
        print(f"tvm-course grade-schedule: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(result.to_json() if args.json else result.to_text())
    return ExitCode.OK if result.passed else ExitCode.NOT_PASSED


def _student_variant(args: argparse.Namespace):
    """--student ID: that student's variant, from the course secret; else None (the journal's)."""
    if args.student is None:
        return None
    from ..course.course_dir import CourseError, find_course_root
    from ..problems.variants import course_secret, variant_for

    root = None  # without a course root here, the secret may still come from the environment
    try:
        root = find_course_root(args.course)
    except CourseError:
        if args.course:
            raise
    return variant_for(args.student, course_secret(root))


def demo(args: argparse.Namespace) -> int:
    from .. import examples
    from ..engine.pipeline import grade_source

    print("Grading the bundled example schedules (autograder/examples/):\n")
    for name in examples.names():
        problem = "gpu-fused-conv" if name.startswith("gpu") else "tile-fused-conv"
        result = grade_source(problem, examples.source(name), config_from(args))
        print(f"== {name}.py")
        print(result.to_text(), end="\n\n")
    from ..rehearsal.demo import BUNDLED_COURSE, run_instructor_demo

    if not (BUNDLED_COURSE / "nbgrader_config.py").is_file():  # installed from the wheel: no course comes with it
        print("The instructor's half of the demo (release, collect and grade the sample class) needs the course's "
              "repository: run `make demo` in a clone of it. The example schedules above were graded by this installation.")
        return ExitCode.OK
    return run_instructor_demo(keep=args.keep)


def _is_gpu_problem(name: str) -> bool:
    from ..problems import get_problem

    try:
        return get_problem(name).target == "cuda"
    except KeyError:
        return False  # an unknown problem: grade_source says so


def bench_grader(args: argparse.Namespace) -> int:
    from .. import examples
    from ..engine import grader_bench
    from ..engine.pipeline import read_submission

    source = read_submission(args.file) if args.file else examples.source(args.example)
    what = args.file or f"autograder/examples/{args.example}.py"
    if not args.file and args.example == "journal" and _is_gpu_problem(args.problem):
        # The journal's schedule binds nothing to GPU threads (it would only be rejected): the
        # GPU problem's yardstick, public and correct, is graded as a submission instead.
        from ..problems import get_problem
        from ..problems.yardsticks import as_submission

        source = as_submission(get_problem(args.problem).yardstick)
        what = f"the {args.problem} yardstick (autograder/problems/yardsticks.py)"
    config = config_from(args)
    try:
        workloads = [_workload(text) for text in (args.variants.split(",") if args.variants else ["journal"])]
    except UsageError as error:
        print(f"tvm-course bench-grader: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    if args.load:
        print(f"under load: {args.load} busy processes at normal priority, each in a session of its own, "
              f"on {os.cpu_count()} cores")
    with grader_bench.busy_load(args.load):
        return _bench_each(args, source, what, config, workloads)


def _bench_each(args, source: str, what: str, config, workloads) -> int:
    from ..engine import grader_bench
    from ..engine.cpus import cpu_name, cpu_target

    host = cpu_name(cpu_target())
    summaries = {}
    for cpu in (args.cpus.split(",") if args.cpus else [config.mcpu]):
        cpu = None if cpu in (None, "", "host") else cpu
        for name, variant in workloads:
            print(f"Grading {what} on {args.problem} ({name}) {args.runs} times, compiled for {cpu or 'this host'}:")
            try:
                summaries[f"{cpu or 'host'} {name}" if args.variants else cpu or "host"] = grader_bench.run(
                    args.problem, source, args.runs, dataclasses.replace(config, mcpu=cpu), variant=variant,
                    fresh_processes=args.processes)
            except UsageError as error:
                print(f"tvm-course bench-grader: {error}", file=sys.stderr)
                return ExitCode.USAGE_ERROR
            for line in grader_bench.calibration_lines(args.problem, cpu or host, host):
                print(line)
            print()
    if len(summaries) > 1:
        print(grader_bench.per_cpu_table(summaries))
    return ExitCode.OK


def _workload(text: str):
    """("HxWxK", its variant) for a workload named on the command line: `journal` or
    HEIGHTxWIDTHxCHANNELS of one of the students' variants (e.g. 160x256x12)."""
    from ..problems.variants import JOURNAL, VARIANTS

    if text == "journal":
        return "journal", JOURNAL
    sizes = [v for v in VARIANTS if f"{v.height}x{v.width}x{v.out_channels}" == text]
    if not sizes:
        raise UsageError(f"--variants: {text!r} is neither 'journal' nor HEIGHTxWIDTHxCHANNELS of a variant "
                         f"(e.g. {VARIANTS[0].height}x{VARIANTS[0].width}x{VARIANTS[0].out_channels})")
    return text, sizes[0]


def register(subparsers) -> None:
    grade = subparsers.add_parser(
        "grade-schedule",
        help="grade a file defining schedule(sch) on a problem",
        description="Run FILE's schedule(sch) in a sandbox, replay its trace, check, compile, run and time it.",
    )
    grade.add_argument("problem", metavar="PROBLEM", help="tile-fused-conv or gpu-fused-conv")
    grade.add_argument("file", metavar="FILE", help="a Python file defining schedule(sch)")
    grade.add_argument("--target", choices=["cpu", "cuda"], help="defaults to the problem's own target")
    grade.add_argument("--json", action="store_true", help="print one JSON object (the Result)")
    grade.add_argument("--rpc", metavar="HOST:PORT", help="measure on a device behind this TVM RPC tracker")
    grade.add_argument("--key", help="the device key to request from the tracker")
    grade.add_argument("--student", metavar="ID", help="grade on this student's variant (needs the course secret; "
                       "default: the journal's workload, 224x224, 16 channels)")
    grade.add_argument("--course", metavar="DIR", help="the course root whose secret --student uses (default: . or ./course)")
    add_config_arguments(grade)
    grade.set_defaults(handler=grade_schedule)

    bench = subparsers.add_parser(
        "bench-grader",
        help="time one grading end to end, by stage, and the spread of its speedup",
        description="A benchmark: grade one submission several times and print wall times and the speedup's spread.",
    )
    bench.add_argument("--problem", default="tile-fused-conv")
    bench.add_argument("--example", default="journal", help="a bundled example schedule (default: %(default)s)")
    bench.add_argument("--file", help="grade this file instead of an example")
    bench.add_argument("--runs", type=int, default=10)
    bench.add_argument("--cpus", metavar="A,B,...", help="run once per LLVM CPU (host for this one), e.g. host,haswell,znver3, "
                       "and end with the speed against the yardstick and its spread for each")
    bench.add_argument("--load", type=int, default=0, metavar="N",
                       help="grade while N busy processes run beside (each in its own session, stopped at the end): "
                            "the spread between gradings on a loaded machine")
    bench.add_argument("--variants", metavar="A,B,...", help="grade on these workloads: journal, or HEIGHTxWIDTHxCHANNELS "
                       "of a student variant (e.g. journal,160x160x8,256x256x24), and end with a table")
    bench.add_argument("--processes", action="store_true",
                       help="grade each run in a fresh process of its own (a new interpreter: its stack, libraries and memory "
                            "placed afresh), and print the spread between processes beside that between placements")
    add_config_arguments(bench)
    bench.set_defaults(handler=bench_grader)

    run_demo = subparsers.add_parser(
        "demo", help="grade the bundled example schedules",
        description="Grade the bundled example schedules; then, in a clone of the course's repository, the instructor's "
        "whole job on the sample class (release, hand in, grade, feedback) in a scratch copy of the course: a new "
        "folder of the temporary directory for each run, readable by you alone, removed at the end.")
    add_config_arguments(run_demo)
    run_demo.add_argument("--keep", action="store_true",
                          help="keep the scratch course (its grades CSV and feedback) instead of removing it; says where it is")
    run_demo.set_defaults(handler=demo)
