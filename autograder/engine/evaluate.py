"""Child process: the trusted half of grading. Replays a validated trace, checks, compiles, runs, times.

Usage (by the grader only): python -m autograder.engine.evaluate FD PROBLEM, then two JSON lines on
stdin: the GraderConfig, then {"trace": ...} (nothing private on the command line, which any
process can read). It prepares (imports TVM, builds the workload, compiles the
baseline) before the trace arrives, so that work overlaps with the student's code running.
Only our code and TVM-generated code run here; it is a child so that a crash or a hang in
generated code, or in LLVM, costs the grading and not the grader.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import time
import traceback

import numpy as np

from .config import GraderConfig
from ..problems import Problem, get_problem


class Timer:
    def __init__(self, send):
        self.send = send
        self.stages: dict[str, float] = {}
        self._current: str | None = None
        self._since = 0.0

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

    if problem.target == "cuda":
        from .runners import gpu_present

        host = Target.from_device(tvm.cpu())
        if gpu_present() and not config.rpc_tracker:
            return Target(Target.from_device(tvm.cuda(0)), host=host)
        return Target({"kind": "cuda", "arch": config.cuda_arch}, host=host)
    return Target.from_device(tvm.cpu())


def baseline_module(problem: Problem, func, target):
    import tvm

    mod = tvm.IRModule({"main": func})
    if problem.baseline == "dlight":
        from tvm.s_tir import dlight as dl

        with target:
            mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)
    return mod


class Evaluation:
    def __init__(self, problem: Problem, config: GraderConfig, timer: Timer):
        import tvm

        self.tvm = tvm
        self.problem, self.config, self.timer = problem, config, timer
        self.func = problem.workload()
        self.target = host_target(problem, config)
        self.baseline = tvm.compile(baseline_module(problem, self.func, self.target), target=self.target)

    def evaluate(self, trace) -> dict:
        from . import checks
        from .replay import replay

        report: dict = {"checks": [], "messages": []}
        self.timer.stage("replay")
        try:
            schedule = replay(self.func, trace, self.problem.target)
        except Exception as error:
            from .student_runner import schedule_error_text

            return {**report, "outcome": "schedule_error", "message": "replaying your schedule failed: " + schedule_error_text(error)}
        scheduled = schedule.mod["main"]

        self.timer.stage("checks")
        structural = [checks.check_interface(self.func, scheduled)]
        if self.problem.target == "cuda":
            structural.append(checks.check_binding(schedule))
            if structural[-1].passed:
                structural.append(checks.check_gpu_limits(scheduled, self.target))
        report["checks"] = [c.as_dict() for c in structural]
        if not all(c.passed for c in structural):
            return {**report, "outcome": "rejected", "message": next(c.message for c in structural if not c.passed)}
        fusion = checks.check_fusion(self.func, scheduled, self.target, self.problem.tile_budget_bytes)
        report["checks"].append(fusion.as_dict())

        self.timer.stage("compile")
        try:
            candidate = self.tvm.compile(schedule.mod, target=self.target)
        except Exception as error:
            return {**report, "outcome": "compile_error", "message": f"TVM could not compile the schedule: {str(error).strip().splitlines()[-1]}"}
        if self.problem.target == "cuda":
            compiled = self._check_cuda_build(candidate)
            report["checks"].append(compiled.as_dict())
            if not compiled.passed:
                return {**report, "outcome": "rejected", "message": compiled.message}
            from .runners import gpu_present

            if not gpu_present() and not self.config.rpc_tracker:
                return {**report, "outcome": "needs-gpu", "message": "no GPU here: the schedule compiled and passed the static checks; grade it on a GPU host (or with --rpc) for correctness and speed"}

        from .runners import open_session

        self.timer.stage("connect")
        session = open_session(self.problem.target, self.config.rpc_tracker, self.config.rpc_key)
        report["messages"].append(f"ran on {session.where}")
        try:
            self.timer.stage("run")
            base_mod, cand_mod = session.load(self.baseline), session.load(candidate)
            correctness = self._check_correctness(session, cand_mod)
            report["checks"].insert(0, correctness)
            report["correct"] = correctness["passed"]
            if correctness["passed"] and self.config.measure_speed:
                self.timer.stage("time")
                report.update(self._time(session, base_mod, cand_mod))
        finally:
            session.close()
        return {**report, "outcome": "ran"}

    def _check_cuda_build(self, executable):
        from .checks import CheckOutcome

        if len(executable.mod.imports) == 0:
            return CheckOutcome("cuda-build", False, "no CUDA kernel was generated: the whole function compiled for the host (is every block bound?)")
        source = executable.mod.imports[0].inspect_source()
        kernels = len(re.findall(r"__global__[^;{]*\{", source))  # definitions, not declarations
        message = f"compiled to CUDA C ({len(source.splitlines())} lines, {kernels} kernels)"
        if shutil.which("nvcc"):
            from tvm.support import nvcc

            try:
                with self.target:
                    ptx = nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")
            except Exception as error:
                return CheckOutcome("cuda-build", False, f"nvcc rejected the generated CUDA: {str(error).strip()[-500:]}")
            message += f" and to PTX by nvcc ({len(ptx)} bytes)"
        return CheckOutcome("cuda-build", True, message)

    def _arguments(self, session, inputs):
        shape = self.problem.shape
        args = [session.tensor(inputs[name]) for name in ("x", "w", "b")]
        return args + [session.tensor(np.full(shape.output_shape, np.nan, dtype=np.float32))]

    def _check_correctness(self, session, module) -> dict:
        from ..problems.workload import random_inputs, reference

        shape = self.problem.shape
        inputs = random_inputs(shape, self.config.seed)
        args = self._arguments(session, inputs)
        module["main"](*args)
        session.device.sync()
        output = args[-1].numpy()
        for name, arg in zip(("x", "w", "b"), args):
            if not np.array_equal(arg.numpy(), inputs[name]):
                return _check("correctness", False, f"the compiled function modified its input '{name}'")
        if np.isnan(output).any():
            count = int(np.isnan(output).sum())
            return _check("correctness", False, f"{count} of {output.size} outputs were never written")
        expected = reference(inputs["x"], inputs["w"], inputs["b"], shape.padding)
        error = np.abs(output - expected)
        allowed = self.problem.atol + self.problem.rtol * np.abs(expected)
        if (error > allowed).any():
            where = np.unravel_index(np.argmax(error - allowed), error.shape)
            return _check(
                "correctness",
                False,
                f"{int((error > allowed).sum())} outputs differ from the reference; worst at index {tuple(int(i) for i in where)}: "
                f"got {output[where]:.6g}, expected {expected[where]:.6g}",
            )
        return _check("correctness", True, f"matches the reference on fresh random inputs (max abs error {error.max():.2g})")

    def _time(self, session, base_mod, cand_mod) -> dict:
        from .bench import measure_interleaved, tvm_timer
        from ..problems.workload import random_inputs

        inputs = random_inputs(self.problem.shape, self.config.seed)
        timers = {
            "baseline": tvm_timer(base_mod, session.device, self._arguments(session, inputs), self.config.min_repeat_ms),
            "candidate": tvm_timer(cand_mod, session.device, self._arguments(session, inputs), self.config.min_repeat_ms),
        }
        measured = measure_interleaved(timers, rounds=self.config.timing_rounds)
        speedup = measured.speedup("baseline", "candidate")
        return {
            "speedup": speedup.as_dict(),
            "runtimes_ms": {name: measured.stats(name).median * 1e3 for name in timers},
        }


def _check(name: str, passed: bool, message: str) -> dict:
    return {"name": name, "passed": passed, "message": message}


def main(argv: list[str]) -> None:
    from .sandbox import limit_memory, make_undumpable, open_channel

    make_undumpable()  # before anything: the student's code may be running beside us
    send = open_channel(argv[0])
    problem = get_problem(argv[1])
    config = GraderConfig(**json.loads(sys.stdin.readline()))
    timer = Timer(send)
    timer.stage("prepare")
    evaluation = Evaluation(problem, config, timer)
    limit_memory(config.evaluate_memory_mb)
    timer.stage("waiting")
    line = sys.stdin.readline()
    if not line:
        return
    request = json.loads(line)
    try:
        result = evaluation.evaluate(request["trace"])
    except Exception:
        # Our bug or TVM's, not the student's: say so, with the traceback for whoever fixes it.
        send({"kind": "internal", "message": traceback.format_exc(limit=8)})
        return
    result["stage_s"] = timer.done()
    send({"kind": "result", **result})


if __name__ == "__main__":
    main(sys.argv[1:])
