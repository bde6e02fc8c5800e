"""`tvm-course grade` and `bench-grading`: the instructor's grading run over an nbgrader course."""
from __future__ import annotations

import argparse
import os
import sys

from .grading import add_config_arguments, config_values
from ..errors import ExitCode


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def add_grader_overrides(parser: argparse.ArgumentParser) -> None:
    """GraderConfig fields as options that override the course's TrustedGrader.settings only when given."""
    parser.add_argument("--rpc", metavar="HOST:PORT", default=argparse.SUPPRESS, help="measure on devices behind this TVM RPC tracker")
    parser.add_argument("--key", default=argparse.SUPPRESS, help="the device key to request from the tracker")
    add_config_arguments(
        parser,
        title="trusted grader settings (default: the course's nbgrader_config.py, then GraderConfig)",
        only_when_given=True,
        skip=("rpc_tracker", "rpc_key"),
    )


def grade(args: argparse.Namespace) -> int:
    from ..course.course_dir import CourseError
    from ..course.grading_run import GradingOptions, grade_assignment
    from ..course.summary import format_table
    from ..course.workers import WorkersUnusable

    if args.workers < 1:
        print("tvm-course grade: --workers must be at least 1", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    options = GradingOptions(
        assignment=args.assignment,
        course=args.course,
        workers=args.workers,
        students=args.students,
        force=args.force,
        feedback=args.feedback,
        cell_timeout=args.cell_timeout,
        submission_timeout_s=args.submission_timeout,
        grader_settings=config_values(args),
        csv_path=args.csv,
        allow_unconfined=args.allow_unconfined,
        scheduler=args.scheduler,
        exchange=args.exchange,
        collect=args.collect,
    )
    from ..course.cluster import ClusterError

    try:
        report = grade_assignment(options)
    except (CourseError, WorkersUnusable, ClusterError) as error:  # what to change before the run; a bug keeps its traceback
        print(f"tvm-course grade: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(format_table(report.rows))
    print()
    print(run_summary(report))
    for student, why in sorted(report.retried.items()):
        print(f"retried: {student}: {why}")
    print(f"grades: {report.csv_path}")
    if report.fault_log is not None:
        print(f"the grader's own faults, in full (students see only that the grader failed): {report.fault_log}")
    if report.feedback_dir is not None:
        print(f"feedback (HTML, hidden tests left out): {report.feedback_dir}")
    _print_similarity_hints(report.course_root, args.assignment)
    for student, why in sorted(report.failures.items()):
        print(f"\n{student}: grading failed:\n{why}", file=sys.stderr)
    return ExitCode.SOME_FAILED if report.failures else ExitCode.OK


def run_summary(report) -> str:
    """ "2 graded (changed 1, new 1), 7 not graded (unchanged 6, pending-gpu 1), 0 failed, in 12.3 s" """
    def counted(students: list[str]) -> str:
        reasons: dict[str, int] = {}
        for student in students:
            decision = report.decisions.get(student)
            if decision is not None:
                reasons[decision.reason] = reasons.get(decision.reason, 0) + 1
        return f" ({', '.join(f'{reason} {count}' for reason, count in sorted(reasons.items()))})" if reasons else ""

    retried = f", {len(report.retried)} retried" if getattr(report, "retried", None) else ""
    return (f"{len(report.graded)} graded{counted(report.graded)}, {len(report.skipped)} not graded{counted(report.skipped)}, "
            f"{len(report.failures)} failed{retried}, in {report.seconds:.1f} s")


def _print_similarity_hints(root, assignment: str) -> None:
    """The run's last section, when some schedules are the same or nearly (similarity.py)."""
    from ..course.course_dir import course_directory, load_course_config
    from ..similarity import grading_run_section

    try:
        section = grading_run_section(course_directory(load_course_config(root)), assignment)
    except Exception as error:  # a hint must not turn a finished run into a failed one
        print(f"\nsimilarity hints unavailable: {error.__class__.__name__}: {error}", file=sys.stderr)
        return
    if section:
        print()
        print(section)


def bench_grading(args: argparse.Namespace) -> int:
    from ..rehearsal.benchmark import BenchmarkFailed, run_benchmark
    from ..course.cluster import ClusterError
    from ..course.course_dir import CourseError

    try:
        run_benchmark(args.copies, args.workers, samples=args.samples.split(",") if args.samples else None, course=args.course,
                      repeats=args.repeats, cluster_workers=args.cluster, scheduler=args.scheduler,
                      peer_copies=args.peer_copies, full_rounds=args.full_rounds, peer=args.peer, one_worker=args.one_worker)
    except (CourseError, ClusterError, BenchmarkFailed) as error:
        print(f"tvm-course bench-grading: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.OK


def register(subparsers) -> None:
    run = subparsers.add_parser(
        "grade",
        help="autograde every submission of an assignment (trusted re-grade, feedback, CSV, table)",
        description=(
            "Autograde the collected submissions of ASSIGNMENT in parallel with nbgrader, scoring the test "
            "cells from a sandboxed re-grade of the answer cells (the student's notebook is not run); write "
            "feedback without hidden test code, a CSV of every submission, and print a table. A submission "
            "is graded again when its content changed since it was graded, when its last grading failed, and when "
            "points were pending and this run can score them (a grader fault; GPU parts, with --rpc or on a GPU host); "
            "the rest are skipped unless --force, and the table says why for each. When some schedules are the same or "
            "nearly, the run ends with a short list of them: a hint where to look, not a verdict (see "
            "`tvm-course similar`)."
        ),
    )
    run.add_argument("assignment", metavar="ASSIGNMENT")
    run.add_argument("--course", metavar="DIR", help="the nbgrader course root (default: . if it holds nbgrader_config.py, else ./course)")
    run.add_argument("--workers", type=int, default=default_workers(), help="submissions graded at once (default: %(default)s, half the cores)")
    run.add_argument("--student", dest="students", action="append", metavar="ID", help="grade only this student's submission (repeatable)")
    run.add_argument("--force", action="store_true", help="regrade submissions that are already graded")
    run.add_argument("--collect", action="store_true", help="first `nbgrader collect --update ASSIGNMENT`: resubmissions "
                     "waiting in nbgrader's exchange replace what was collected")
    run.add_argument("--exchange", metavar="DIR", help="nbgrader's exchange root, to find resubmissions not collected yet "
                     "(default: the course's Exchange.root)")
    run.add_argument("--no-feedback", dest="feedback", action="store_false", help="do not write feedback HTML")
    run.add_argument("--csv", metavar="PATH", help="where to write the grades (default: COURSE/ASSIGNMENT-grades.csv)")
    run.add_argument("--cell-timeout", type=float, metavar="S",
                     help="seconds a notebook cell may run, where the course runs student notebooks (default: the course's Execute.timeout)")
    run.add_argument("--allow-unconfined", action="store_true",
                     help="grade even where student code cannot be confined (no Landlock or seccomp on this machine); "
                          "without it such a run refuses to start")
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="grade on the workers of this Dask scheduler (tcp://HOST:8786), started with "
                          "`dask worker ADDRESS --nthreads 1 --resources grading=1` from the course's environment; "
                          "the gradebook, CSV and feedback stay here (default: the local pool of --workers)")
    run.add_argument("--submission-timeout", type=float, default=900.0, metavar="S",
                     help="seconds one whole submission may take before it is stopped (default: %(default)s)")
    add_grader_overrides(run)
    run.set_defaults(handler=grade)

    bench = subparsers.add_parser(
        "bench-grading",
        help="submissions per minute of the grading run, side by side with plain nbgrader executing the notebooks",
        description="Hand in COPIES submissions (a mix of course/samples/tiling's outcomes) in a scratch copy of the course, grade "
                    "them REPEATS times with one worker, with --workers, and on a Dask cluster (--cluster N local workers, or "
                    "--scheduler), then with plain `nbgrader autograde` executing each notebook; print submissions per minute "
                    "(median, min-max), CPU seconds per submission, what each submission costs step by step, and last "
                    "`tvm-course: R1 per minute; plain nbgrader: R2 per minute; ratio X` (R1: the pool of --workers).",
    )
    bench.add_argument("--copies", type=int, default=20, help="submissions to grade (default: %(default)s)")
    bench.add_argument("--workers", type=int, default=2, help="workers of the parallel run (default: %(default)s)")
    bench.add_argument("--samples", help="comma-separated sample names, handed in in turn (default: the mix of a class, "
                                         "autograder/rehearsal/benchmark.py MIX)")
    bench.add_argument("--course", metavar="DIR", help="course root to copy (default: the bundled course/)")
    bench.add_argument("--repeats", type=int, default=1, help="runs of each configuration, for the spread (default: %(default)s)")
    bench.add_argument("--peer-copies", type=int, metavar="N", help="grade only the class's first N submissions with plain nbgrader (default: all)")
    bench.add_argument("--no-peer", dest="peer", action="store_false", help="do not grade with plain nbgrader")
    bench.add_argument("--no-one-worker", dest="one_worker", action="store_false", help="skip the one-worker run")
    bench.add_argument("--full-rounds", type=int, default=0, metavar="N",
                       help="also grade the first N submissions with every timing round, and compare their speed credit")
    bench.add_argument("--cluster", type=int, default=0, metavar="N", help="also grade on N local Dask workers started for the benchmark")
    bench.add_argument("--scheduler", metavar="ADDRESS", help="also grade on this Dask scheduler's workers")
    bench.set_defaults(handler=bench_grading)
