"""Grade one submission, end to end (docs/architecture.md, "One grading"):

    source ─► syntax check (here)
          ─► student child, confined: schedule(sch) ─► its trace, over a bounded private channel
          ─► schema check of every field of the trace (here, without TVM)
          ─► evaluator child: replay, structural checks, compile
          ─► runner, a confined fork of the evaluator: runs and times the compiled code
          ─► the evaluator checks what the runner left as data ─► Result

This process never runs student code and never imports TVM, so nothing a submission does
can reach the verdict except through the trace; and the trace reaches TVM only as instructions
whose every input the schema declares.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import platform
import re
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import TvmCourseError
from ..errors import UsageError  # bad arguments (an unknown problem, a target the problem is not for): exit 2
from ..problems import Problem, get_problem
from ..problems.variants import JOURNAL, Variant
from .config import GraderConfig
from .confine import available
from .cpus import default_mcpu
from .forkserver import ForkServerUnavailable, ServedChild, shared_server
from .messages import CompileLoad, EvaluatorReport, MalformedMessage, STATUS_OF_STUDENT_KIND, StudentReport, evaluator_said
from .preflight import EXAMPLE, PROBLEM, GraderUnusable, explain
from .processes import alive
from .report import Check, CreditPart, Result, Status
from .runners import check_tracker_reachable
from .sandbox import Child, ChildOutcome
from .threads import tvm_thread_env
from .trace_outline import outline_lines, outline_trace
from .trace_schema import TraceRejected, validate_trace

# Starting a child costs an interpreter, `import tvm` and building the workload: not the
# student's time. Their clock starts when their code does; start-up has its own limit.
STARTUP_LIMIT_S = 120.0
# RSS of a child with TVM loaded, before the student's or the evaluator's own allowance.
BASE_RSS_MB = 1024


class _GradingEnded(TvmCourseError):
    """The grading ended before the evaluator had a trace to work on: `result` says why."""

    def __init__(self, result: Result):
        super().__init__(result.messages[0] if result.messages else result.status)
        self.result = result


@dataclass(frozen=True)
class _StudentTrace:
    """What the student's code left: its schedule's trace (not yet checked) and what it printed."""

    trace: Any
    output: str


def grade_source(problem_name: str, source: str, config: GraderConfig | None = None, target: str | None = None,
                 *, variant: Variant | None = None, student: str | None = None, preflight: bool = True,
                 explain_syntax_error: Callable[[str], str | None] | None = None) -> Result:
    """Grade `source` on `variant`'s workload (the journal's when None); `student`, whose
    variant it is, is recorded in the Result beside the shape. The first grading of a process
    is preceded by the preflight (engine/preflight.py), which raises GraderUnusable when this
    machine cannot grade its own known-good schedule. `explain_syntax_error(source)`, where
    given, words a source that does not compile (a notebook cell's IPython lines:
    nbgrader_ext/answer_cell.py); where it returns None, the syntax error's line says it."""
    config = config or GraderConfig()
    try:
        problem = get_problem(problem_name)
    except KeyError as error:
        raise UsageError(str(error)) from None
    if target is not None and target != problem.target:
        raise UsageError(f"problem {problem.name!r} is graded on {problem.target!r}, not {target!r}")
    if config.rpc_tracker:
        if not config.rpc_key:
            raise UsageError("an RPC tracker needs a device key (--key)")
        try:
            check_tracker_reachable(config.rpc_tracker)
        except (ValueError, ConnectionError) as error:
            raise UsageError(str(error)) from None
    if config.seed is None:
        config = dataclasses.replace(config, seed=secrets.randbelow(2**31))
    config = _for_this_cpu(config)
    _say_once_what_is_not_enforced()
    if preflight:
        _preflight(config)
    variant = variant or JOURNAL
    return _Grading(problem.with_shape(variant.shape), config, {"student": student, **variant.to_dict()}).run(source, explain_syntax_error)


_passed: set[tuple] = set()
_lock = threading.Lock()


@dataclass(frozen=True)
class PreflightPassed:
    """That a process of this machine, this user and this boot graded the journal confined with
    these settings: what a class run hands the local workers it starts, so that each does not
    grade the same schedule again under the same conditions (a worker on another machine, or
    with other settings, grades it itself). Only a process of the grader's own making passes it:
    it crosses no trust boundary."""

    key: tuple
    machine: tuple[str, int]  # (boot id, uid)


def _for_this_cpu(config: GraderConfig) -> GraderConfig:
    """`config` with the CPU to compile for filled in where it names none (TVM_COURSE_MCPU), as a
    grading and its preflight both compile."""
    if config.mcpu is None and default_mcpu():
        config = dataclasses.replace(config, mcpu=default_mcpu())
    return config


def _preflight_key(config: GraderConfig) -> tuple:
    config = _for_this_cpu(config)  # one check for a setting left to the default and the same one named
    return (config.warm_start, config.mcpu, config.student_memory_mb, config.evaluate_memory_mb)


@functools.lru_cache(maxsize=1)  # read once: every grading asks (its preflight), and a process keeps both
def _this_machine() -> tuple[str, int]:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as file:
            boot = file.read().strip()
    except OSError:
        boot = f"{platform.node()}?"  # no boot id: the host's name, and the pid space below
    return boot, os.getuid()


def preflight(config: GraderConfig | None = None, vouched: PreflightPassed | None = None) -> PreflightPassed:
    """Raise GraderUnusable unless the journal schedule grades correct here, confined
    (engine/preflight.py: what it grades and why; once per process and setting). `vouched`: the
    pass of another process on this machine with these settings (a class run's, for its local
    workers), which stands for this process's own."""
    from .. import examples

    config = _for_this_cpu(config or GraderConfig())
    key = _preflight_key(config)
    passed = PreflightPassed(key, _this_machine())
    with _lock:
        if key in _passed:
            return passed
        if vouched == passed:
            _passed.add(key)
            return passed
        check = dataclasses.replace(config, measure_speed=False, seed=0, rpc_tracker=None, rpc_key=None)
        result = grade_source(PROBLEM, examples.source(EXAMPLE), check, preflight=False)
        if result.correct and result.status == "passed" and not result.grader_fault:
            _passed.add(key)
            return passed
    raise GraderUnusable(explain(result))


_preflight = preflight  # grade_source's keyword `preflight` hides the function's own name there


SCRATCH_PREFIX = "tvm-course-grading-"


def _grading_scratch() -> str:
    """A folder of this grading's own, which everything its processes write goes into (their
    directories, the runner's libraries, the compiler's temporary files): removed when the
    grading ends, however it ends. Its name carries this process's pid, so that what a grader
    killed outright left behind is removed by the next one (sweep_scratch)."""
    sweep_scratch()
    return tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")


def sweep_scratch() -> list[str]:
    """Remove the scratch folders of graders that are gone (this user's only). Returns them."""
    removed: list[str] = []
    base = tempfile.gettempdir()
    try:
        entries = os.listdir(base)
    except OSError:
        return removed
    for name in entries:
        if not name.startswith(SCRATCH_PREFIX):
            continue
        pid = name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        path = os.path.join(base, name)
        try:
            if not pid.isdigit() or os.lstat(path).st_uid != os.getuid() or alive(int(pid)):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


_told = False


def _say_once_what_is_not_enforced() -> None:
    """A self-check works where confinement does not (macOS, an old kernel); it says so once.
    (An instructor's class run refuses instead: course/grading_run.py.)"""
    global _told
    status = available()
    if not status.complete and not _told:
        _told = True
        print(f"tvm-course: not enforced on this machine: {', '.join(status.missing())} ({status.reason}); "
              "the code being graded runs with your own access to it", file=sys.stderr)


def grading_machine(config: GraderConfig) -> str:
    """Which machine runs and times the compiled code: this host and its processor, or the RPC device."""
    if config.rpc_tracker:
        return f"RPC device {config.rpc_key!r} via {config.rpc_tracker}"
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{socket.gethostname()} ({model or platform.processor() or platform.machine()})"


class _Grading:
    trace_outline: list[str] | None = None  # set once the trace passes the schema
    schedule_outline: list[str] | None = None  # set once the evaluator replayed it (nest_outline.py)

    def __init__(self, problem: Problem, config: GraderConfig, variant: dict):
        self.problem, self.config, self.variant = problem, config, variant
        self.started = time.monotonic()
        self.timings: dict[str, float] = {}
        self.evaluator: Child | None = None

    def result(self, status: Status, *messages: str, **fields) -> Result:
        self.timings["total"] = time.monotonic() - self.started
        fields.setdefault("checks", [])
        fields.setdefault("trace_outline", self.trace_outline)
        fields.setdefault("schedule_outline", self.schedule_outline)
        fields.setdefault("cpu", self._evaluator_cpu() or self.config.mcpu)
        fields.setdefault("machine", grading_machine(self.config))
        return Result(
            problem=self.problem.name,
            target=self.problem.target,
            status=status,
            messages=[m for m in messages if m],
            timings=self.timings,
            seed=self.config.seed,
            variant=self.variant,
            **fields,
        )

    def _evaluator_cpu(self) -> str | None:
        """The LLVM CPU the evaluator said it compiles for; None before it said (or if what it said does not read)."""
        target = self.evaluator.last_message("target") if self.evaluator else None
        try:
            return evaluator_said(target, "target") if target else None
        except MalformedMessage:
            return None

    def run(self, source: str, explain_syntax_error: Callable[[str], str | None] | None = None) -> Result:
        too_large = source_too_large(source)
        if too_large:
            return self.result("rejected", too_large)
        syntax = syntax_error(source)
        if syntax:
            return self.result("error", (explain_syntax_error and explain_syntax_error(source)) or syntax)
        self.scratch = _grading_scratch()
        try:
            return self._run(source)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _run(self, source: str) -> Result:
        evaluator = self.evaluator = self.start_child(
            "autograder.engine.evaluate",
            [self.problem.name, self.problem.shape.to_spec()],
            env={**tvm_thread_env(self.config.threads), "TMPDIR": self.scratch},
        )
        try:
            evaluator.send(self.config.as_dict())
            # The evaluator locks its /proc entry first thing; only then may student code run.
            if not evaluator.wait_for_stage("prepare", STARTUP_LIMIT_S):
                outcome = evaluator.wait(0)
                return self.result("error", "internal grader error (not your code): the evaluator did not start:\n" + outcome.output_tail[-1500:],
                                   grader_fault=True)
            if self.config.mcpu:  # a CPU name is checked by LLVM in the evaluator: a usage error comes first
                evaluator.wait_for_message(lambda: evaluator.last_message("target") or evaluator.last_message("usage"), STARTUP_LIMIT_S)
                usage = evaluator.last_message("usage")
                if usage:
                    raise UsageError(evaluator_said(usage, "usage"))
            try:
                student = self.run_student(source)
            except _GradingEnded as ended:
                return ended.result
            output, trace = student.output, student.trace
            try:
                validate_trace(trace, self.problem.target)
            except TraceRejected as error:
                return self.result("rejected", str(error), student_output=output)
            self.trace_outline = outline_trace(trace)
            evaluator.send({"trace": trace})
            outcome = evaluator.wait(
                self.config.evaluate_timeout_s,
                memory_mb=self.config.evaluate_memory_mb + BASE_RSS_MB,
                clock_starts_at="replay",
                startup_s=STARTUP_LIMIT_S,
            )
            self.timings["evaluate"] = outcome.wall_s
            return self.interpret_evaluation(outcome, output)
        finally:
            evaluator.close()

    def start_child(self, module: str, args: list[str], **kwargs) -> Child:
        """A fork of this process's fork server (warm_start), or a new interpreter where there is none."""
        server = shared_server() if self.config.warm_start else None
        kwargs["scratch"] = self.scratch
        if server is not None:
            child = ServedChild(server, module, args, **kwargs)
            try:
                return child.start()
            except ForkServerUnavailable:
                child.close()
        return Child(module, args, **kwargs).start()

    def _student_args(self) -> list[str]:
        """student_runner's arguments: the problem, its shape, the memory limit and the nice value."""
        return [self.problem.name, self.problem.shape.to_spec(), str(self.config.student_memory_mb), str(self.config.background_nice)]

    def _wait_for_student(self, child: Child) -> ChildOutcome:
        """A student_runner child's end, under the student's limits: its time from when the student's
        code starts, its memory above the interpreter's own."""
        return child.wait(self.config.student_timeout_s, memory_mb=self.config.student_memory_mb + BASE_RSS_MB,
                          clock_starts_at="student", startup_s=STARTUP_LIMIT_S)

    def run_student(self, source: str) -> _StudentTrace:
        """The trace and printed output of the student's code; _GradingEnded, with the Result
        saying what went wrong, where there is no trace."""
        child = self.start_child(
            "autograder.engine.student_runner",
            self._student_args(),
            output_limit=self.config.output_tail_chars,
            env=tvm_thread_env(1),
            untrusted=True,
            files={"submission.py": source},
        )
        outcome = self._wait_for_student(child)
        self.timings["student"] = outcome.wall_s
        output = outcome.output_tail

        def ended(status: Status, message: str, **fields) -> _GradingEnded:
            return _GradingEnded(self.result(status, message, **{"student_output": output, **fields}))

        # Everything on the channel came from a process running the student's code: trust no field.
        last = outcome.last("trace") or _last_report(outcome)
        report: StudentReport | None = None
        unreadable = ""
        if last is not None:
            try:
                report = StudentReport.from_wire(last)
            except MalformedMessage as error:
                unreadable = str(error)
        if outcome.channel_overflow:
            raise ended("rejected", "your code sent the grader more data than a schedule's trace can be (the private channel was flooded)")
        started = next((m for m in outcome.messages if m.get("kind") == "stage"), None)  # sent before the student's code
        if started is None:
            # Nothing of the student's ran: whatever went wrong (the sandbox, an import of ours) is the grader's.
            why = f"did not start within {STARTUP_LIMIT_S:g} s" if outcome.timed_out else "could not start the code"
            raise ended("error", f"internal grader error (not your code): the sandbox {why}:\n" + outcome.output_tail[-1500:],
                        student_output="", grader_fault=True)
        missing = report.import_error if report is not None and report.kind == "exception" else None
        if missing and self._sandbox_cannot_import(missing):
            # Which modules a schedule may import is the sandbox's to say, and the grader's own
            # world is vouched for by the preflight (its own schedule graded confined first):
            # what the student chose to import and cannot have is theirs, never a grader fault.
            raise ended("error", f"your code imports {missing!r}, which cannot be imported inside the grading "
                        "sandbox (it is installed, but needs what the sandbox does not give: other files, a "
                        "network, a display, other processes); a schedule needs only tvm and numpy:\n"
                        f"{_untrusted_text(report.message if report else None)}")
        if outcome.starved:
            raise ended("error", _starved("your code", outcome), grader_fault=True)
        if outcome.timed_out:
            raise ended("timeout", f"schedule() did not finish within {self.config.student_timeout_s:g} s (an infinite loop?)")
        if outcome.memory_exceeded:
            raise ended("crashed", f"your code used more than the {self.config.student_memory_mb} MB memory limit and was stopped")
        if unreadable:
            raise ended("error", f"the child running your code sent an unreadable report ({_untrusted_text(unreadable)})")
        if report is None:
            raise ended("crashed", _silent_exit(outcome, "the process running your code"))
        if report.kind == "trace":
            return _StudentTrace(report.trace, output)
        text = _untrusted_text(report.message)
        if report.kind == "schedule_error":
            where = "; ".join(_untrusted_text(w) for w in report.where)
            text = f"schedule error{' at ' + where if where else ''}:\n{text}"
        raise ended(STATUS_OF_STUDENT_KIND[report.kind], text)

    def _sandbox_cannot_import(self, module) -> bool:
        """Whether an import the student's child reported failing is one the sandbox cannot give:
        a module the grader has installed that a confined child cannot import. It only words the
        message. The child's word is not taken for it (student code can raise any ImportError it
        likes): a fresh child, confined the same way, imports the module alone."""
        if not isinstance(module, str) or not _installed(module):
            return False
        child = self.start_child(
            "autograder.engine.student_runner",
            self._student_args(),
            env=tvm_thread_env(1), untrusted=True,
            files={"submission.py": f"import {module}\n\ndef schedule(sch):\n    pass\n"},
        )
        return self._wait_for_student(child).last("trace") is None

    def interpret_evaluation(self, outcome: ChildOutcome, output: str) -> Result:
        stage = (outcome.last("stage") or {}).get("stage", "prepare")
        internal = outcome.last("internal")
        if internal:
            try:
                said = evaluator_said(internal, "internal")
            except MalformedMessage as error:
                said = str(error)
            return self.result("error", f"internal grader error (not your code) during {stage}:\n{said}", student_output=output,
                               grader_fault=True)
        found = outcome.last("result")
        if found is None:
            if outcome.starved:
                return self.result("error", _starved(f"the evaluator (during {stage})", outcome), student_output=output, grader_fault=True)
            if outcome.timed_out:
                return self.result("timeout", f"compiling, running and timing your schedule took longer than {self.config.evaluate_timeout_s:g} s "
                                   f"(stuck in: {stage})" + _compile_load_text(outcome, stage), student_output=output)
            if outcome.memory_exceeded:
                return self.result("crashed", f"the evaluator ran out of memory (over {self.config.evaluate_memory_mb} MB) during {stage}: "
                                   "is something unrolled too far?", student_output=output)
            if stage in ("prepare", "waiting"):
                return self.result("error", "internal grader error (not your code) while preparing the workload:\n" + outcome.output_tail[-1500:],
                                   student_output=output, grader_fault=True)
            return self.result("crashed", _evaluator_crash(outcome, stage), student_output=output)
        try:
            report = EvaluatorReport.from_wire(found)
        except MalformedMessage as error:  # the evaluator is the grader's own: what it garbles is never the student's zero
            return self.result("error", f"internal grader error (not your code): {error}", student_output=output, grader_fault=True)
        self.schedule_outline = outline_lines(report.schedule_outline)
        for name, seconds in report.stage_s.items():
            self.timings[f"evaluate.{name}"] = seconds
        checks, messages = list(report.checks), list(report.messages)
        if report.outcome != "ran":
            return self.result(report.outcome, report.message, *messages, checks=checks, student_output=output)
        return self.score(report, checks, messages, output)

    def score(self, report: EvaluatorReport, checks: list[Check], messages: list[str], output: str) -> Result:
        problem, weights = self.problem, self.problem.weights
        correct = bool(report.correct)
        if not correct:
            return self.result("failed", "wrong results score 0: see the correctness check", *messages, checks=checks, correct=False, student_output=output,
                               credit={"correctness": 0.0, "structure": 0.0, "speed": 0.0})
        fused = all(c.passed for c in checks if c.name == "fusion")
        speed, against = report.speedup, report.vs_yardstick
        speedup = speed["median"] if speed else None
        relative = against["median"] if against else None
        fraction = problem.speed_credit(relative)
        credit: dict[CreditPart, float] = {
            "correctness": weights.correctness,
            "structure": weights.structure if fused else 0.0,
            "speed": round(weights.speed * fraction, 4),
        }
        pending = report.speed_pending
        if pending:  # correct on an OpenCL device; the speed part waits for a GPU
            return self.result("needs-gpu", f"correct on an OpenCL device; {pending}", *messages, checks=checks, correct=True,
                               score=round(credit["correctness"] + credit["structure"], 4),
                               credit={"correctness": credit["correctness"], "structure": credit["structure"]},
                               student_output=output)
        review = False
        gflops = report.gflops
        if speed and against:
            checks.append(Check("speed", fraction > 0, speed_message(problem, against, speed, fraction, gflops)))
            if speed["median"] > problem.implausible_speedup:
                review = True
                messages.append(f"a {speedup:.0f}x speedup is implausible for this problem: flagged for an instructor to look at")
        return self.result(
            "passed" if fused else "failed",
            *messages,
            checks=checks,
            correct=True,
            score=round(sum(credit.values()), 4),
            credit=credit,
            speedup=round(speedup, 4) if speedup is not None else None,
            speedup_spread=speed,
            yardstick_speedup=round(relative, 4) if relative is not None else None,
            yardstick_spread=against,
            gflops=round(gflops["candidate"], 2) if "candidate" in gflops else None,
            peak_gflops=round(gflops["peak"], 2) if gflops.get("peak") else None,
            runtimes_ms=report.runtimes_ms,
            student_output=output,
            review=review,
        )


def speed_message(problem: Problem, against: dict, speed: dict, fraction: float, gflops: dict) -> str:
    """Where a schedule stands: against the yardstick (what the credit is for), the baseline, GFLOP/s."""
    baseline = "the unscheduled function" if problem.baseline == "unscheduled" else "TVM's default GPU schedule (dlight)"
    text = (
        f"{against['median']:.2f}x the speed of the yardstick ({problem.yardstick_title}, timed beside yours: "
        f"median of {against['n']} interleaved rounds{_placed(against)}, middle half {against['q1']:.2f}-{against['q3']:.2f}x{_decided(against)}): "
        f"{fraction:.0%} of the speed points"
    )
    higher = [b for b in problem.speed_bands if b.credit > fraction]
    if higher:
        text += f"; {higher[0].min_speedup:g}x the yardstick earns {higher[0].credit:.0%}"
    text += f". {speed['median']:.2f}x the speed of {baseline}"
    if "candidate" in gflops and "yardstick" in gflops:
        text += f"; {gflops['candidate']:.0f} GFLOP/s (the yardstick: {gflops['yardstick']:.0f})"
        if gflops.get("peak"):
            text += (f", {gflops['candidate'] / gflops['peak']:.0%} of this core's FMA peak "
                     f"({gflops['peak']:.0f} GFLOP/s, measured beside it)")
    return text


def _placed(against: dict) -> str:
    """Where the rounds ran: each at a stack position of its own (engine/placement.py), where recorded."""
    placements = against.get("placements")
    if not placements:
        return ""
    return f" at {len({p['step'] for p in placements})} stack positions"


def _decided(against: dict) -> str:
    """How the rounds ended: the band decided (the interval inside one band), or not by the last round."""
    interval = against.get("interval")
    if not interval:
        return ""
    level = f"{against.get('confidence', 0):.0%} interval {interval[0]:.2f}-{interval[1]:.2f}x"
    if against.get("decided"):
        return f"; {level}, inside one band: decided after {against['n']} rounds"
    return f"; {level} straddles a band edge: the median of all {against['n']} rounds decides"


# A schedule is a few KiB (MetaSchedule's printed traces for this workload: 3-8 KiB). Compiling
# source text costs about 400 times its size in memory (measured: 256 KiB of Python took 100 MB),
# so nothing larger is parsed in the grading process: it is refused before compile() sees it.
MAX_SOURCE_BYTES = 64 * 1024


def source_too_large(source: str) -> str | None:
    if len(source.encode("utf-8", "surrogatepass")) <= MAX_SOURCE_BYTES:
        return None
    return (f"the submission's source is over the {MAX_SOURCE_BYTES // 1024} KiB a schedule may be "
            "(a schedule is a few KiB: is data pasted into it?)")


def read_submission(path) -> str:
    """A submission file's text, reading no more than one byte past MAX_SOURCE_BYTES (a larger
    file is refused by the grading, whatever its size). OSError and UnicodeDecodeError as for open()."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        return data.decode("utf-8", "replace") + " "  # over the limit whatever the decoding replaced
    return data.decode("utf-8")


def syntax_error(source: str) -> str | None:
    """A syntax error's line and text, found without running anything."""
    try:
        compile(source, "submission.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        line = (error.text or "").rstrip()
        pointer = f"\n    {line}" if line else ""
        return f"syntax error on line {error.lineno}: {error.msg}{pointer}"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"the submission cannot be compiled: {error.__class__.__name__}: {error}"
    return None


MAX_MESSAGE_CHARS = 2000


def _untrusted_text(value) -> str:
    """A message field from the student's child, as bounded text whatever was sent."""
    if not isinstance(value, str):
        return "(no readable message)"
    if len(value) > MAX_MESSAGE_CHARS:
        return value[:MAX_MESSAGE_CHARS] + f" [... {len(value) - MAX_MESSAGE_CHARS} more characters cut]"
    return value


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _installed(module: str) -> bool:
    """Whether `module` (a dotted name) is one the grader has: the standard library's, or a file
    under an installed top-level package. Found on disk, without importing anything."""
    import importlib.util

    if len(module) > 200 or not _MODULE_NAME.fullmatch(module):
        return False
    top, *rest = module.split(".")
    if top in sys.stdlib_module_names and not rest:
        return True
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: found, not imported
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    folders = list(spec.submodule_search_locations or [])
    for index, part in enumerate(rest):
        last = index == len(rest) - 1
        found = []
        for folder in folders:
            if os.path.isfile(os.path.join(folder, part, "__init__.py")):
                found.append(os.path.join(folder, part))
            elif last and any(name.split(".", 1)[0] == part and name.endswith((".py", ".so"))
                              for name in _listdir(folder)):
                return True
        if not found:
            return False
        folders = found
    return True


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _last_report(outcome: ChildOutcome) -> dict | None:
    return next((m for m in reversed(outcome.messages) if m.get("kind") not in ("stage",)), None)


def _starved(what: str, outcome: ChildOutcome) -> str:
    return (f"internal grader error (not your code): this machine kept {what} waiting for a CPU for "
            f"{outcome.runqueue_wait_s:.0f} s, having let it run for {outcome.cpu_s:.1f} s; grade again on a less busy machine")


def _silent_exit(outcome: ChildOutcome, who: str) -> str:
    if outcome.signal_name:
        return f"{who} was killed by {outcome.signal_name} (a crash in native code, or an explicit kill)"
    return f"{who} exited (code {outcome.returncode}) without reporting a result"


# What the evaluator was doing in each stage, as a student reads it.
_STAGE_WORDS = {
    "replay": "while TVM replayed your schedule's trace",
    "checks": "while checking the scheduled function (TVM's lowering passes)",
    "compile": "while TVM and LLVM compiled your schedule (the grader's own functions had compiled before it)",
    "run": "while your compiled schedule ran",
    "time": "while your compiled schedule was timed",
}
_NATIVE_ERROR = re.compile(r"LLVM ERROR|Check failed|Assertion|terminate called|Segmentation fault|Aborted")


def _evaluator_crash(outcome: ChildOutcome, stage: str) -> str:
    """The evaluator died without a result: in which stage, what native code said last (LLVM's
    or TVM's own error line, from the grader's child), and what in the schedule strains the
    compiler where the crash came while compiling."""
    text = _silent_exit(outcome, f"the evaluator ({_STAGE_WORDS.get(stage, 'during ' + stage)})")
    said = [line.strip() for line in outcome.output_tail.splitlines() if _NATIVE_ERROR.search(line)]
    if said:
        text += f"; it said last: {said[-1][:300]}"
    return text + _compile_load_text(outcome, stage)


def _compile_load_text(outcome: ChildOutcome, stage: str) -> str:
    """What the evaluator said, before compiling, that the scheduled function asks of LLVM."""
    found = outcome.last("compiling") if stage == "compile" else None
    try:
        load = CompileLoad.from_wire(found) if found else None
    except MalformedMessage:  # a hint beside the crash's verdict: without it, the verdict stands
        load = None
    if load is None:
        return ""
    parts = []
    if load.widest_vector > 1:
        parts.append(f"its widest vector has {load.widest_vector} lanes (around block {_untrusted_text(load.vector_block)!r})")
    if load.unrolled_copies > 1:
        parts.append(f"its unrolled loops copy one loop body {load.unrolled_copies} times")
    if not parts:
        return ""
    return (". What in your schedule LLVM works hardest on: " + " and ".join(parts)
            + "; a narrower vector or less unrolling compiles in less time and memory")
