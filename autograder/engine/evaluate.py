"""Child process: the trusted half of grading. Replays a validated trace, checks, compiles, runs, times.

Usage (by the grader only): python -m autograder.engine.evaluate FD PROBLEM SHAPE (ConvShape.to_spec), then two JSON lines on
stdin: the GraderConfig, then {"trace": ...} (nothing private on the command line, which any
process can read). What it sends back is messages.py's: stages, its target, the compile load,
and last its report (messages.EvaluatorReport) or an "internal" message (a grader fault). It
prepares (imports TVM, builds the workload, compiles the baseline) before the trace arrives, so
that work overlaps with the student's code running.
Only our code and TVM-generated code run here; it is a child so that a crash or a hang in
generated code, or in LLVM, costs the grading and not the grader.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..problems import Problem, get_problem
from ..problems.workload import ConvShape, random_inputs
from .config import GraderConfig
from . import library_cache, peak, placement
from .cpus import UnknownCPU, cpu_name, cpu_target
from .messages import EvaluatorReport, Outcome
from .measure import (INPUT_NAMES, InfrastructureError, LocalRunner, RunnerFailed, band_rule, band_rule_bounds, check_timings,
                      gpu_device_nodes, run_once, time_rounds)
from .opencl import KernelProgram, NotRunnable, OpenCLRunner
from .priority import to_background
from .report import Check


class Timer:
    def __init__(self, send):
        self.send = send
        self.stages: dict[str, float] = {}
        self._current: str | None = None
        self._since = 0.0

    @property
    def current(self) -> str:
        return self._current or "prepare"

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        if self._current:
            self.stages[self._current] = self.stages.get(self._current, 0.0) + now - self._since
        self._current, self._since = name, now
        self.send({"kind": "stage", "stage": name})

    def done(self) -> dict[str, float]:
        self.stage("done")
        self.stages.pop("done", None)
        return self.stages


def host_target(problem: Problem, config: GraderConfig):
    import tvm
    from tvm.target import Target

    host = cpu_target(config.mcpu)
    if problem.target == "cuda":
        from .runners import gpu_present

        if gpu_present() and not config.rpc_tracker:
            return Target(Target.from_device(tvm.cuda(0)), host=host)
        return Target({"kind": "cuda", "arch": config.cuda_arch}, host=host)
    return host


def baseline_module(problem: Problem, func, target):
    import tvm

    mod = tvm.IRModule({"main": func})
    if problem.baseline == "dlight":
        from tvm.s_tir import dlight as dl

        with target:
            mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)
    return mod


def yardstick_module(problem: Problem, target):
    """The problem's reference schedule on a fresh workload: our own code, trusted."""
    import tvm
    from tvm import s_tir

    schedule = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(schedule)
    return tvm.IRModule({"main": schedule.mod["main"]})


@dataclass
class _Draft:
    """The report as the evaluation builds it up; `end` makes the record the evaluator sends."""

    checks: list[Check] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    schedule_outline: list[str] | None = None

    def end(self, outcome: Outcome, message: str = "", **fields: Any) -> EvaluatorReport:
        return EvaluatorReport(outcome, message, tuple(self.checks), tuple(self.messages),
                               schedule_outline=self.schedule_outline, **fields)


@dataclass(frozen=True)
class _Launched:
    """The candidate's and the yardstick's kernels, handed to the OpenCL runner to build and run."""

    program: KernelProgram
    yardstick: KernelProgram


@dataclass(frozen=True)
class _Measured:
    """What running (and timing) the candidate found: its correctness check, and its rounds'
    seconds per function where it was timed (each round at `stack_steps`' position)."""

    correctness: Check
    samples: dict[str, list[float]] | None = None
    stack_steps: tuple[int, ...] = ()


class Evaluation:
    """Everything the evaluator does with one trace; `runner` runs compiled code (None: over RPC)."""

    def __init__(self, problem: Problem, config: GraderConfig, timer: Timer, runner: LocalRunner | OpenCLRunner | None):
        import tvm

        self.tvm = tvm
        self.problem, self.config, self.timer = problem, config, timer
        # CUDA libraries are not run here: with an OpenCL runner the kernels run on OpenCL.
        self.runner: LocalRunner | None = None if isinstance(runner, OpenCLRunner) else runner
        self.func = problem.workload()
        self.target = host_target(problem, config)
        # The grader's own libraries: compiled here for a remote device, taken from the cache
        # (or compiled once into it) for the runner on this machine.
        builders = {
            "baseline": lambda: tvm.compile(baseline_module(problem, self.func, self.target), target=self.target),
            "yardstick": lambda: tvm.compile(yardstick_module(problem, self.target), target=self.target),
        }
        self.peak_lanes = peak.lanes(self.target) if self.target.kind.name == "llvm" else 0
        if self.peak_lanes:
            builders["peak"] = lambda: peak.compile_kernel(self.target)
        self.opencl: OpenCLRunner | None = runner if isinstance(runner, OpenCLRunner) else None
        self.opencl_yardstick = None
        if self.opencl is not None:
            from . import opencl

            self.opencl_yardstick = opencl.build_program(yardstick_module(problem, self.target), self.target.host)
            self.opencl.build_yardstick(self.opencl_yardstick)  # built there while the student's code runs
        elif self.runner is None:
            self.baseline, self.yardstick = builders["baseline"](), builders["yardstick"]()
        else:
            for name, build in builders.items():
                cached = library_cache.library(f"{problem.name}@{problem.shape.to_spec()}", self.target, name, build)
                self.runner.put(name, build() if cached is None else cached)
        self.deadline = 0.0  # set when the trace arrives (evaluate)

    def seed(self) -> int:
        """The grading's seed: the inputs and the rounds' placements are drawn from it (the parent
        always sets one: pipeline.grade_source)."""
        if self.config.seed is None:
            raise InfrastructureError("the grading came without a seed")
        return self.config.seed

    def remaining_s(self) -> float:
        """Time left before the grader's own limit, less a margin to report in."""
        return max(1.0, self.deadline - time.monotonic())

    def evaluate(self, trace) -> EvaluatorReport:
        from . import checks
        from .replay import replay
        from .trace_schema import validate_trace

        self.deadline = time.monotonic() + self.config.evaluate_timeout_s - 3.0
        report = _Draft()
        self.timer.stage("replay")
        try:
            schedule = replay(self.func, trace, self.problem.target)
        except Exception as error:
            from .student_runner import schedule_error_text

            return report.end("error", "replaying your schedule failed: " + schedule_error_text(error))
        scheduled = schedule.mod["main"]
        summary = validate_trace(trace, self.problem.target)
        report.messages.extend(summary.dropped + summary.notes)  # what replay left out, and why; hints that do nothing here
        report.schedule_outline = _schedule_outline(self.problem, trace, schedule)

        self.timer.stage("checks")
        structural = [checks.check_interface(self.func, scheduled), checks.check_vector_width(scheduled)]
        if self.problem.target == "cuda" and all(c.passed for c in structural):  # lowering an absurd vector may abort
            structural.append(checks.check_binding(schedule))
            if structural[-1].passed:
                structural.append(checks.check_host_touches_no_device_buffer(scheduled, self.target))
            if structural[-1].passed:
                structural.append(checks.check_gpu_limits(scheduled, self.target))
        report.checks = list(structural)
        if not all(c.passed for c in structural):
            return report.end("rejected", next(c.message for c in structural if not c.passed))
        report.checks.append(checks.check_fusion(self.func, scheduled, self.target, self.problem.tile_budget_bytes))

        # Said before compiling: if LLVM crashes the process, the grader names what in the schedule strains it.
        self.timer.send({"kind": "compiling", **checks.compile_load(scheduled)})
        self.timer.stage("compile")
        from .runners import gpu_present

        on_opencl = self.problem.target == "cuda" and not self.config.rpc_tracker and not gpu_present()
        launched: _Launched | None = None
        not_runnable = ""
        if on_opencl:  # its kernels build there while CUDA compiles here
            try:
                launched = self._start_opencl(trace, schedule.mod)
            except NotRunnable as error:  # a lowering the runner does not model: correctness stays pending too, never 0
                not_runnable = str(error)
        try:
            candidate = self.tvm.compile(schedule.mod, target=self.target)
        except Exception as error:
            return report.end("error", f"TVM could not compile the schedule: {_last_line(error)}")
        if self.problem.target == "cuda":
            compiled = self._check_cuda_build(candidate)
            report.checks.append(compiled)
            if not compiled.passed:
                return report.end("rejected", compiled.message)
            if on_opencl:
                if launched is None:
                    return report.end("needs-gpu", f"no GPU here, and the kernels cannot run on the OpenCL device ({not_runnable}): "
                                                   f"the schedule compiled and passed the static checks; correctness and {self.PENDING_SPEED}")
                try:
                    return self._finish_opencl(launched, report)
                except RunnerFailed as error:
                    return report.end(error.status, str(error))

        try:
            if self.runner is not None:
                measured = self._run_here(candidate)
                report.messages.append(f"ran on this machine, confined: {self.runner.confinement()}")
            else:
                measured = self._run_remotely(candidate, report)
        except RunnerFailed as error:
            return report.end(error.status, str(error))
        report.checks.insert(0, measured.correctness)
        speed: dict[str, Any] = {}
        if measured.samples is not None:
            speed = _speed(measured.samples, self.problem.shape.flops, peak.flop(self.peak_lanes) if self.peak_lanes else 0,
                           band_rule(self.problem, self.config, placement.CYCLE if measured.stack_steps else 1), measured.stack_steps)
        return report.end("ran", correct=measured.correctness.passed, **speed)

    PENDING_SPEED = "speed needs a GPU: graded on a GPU host or through --rpc"

    def _start_opencl(self, trace, scheduled_mod) -> _Launched:
        """No GPU: lower the candidate for OpenCL and hand it to the runner (opencl.py), which
        builds and runs it while this process compiles for CUDA. opencl.NotRunnable where the
        kernels cannot run there (a lowering the runner does not model)."""
        from . import opencl
        from .replay import replay

        for_opencl = opencl.shared_scope_for_opencl(trace)
        # Replayed again only where a scope changed: otherwise the module already replayed serves
        program = opencl.build_program(scheduled_mod if for_opencl == trace else replay(self.func, for_opencl, "cuda").mod,
                                       self.target.host)
        opencl.check_same_launches(program, scheduled_mod, self.target)
        yardstick = self.opencl_yardstick or opencl.build_program(yardstick_module(self.problem, self.target), self.target.host)
        if self.opencl is None:
            self.opencl = opencl.OpenCLRunner(self.problem.shape, self.config)
        self.opencl.start(yardstick, program)
        return _Launched(program, yardstick)

    def _finish_opencl(self, launched: _Launched, report: _Draft) -> EvaluatorReport:
        """Correctness from the OpenCL run, against the yardstick's as a control; speed pending."""
        from . import opencl

        pending = self.PENDING_SPEED
        report.messages.append(opencl.describe(launched.program, launched.yardstick, math.prod(self.problem.shape.output_shape),
                                               self._gpu_arch()))
        self.timer.stage("opencl")
        runner = self.opencl
        if runner is None:  # _start_opencl made one
            raise InfrastructureError("the OpenCL runner was not started")
        try:
            device = runner.device(self.remaining_s())
            runs = runner.results(self.remaining_s())
        except opencl.BuildFailed as error:
            return report.end("needs-gpu", f"no GPU here, and the OpenCL device could not build the kernels TVM generated for your schedule "
                                           f"({_last_line(error)}): correctness and {pending}")
        control = self._judge(runs["yardstick"])
        if not control.passed:
            raise InfrastructureError(f"{device} computes the yardstick wrongly, so it cannot judge yours: {control.message}")
        report.messages.append(f"ran on {device}, confined: {runner.confinement()}")
        correctness = self._judge(runs["candidate"])
        if correctness.passed:
            backwards = self._judge(runs["candidate-reversed"])
            if not backwards.passed:
                correctness = Check("correctness", False, "with thread and block ids numbered backwards (a race between threads: "
                                    f"a read before the write it needs, or no barrier between them): {backwards.message}")
        if correctness.passed:
            correctness = replace(correctness, message=f"correct on {device}, thread ids numbered both ways: {correctness.message}; {pending}")
        report.checks.insert(0, correctness)
        return report.end("ran", correct=correctness.passed, speed_pending=pending)

    def _gpu_arch(self) -> str:
        arch = self.target.attrs.get("arch") if hasattr(self.target, "attrs") else None
        return str(arch) if arch else self.config.cuda_arch

    def _run_here(self, candidate) -> _Measured:
        self.timer.stage("run")
        runner = self.runner
        if runner is None:  # only a grading over RPC has none, and it runs remotely
            raise InfrastructureError("no runner on this machine")
        runner.put("candidate", candidate)
        correctness = self._judge(runner.run(self.remaining_s()))
        if not (correctness.passed and self.config.measure_speed):
            return _Measured(correctness)
        self.timer.stage("time")
        # Where each round runs (placement.py): drawn here, from the grading's seed, not by the runner.
        steps = placement.draw(self.seed(), band_rule_bounds(self.config)[1], placement.stack_offsets())
        return _Measured(correctness, runner.time(self.remaining_s(), self.peak_lanes, steps), tuple(steps))

    def _run_remotely(self, candidate, report: _Draft) -> _Measured:
        from .runners import open_session

        self.timer.stage("connect")
        try:
            session = open_session(self.problem.target, self.config.rpc_tracker, self.config.rpc_key)
            report.messages.append(f"ran on {session.where}")
            modules = {"baseline": session.load(self.baseline), "yardstick": session.load(self.yardstick),
                       "candidate": session.load(candidate)}
        except Exception as error:
            raise InfrastructureError(f"the RPC device could not be reached or loaded: {_last_line(error)}") from error
        inputs = random_inputs(self.problem.shape, self.seed())
        try:
            self.timer.stage("run")
            for name in ("baseline", "yardstick"):  # the grader's own: a failure here is the device's
                try:
                    run_once(session, modules[name], self.problem.shape, inputs)
                except Exception as error:
                    raise InfrastructureError(f"the RPC device could not run the {name}: {_last_line(error)}") from error
            correctness = self._judge(run_once(session, modules["candidate"], self.problem.shape, inputs))
            if not (correctness.passed and self.config.measure_speed):
                return _Measured(correctness)
            self.timer.stage("time")
            samples = time_rounds(session, modules, self.problem, inputs, self.config)
            return _Measured(correctness, check_timings(samples, self.config))
        except (RunnerFailed, InfrastructureError):
            raise
        except Exception as error:
            raise RunnerFailed(f"your compiled schedule failed on the remote device: {_last_line(error)}") from error
        finally:
            session.close()

    def _check_cuda_build(self, executable) -> Check:
        if len(executable.mod.imports) == 0:
            return Check("cuda-build", False, "no CUDA kernel was generated: the whole function compiled for the host (is every block bound?)")
        source = executable.mod.imports[0].inspect_source()
        kernels = len(re.findall(r"__global__[^;{]*\{", source))  # definitions, not declarations
        message = f"compiled to CUDA C ({len(source.splitlines())} lines, {kernels} kernel{'' if kernels == 1 else 's'})"
        if shutil.which("nvcc"):
            from tvm.support import nvcc

            try:
                with self.target:
                    ptx = nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")
            except Exception as error:
                return Check("cuda-build", False, f"nvcc rejected the generated CUDA: {str(error).strip()[-500:]}")
            message += f" and to PTX by nvcc ({len(ptx)} bytes)"
        return Check("cuda-build", True, message)

    def _judge(self, arrays: list[np.ndarray]) -> Check:
        """Correctness from what the run left: the output, and the inputs as they were afterwards."""
        from ..problems.workload import reference

        shape = self.problem.shape
        inputs = random_inputs(shape, self.seed())
        output, *after = arrays
        for name, arg in zip(INPUT_NAMES, after):
            if not np.array_equal(arg, inputs[name], equal_nan=True):
                return Check("correctness", False, f"the compiled function modified its input '{name}'")
        if np.isnan(output).any():
            count = int(np.isnan(output).sum())
            return Check("correctness", False, f"{count} of {output.size} outputs were never written (or are NaN)")
        expected = reference(inputs["x"], inputs["w"], inputs["b"], shape.padding)
        error = np.abs(output - expected)
        allowed = self.problem.atol + self.problem.rtol * np.abs(expected)
        if not np.isfinite(output).all() or (error > allowed).any():
            where = np.unravel_index(np.argmax(np.where(np.isfinite(error), error - allowed, np.inf)), error.shape)
            wrong = int((~(error <= allowed)).sum())
            return Check(
                "correctness",
                False,
                f"{wrong} outputs differ from the reference; worst at index {tuple(int(i) for i in where)}: "
                f"got {output[where]:.6g}, expected {expected[where]:.6g}",
            )
        return Check("correctness", True, f"matches the reference on fresh random inputs (max abs error {error.max():.2g})")


def _speed(samples: dict[str, list[float]], flops: int, peak_flop: int, rule, stack_steps=()) -> dict[str, Any]:
    """Speed over the baseline and against the yardstick (medians of per-round ratios, the
    latter with its confidence interval and whether that decided the band: worked out again
    here from the rounds, not taken from the runner), times, GFLOP/s, and this core's FMA
    peak where it was measured. Where the rounds ran at stack positions of their own
    (`stack_steps`, placement.py), each round's ratio is recorded with its placement."""
    from .bench import Measurements

    peak_s = samples.pop("peak", None)
    measured = Measurements(samples)
    runtimes = {name: measured.stats(name).median for name in samples}
    gflops = {name: flops / seconds / 1e9 for name, seconds in runtimes.items()}
    if peak_s and peak_flop:
        gflops["peak"] = peak_flop / peak_s[0] / 1e9
    ratios = measured.ratios("yardstick", "candidate")
    decision = rule.decide(ratios)
    against = measured.speedup("yardstick", "candidate").as_dict() | decision.as_dict()
    if stack_steps:
        against["placements"] = [{"kind": placement.KIND, "step": step, "ratio": ratio}
                                 for step, ratio in zip(stack_steps, ratios)]
    return {
        "speedup": measured.speedup("baseline", "candidate").as_dict(),
        "vs_yardstick": against,
        "runtimes_ms": {name: seconds * 1e3 for name, seconds in runtimes.items()},
        "gflops": gflops,
    }


def _schedule_outline(problem: Problem, trace, schedule) -> list[str] | None:
    """What the schedule does, for the instructor's similarity hints (nest_outline.py); None
    where it cannot be made, which costs the grading nothing."""
    from .nest_outline import schedule_outline

    try:
        return schedule_outline(problem, trace, schedule)
    except Exception:  # noqa: BLE001  (a hint: never worth a grade)
        return None


def _last_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[-1][:500] if lines else type(error).__name__


def main(argv: list[str]) -> None:
    from .sandbox import limit_memory, make_undumpable, open_channel

    make_undumpable()  # before anything: the student's code may be running beside us
    send = open_channel(argv[0])
    problem = get_problem(argv[1]).with_shape(ConvShape.from_spec(argv[2]))
    config = GraderConfig(**json.loads(sys.stdin.readline()))
    timer = Timer(send)
    timer.stage("prepare")
    import tvm  # noqa: F401  (before the fork, so the runner need not import it again)

    try:
        send({"kind": "target", "cpu": cpu_name(cpu_target(config.mcpu))})
    except UnknownCPU as error:
        send({"kind": "usage", "message": str(error)})
        return
    # Forked before this process compiles anything, starts threads or opens a GPU.
    runner: LocalRunner | OpenCLRunner | None
    if config.rpc_tracker:
        runner = None
    elif problem.target == "cuda" and not gpu_device_nodes():
        runner = OpenCLRunner(problem.shape, config)  # no GPU can be here: PoCL starts while we compile
    else:
        runner = LocalRunner(problem, config)
    # The runner is forked and keeps this priority for its timing; compiling and checking from
    # here on step back behind every timing on the machine (its session stays the runner's).
    to_background(config.background_nice)
    evaluation = None
    try:
        evaluation = Evaluation(problem, config, timer, runner)
        limit_memory(config.evaluate_memory_mb)
        timer.stage("waiting")
        line = sys.stdin.readline()
        if not line:
            return
        request = json.loads(line)
        try:
            result = evaluation.evaluate(request["trace"])
        except InfrastructureError as error:
            send({"kind": "internal", "message": str(error)})
            return
        except Exception as error:
            # The trace has arrived: whatever it makes fail (a deep nest that exhausts a walk,
            # an allocation TVM refuses) is the submission's, with score 0 and a reason.
            result = EvaluatorReport("error", f"grading your schedule failed during {timer.current}: {type(error).__name__}: {_last_line(error)}")
        send(replace(result, stage_s=timer.done()).to_wire())
    except Exception:
        # Before any trace: our bug or TVM's, not the student's. Say so, with the traceback.
        send({"kind": "internal", "message": traceback.format_exc(limit=8)})
    finally:
        late = evaluation.opencl if evaluation is not None else None
        started = {id(r): r for r in (runner, late) if r is not None}
        for child in started.values():  # an OpenCL runner may have been started late, for a GPU that failed
            child.close()


if __name__ == "__main__":
    main(sys.argv[1:])
