"""`tvm-course bench-grading`: submissions per minute of the grading run, against plain nbgrader.
A benchmark, not a test: it prints numbers, it asserts none.

One class is handed in (`--copies` submissions in a mix of the samples' outcomes, MIX below) and
graded, in full (--force) with the course's own settings, feedback included:

- by `tvm-course grade`: one local worker, the local pool of `--workers`, and a Dask cluster
  where asked for; each run in a process of its own that is made the subreaper of everything
  it starts, so its CPU seconds are those of the whole tree (workers, fork servers, sandboxes);
- by plain nbgrader, the way most nbgrader courses grade code: `nbgrader autograde` and
  `nbgrader generate_feedback` on a copy of the course with nbgrader's own configuration, which
  executes every notebook in a Jupyter kernel, whose self-check cell grades the schedule there
  (the journal's workload: a plain course has no variants); `--peer-copies` grades only the
  first submissions of the same class (the same mix), to save time: a rate is a rate;
- with `--full-rounds N`, the first N submissions again with every timing round (no early
  stop), to check that stopping once the band is decided changes no credit that the full rounds
  give clearly (their 99% interval inside one band).

It ends with one line for scripts: `tvm-course: R1 per minute; plain nbgrader: R2 per minute;
ratio X`, R1 from the local pool of `--workers`.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..errors import TvmCourseError
from ..course.grading_run import GradingOptions, grade_assignment
from .scratch_course import BUNDLED_COURSE, copy_course, release_assignment, submit_samples

ASSIGNMENT = "tiling"
# A class of 20, by what the samples stand for (course/samples/tiling/*.yaml): a guess at a
# real class's proportions, not data: 30% register-blocked and fast (ada), 30% the journal's
# tiling copied (ben), 15% tiled without fusing (cleo), 10% a schedule error (dev), 5% a crash
# (eli), 10% tampering with the notebook (mallory, trudy). The hanging sample (fay) is left out:
# each costs its time limit (30 s), which measures the limit rather than the grader.
MIX = {"ada": 6, "ben": 6, "cleo": 3, "dev": 2, "eli": 1, "mallory": 1, "trudy": 1}
FULL_ROUNDS = {"timing_rounds": 45, "max_timing_rounds": 45}
PR_SET_CHILD_SUBREAPER = 36


class BenchmarkFailed(RuntimeError, TvmCourseError):
    """A measured run or one of its nbgrader steps failed; the message says which and why."""


def run_benchmark(copies: int, workers: int, samples: list[str] | None = None, course: str | None = None, out: TextIO = sys.stdout,
                  repeats: int = 1, cluster_workers: int = 0, scheduler: str | None = None, peer_copies: int | None = None,
                  full_rounds: int = 0, peer: bool = True, one_worker: bool = True) -> dict[str, dict]:
    """Grade one class with tvm-course (1 worker, `workers`, Dask) and with plain nbgrader; print
    rates, CPU seconds per submission and what each submission costs outside its timing."""
    from ..course.cluster import LocalCluster

    with tempfile.TemporaryDirectory(prefix="tvm-course-bench-") as scratch:
        root = copy_course(Path(course) if course else BUNDLED_COURSE, Path(scratch) / "course")
        release_assignment(root, ASSIGNMENT)
        mix = None if samples else MIX
        submitted = submit_samples(root, ASSIGNMENT, total=copies, only=samples, mix=mix)
        shares = {name: sum(1 for s in submitted.values() if s.student == name) for name in dict.fromkeys(s.student for s in submitted.values())}
        print(f"{copies} submissions of {ASSIGNMENT}: " + ", ".join(f"{name} {count}" for name, count in shares.items())
              + f"; {repeats} run(s) each; {os.cpu_count()} CPU(s) here, load average {os.getloadavg()[0]:.1f} at the start",
              file=out, flush=True)
        configurations = [("local pool, 1 worker", 1, {"workers": 1})] if one_worker or workers <= 1 else []
        if workers > 1:
            configurations.append((f"local pool, {workers} workers", workers, {"workers": workers}))
        local = LocalCluster(cluster_workers, log=Path(scratch) / "dask.log") if cluster_workers and not scheduler else None
        measured: dict[str, dict] = {}
        try:
            if scheduler or local:
                count = cluster_workers or _cluster_size(scheduler)
                configurations.append((f"Dask, {count} worker(s) at {scheduler or local.address}", count,
                                       {"scheduler": scheduler or local.address}))
            for label, count, how in configurations:
                runs = [_measured(_grade_class, root, how) for _ in range(repeats)]
                measured[label] = _summarise(label, count, copies, runs, submitted, out) | {"how": how}
        finally:
            if local:
                local.close()
        main_label = f"local pool, {workers} workers" if workers > 1 else "local pool, 1 worker"
        one = measured.get("local pool, 1 worker", {}).get("median")
        for label, numbers in measured.items():
            if numbers["workers"] > 1 and one:
                numbers["efficiency"] = numbers["median"] / (numbers["workers"] * one)
                print(f"scaling efficiency, {label}: {numbers['efficiency']:.0%} ({numbers['median'] / one:.2f}x one worker)", file=out)
        _print_costs(measured[main_label], out)
        if full_rounds:
            _compare_full_rounds(root, measured[main_label], min(full_rounds, copies), submitted, out)
        if peer:
            measured["plain nbgrader"] = _grade_with_plain_nbgrader(root, Path(scratch), submitted, peer_copies or copies, repeats, out)
            ours, theirs = measured[main_label]["median"], measured["plain nbgrader"]["median"]
            print(f"side by side: tvm-course ({main_label}) {ours:.1f} per minute, {measured[main_label]['cpu_per_submission']:.2f} CPU s "
                  f"per submission; plain nbgrader {theirs:.1f} per minute, {measured['plain nbgrader']['cpu_per_submission']:.2f} CPU s",
                  file=out)
            print(ratio_line(ours, theirs), file=out, flush=True)
        return measured


def ratio_line(ours: float, theirs: float) -> str:
    """The benchmark's last line, for scripts."""
    return f"tvm-course: {ours:.1f} per minute; plain nbgrader: {theirs:.1f} per minute; ratio {ours / theirs:.2f}"


# ---- runs measured in a process of their own ----------------------------------------------

def _measured(function, *args) -> dict:
    """Run function(*args) in a fresh process that reaps everything it starts: wall seconds, CPU
    seconds of the whole process tree, and what the function returned."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_measured_main, args=(send, function, args))
    process.start()
    send.close()
    try:
        reply = receive.recv()
    except EOFError:
        reply = {"error": "the measured run died"}
    process.join()
    if "error" in reply:
        raise BenchmarkFailed(reply["error"])
    return reply


def _measured_main(send, function, args) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans (a worker's sandboxes) come back here to be counted
    started = time.monotonic()
    try:
        value = function(*args)
    except Exception as error:  # noqa: BLE001 - reported to the benchmark, which stops
        send.send({"error": f"{error.__class__.__name__}: {error}"})
        return
    seconds = time.monotonic() - started
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # reap what is left, so its CPU time is counted
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.05)
    times = os.times()
    send.send({"seconds": seconds, "cpu": times.user + times.system + times.children_user + times.children_system, "value": value})


def _grade_class(root: Path, how: dict, settings: dict | None = None, students: list[str] | None = None) -> dict:
    report = grade_assignment(GradingOptions(ASSIGNMENT, course=root, force=True, progress=None, students=students,
                                             grader_settings=dict(settings or {}), **how))
    return {
        "seconds": report.seconds,
        "rows": {row.student: (dict(row.parts), row.schedule) for row in report.rows if row.student in report.graded},
        "failures": {s: why.splitlines()[0][:160] for s, why in report.failures.items()},
        "costs": report.costs,
        "speed": {s: _speed_record(root, s) for s in report.graded},
    }


def _speed_record(root: Path, student: str) -> dict | None:
    """The trusted grader's record of a graded schedule: its stages' seconds and its speed spread."""
    from ..nbgrader_ext.trusted import graded_record

    record = graded_record(root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    result = next(iter(record["results"].values()), None) if record else None
    return None if result is None else {"timings": result.get("timings", {}), "spread": result.get("yardstick_spread")}


def _summarise(label: str, count: int, copies: int, runs: list[dict], submitted: dict, out: TextIO) -> dict:
    rates = [60.0 * copies / run["seconds"] for run in runs]
    cpu = statistics.median(run["cpu"] / copies for run in runs)
    for run in runs:
        for student, (parts, schedule) in run["value"]["rows"].items():
            wrong = submitted[student].mismatches(parts, schedule)
            if wrong:
                print(f"  {label}: {student}: {'; '.join(wrong)}", file=out)
        for student, why in run["value"]["failures"].items():
            print(f"  {label}: {student}: grading failed: {why}", file=out)
    print(f"{label}: {_spread(rates)} submissions per minute ({60.0 / statistics.median(rates):.2f} s per submission, "
          f"{cpu:.2f} CPU s per submission)", file=out, flush=True)
    return {"workers": count, "per_minute": rates, "median": statistics.median(rates), "cpu_per_submission": cpu,
            "last": runs[-1]["value"]}


def _print_costs(numbers: dict, out: TextIO) -> None:
    """What a submission cost in the run, step by step: the trusted grading's stages (timing
    among them) from its own record, the nbgrader steps around it, the gradebook's."""
    last = numbers["last"]
    print("per submission, median seconds [max] (last run of that configuration):", file=out)
    stages: dict[str, list[float]] = {}
    rounds = []
    for record in last["speed"].values():
        if record:
            for stage, seconds in record["timings"].items():
                stages.setdefault(stage, []).append(seconds)
            if record.get("spread"):
                rounds.append(record["spread"]["n"])
    for step, values in sorted(last["costs"].items()) + sorted((f"trusted {k}", v) for k, v in stages.items()):
        print(f"  {step:28s} {statistics.median(values):6.3f} [{max(values):.3f}] over {len(values)}", file=out)
    if rounds:
        print(f"  timing rounds used: median {statistics.median(rounds):g}, min {min(rounds)}, max {max(rounds)} "
              f"over {len(rounds)} timed submissions", file=out)


def _compare_full_rounds(root: Path, numbers: dict, count: int, submitted: dict, out: TextIO) -> None:
    """Grade the first `count` submissions again with every round; compare the speed credit."""
    students = list(submitted)[:count]
    full = _measured(_grade_class, root, numbers["how"], FULL_ROUNDS, students)["value"]
    clear = same_clear = unclear = same_unclear = 0
    for student in students:
        early, everything = numbers["last"]["rows"].get(student), full["rows"].get(student)
        record = full["speed"].get(student) or {}
        spread = record.get("spread")
        if early is None or everything is None:
            continue
        same = early[0].get("speed") == everything[0].get("speed")
        # untimed (wrong, crashed...): nothing to decide, clear of every edge
        is_clear = spread is None or bool(spread.get("decided"))  # the 99% interval of all the rounds in one band
        clear, unclear = clear + is_clear, unclear + (not is_clear)
        same_clear, same_unclear = same_clear + (same and is_clear), same_unclear + (same and not is_clear)
        if not same:
            print(f"  full rounds: {student}: speed {early[0].get('speed')} stopping early ({_spread_text(numbers['last']['speed'].get(student))}), "
                  f"{everything[0].get('speed')} with every round ({_spread_text(record)}; {'clear of' if is_clear else 'straddling'} an edge)", file=out)
    print(f"full rounds ({FULL_ROUNDS['max_timing_rounds']}) against stopping once decided, {count} submissions: "
          f"{same_clear}/{clear} clear of every edge got the same speed credit; {same_unclear}/{unclear} whose interval "
          "straddles an edge did", file=out, flush=True)


def _spread_text(record: dict | None) -> str:
    spread = (record or {}).get("spread")
    if not spread:
        return "not timed"
    interval = spread.get("interval") or [float("nan")] * 2
    return f"median {spread['median']:.3f}x of {spread['n']} rounds, interval {interval[0]:.3f}-{interval[1]:.3f}x"


# ---- plain nbgrader ------------------------------------------------------------------------

PLAIN_CONFIG = '''c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "tvm-course"
c.Execute.kernel_name = "python3"
c.Execute.timeout = 120
'''
PLAIN_SELF_CHECK = "import autograder\nresult = autograder.check(PROBLEM, schedule)  # graded here, in the kernel\nresult"


def _plain_course(root: Path, scratch: Path) -> Path:
    """A copy of the course as a plain nbgrader course: nbgrader's own configuration (autograde
    runs the notebook in a kernel, feedback is nbgrader's), and a self-check cell that grades
    the schedule in the kernel whatever nbgrader's environment says."""
    import nbformat

    plain = scratch / "plain"
    shutil.copytree(root / "source", plain / "source")
    (plain / "nbgrader_config.py").write_text(PLAIN_CONFIG.format(root=str(plain)), encoding="utf-8")
    path = plain / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "self-check":
            cell.source = PLAIN_SELF_CHECK
    nbformat.write(notebook, path)
    return plain


def _nbgrader(plain: Path, *args: str, check: bool = True) -> int:
    nbgrader = Path(sys.executable).with_name("nbgrader")
    done = subprocess.run([str(nbgrader), *args], cwd=plain, capture_output=True, text=True)
    if done.returncode and check:
        raise BenchmarkFailed(f"nbgrader {' '.join(args)} failed: {(done.stderr or done.stdout)[-800:]}")
    return done.returncode


def _plain_run(plain: Path) -> dict:
    # nbgrader exits 1 when any notebook failed (a kernel that died): it still grades the rest
    _nbgrader(plain, "autograde", ASSIGNMENT, "--force", check=False)
    _nbgrader(plain, "generate_feedback", ASSIGNMENT, "--force", check=False)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{plain / 'gradebook.db'}", "tvm-course") as gradebook:
        return {s.student.id: s.score for s in gradebook.assignment_submissions(ASSIGNMENT)}


def _grade_with_plain_nbgrader(root: Path, scratch: Path, submitted: dict, count: int, repeats: int, out: TextIO) -> dict:
    from nbgrader.api import Gradebook

    from .samples import submit

    plain = _plain_course(root, scratch)
    _nbgrader(plain, "db", "assignment", "add", ASSIGNMENT)
    _nbgrader(plain, "generate_assignment", ASSIGNMENT, "--force")
    with Gradebook(f"sqlite:///{plain / 'gradebook.db'}", "tvm-course") as gradebook:
        for student in list(submitted)[:count]:
            gradebook.update_or_create_student(student)

    class _Dirs:  # what samples.submit needs of a course directory
        @staticmethod
        def format_path(kind, student, assignment):
            return str(plain / kind / student / assignment)

        release_directory, submitted_directory = "release", "submitted"

    for student in list(submitted)[:count]:
        submit(_Dirs, submitted[student], student)
    runs = [_measured(_plain_run, plain) for _ in range(repeats)]
    rates = [60.0 * count / run["seconds"] for run in runs]
    cpu = statistics.median(run["cpu"] / count for run in runs)
    print(f"plain nbgrader (autograde executing each notebook, then generate_feedback; one process, as `nbgrader autograde` runs), "
          f"{count} submissions: {_spread(rates)} submissions per minute ({60.0 / statistics.median(rates):.2f} s per submission, "
          f"{cpu:.2f} CPU s per submission)", file=out, flush=True)
    return {"workers": 1, "per_minute": rates, "median": statistics.median(rates), "cpu_per_submission": cpu,
            "scores": runs[-1]["value"]}


def _spread(rates: list[float]) -> str:
    if len(rates) == 1:
        return f"{rates[0]:.1f}"
    return f"median {statistics.median(rates):.1f} (min {min(rates):.1f}, max {max(rates):.1f})"


def _cluster_size(address: str) -> int:
    from ..course.cluster import RESOURCE, connect

    client = connect(address)
    try:
        return sum(1 for w in client.scheduler_info()["workers"].values() if w.get("resources", {}).get(RESOURCE))
    finally:
        client.close()
