"""Running and timing compiled schedules, where their code cannot reach the verdict.

The compiled schedule is TVM's code generated from a trace the schema accepted, but it is
still derived from a submission, so it never runs in the evaluator (which holds the channel
the grader trusts). On this machine it runs in a *runner*: a fork of the evaluator taken
before the evaluator compiles anything or touches a GPU, which confines itself at once
(`confine.py`: its own namespaces, no privilege, Landlock, seccomp) and then only loads the two libraries the
evaluator exports into its private directory, runs them, and reports. What it reports is
untrusted data:

- the outputs (and the inputs as they were after the call) go into one file of exactly the
  expected size that the evaluator created; the runner may write it but not grow or truncate it;
- the timings are lists of numbers, each checked (count, finite, in range) by the evaluator,
  which computes the medians and ratios itself.

Behind TVM's RPC tracker the compiled code runs on the remote device instead, through the
same two functions (`run_once`, `time_rounds`).
"""
from __future__ import annotations

import glob
import math
import os
import shutil
import sys
from typing import Literal, Sequence

import numpy as np

from ..errors import TvmCourseError
from . import world
from .confine import Policy, confine, enter_world
from .peak import best_seconds
from .placement import CYCLE, StackShifter, parse as parse_steps
from .sandbox import ForkedChild, limit_memory
from .threads import tvm_thread_env

# Timed side by side in every round; the first two are the grader's own (trusted) schedules.
TIMED = ("baseline", "yardstick", "candidate")
RESULT_FILE = "result.f32"
INPUT_NAMES = ("x", "w", "b")
MAX_SAMPLE_S = 60.0  # one time_evaluator sample; far above any real one


class InfrastructureError(RuntimeError, TvmCourseError):
    """The grader's own machinery failed (an RPC device lost): not the submission's fault."""


# What a runner's failure makes of the grading: the Result status (report.Status) it becomes.
RunnerStatus = Literal["error", "rejected", "crashed", "timeout"]


class RunnerFailed(RuntimeError, TvmCourseError):
    """The compiled schedule crashed, hung or sent garbage: the submission's fault.

    `status` is the Result status it becomes.
    """

    def __init__(self, message: str, status: RunnerStatus = "crashed"):
        super().__init__(message)
        self.status = status


def _arguments(session, shape, inputs: dict[str, np.ndarray]) -> list:
    args = [session.tensor(inputs[name]) for name in INPUT_NAMES]
    return args + [session.tensor(np.full(shape.output_shape, np.nan, dtype=np.float32))]


def run_once(session, module, shape, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Call the function once on NaN-filled output: [output, x, w, b] as they are afterwards."""
    args = _arguments(session, shape, inputs)
    module["main"](*args)
    session.device.sync()
    return [args[-1].numpy()] + [arg.numpy() for arg in args[:-1]]


def time_rounds(session, modules: dict, problem, inputs, config, placement=None, cycle: int = 1) -> dict[str, list[float]]:
    """Seconds per run of each module (name -> module), one sample per interleaved round, with
    as many rounds as it takes to decide the candidate's speed band (bench.BandRule); each round
    run by `placement` where it is placed in memory, in whole cycles of `cycle` rounds
    (bench.measure_interleaved), where given."""
    from .bench import measure_interleaved, tvm_timer

    timers = {name: tvm_timer(module, session.device, _arguments(session, problem.shape, inputs), config.min_repeat_ms,
                              slice_ms=config.slice_ms)
              for name, module in modules.items()}
    return measure_interleaved(
        timers, rounds=config.timing_rounds, max_rounds=config.max_timing_rounds, settle=("yardstick", "candidate"),
        rule=band_rule(problem, config, cycle), budget_s=config.timing_budget_s,
        first_rounds_only={"baseline": config.baseline_rounds}, placement=placement, cycle=cycle,
    ).samples


def _rule_key(rule) -> tuple:
    return rule.least, rule.most, rule.confidence, rule.every


def band_rule(problem, config, cycle: int = 1):
    """The rule that ends a grading's timing: the problem's band edges at the configured confidence,
    looked at after whole cycles of `cycle` rounds (placement.CYCLE where rounds are placed)."""
    from .bench import BandRule, cycle_bounds

    least, most = cycle_bounds(config.timing_rounds, max(config.timing_rounds, config.max_timing_rounds), cycle)
    return BandRule(tuple(b.min_speedup for b in problem.speed_bands), least, most, config.band_confidence, cycle)


def band_rule_bounds(config) -> tuple[int, int]:
    """The least and most rounds of a grading whose rounds are placed (in cycles of placement.CYCLE)."""
    from .bench import cycle_bounds

    return cycle_bounds(config.timing_rounds, max(config.timing_rounds, config.max_timing_rounds), CYCLE)


def result_layout(shape) -> list[tuple[tuple[int, ...], int]]:
    """(shape, offset in float32 elements) of the output, then x, w, b, in the result file."""
    layout, offset = [], 0
    for dims in (shape.output_shape, shape.input_shape, shape.weight_shape, shape.bias_shape):
        layout.append((dims, offset))
        offset += math.prod(dims)
    return layout


def result_bytes(shape) -> int:
    dims, offset = result_layout(shape)[-1]
    return (offset + math.prod(dims)) * 4


def read_result(path: str, shape) -> list[np.ndarray]:
    """The runner's file, read as data: exactly the expected size, or RunnerFailed."""
    return read_results(path, shape, 1)[0]


def read_results(path: str, shape, runs: int) -> list[list[np.ndarray]]:
    """A file of `runs` results one after another ([output, x, w, b] each), read as data:
    exactly the expected size, or RunnerFailed."""
    one = result_bytes(shape)
    size = os.stat(path).st_size
    if size != runs * one:
        raise RunnerFailed(f"the run left {size} bytes of results where {runs * one} were expected", "error")
    flat = np.fromfile(path, dtype=np.float32)
    return [[flat[base + offset : base + offset + math.prod(dims)].reshape(dims) for dims, offset in result_layout(shape)]
            for base in range(0, runs * one // 4, one // 4)]


def check_timings(message: dict | None, config, peak: bool = False) -> dict[str, list[float]]:
    """Timings from the runner, accepted only as finite, positive seconds: as many for the
    yardstick as for the candidate, between the configured least and most rounds; for the
    baseline, those of the first `baseline_rounds` of them (and one for the peak kernel)."""
    message = message or {}
    samples = {name: message.get(name) for name in TIMED + (("peak",) if peak else ())}
    candidate = samples["candidate"]
    rounds = len(candidate) if isinstance(candidate, list) else 0
    most = max(config.timing_rounds, config.max_timing_rounds, band_rule_bounds(config)[1])  # whole cycles may end past it
    counts = {"candidate": range(config.timing_rounds, most + 1),
              "yardstick": (rounds,), "baseline": (min(rounds, config.baseline_rounds),), "peak": (1,)}
    for name, values in samples.items():
        why = _implausible(values, counts[name])
        if why:
            raise RunnerFailed(f"the process timing your schedule sent timings that are not plausible measurements: "
                               f"field {name!r} {why}", "error")
    return {name: values for name, values in samples.items() if isinstance(values, list)}  # every one, as just checked


def _implausible(values: object, counts) -> str | None:
    """Why one function's samples are not measurements (None where they are): a list of a
    count in `counts` of floats in (0, MAX_SAMPLE_S] (an integer is not a measurement)."""
    if not isinstance(values, list):
        return f"is {'null' if values is None else type(values).__name__}, not a list of seconds"
    if len(values) not in counts:
        return f"has {len(values)} samples, not {' or '.join(str(c) for c in counts) if len(counts) < 3 else f'{min(counts)} to {max(counts)}'}"
    for index, value in enumerate(values):
        if not isinstance(value, float) or not 0 < value <= MAX_SAMPLE_S:
            return f"[{index}] is {value!r:.30}, not seconds in (0, {MAX_SAMPLE_S:g}]"
    return None


def gpu_device_nodes() -> tuple[str, ...]:
    return tuple(sorted(glob.glob("/dev/nvidia*")))


def await_stage(child, stage: str, deadline_s: float, doing: str, infrastructure: bool = False) -> None:
    """Wait for a runner's `stage`; if it never comes, raise what it means: InfrastructureError
    (the grader's fault: before the grader's own code has run there, or a message of ours said
    so) or RunnerFailed with the status the submission earned (timeout, crashed, ...)."""
    if child.wait_for_stage(stage, deadline_s):
        return
    outcome = child.wait(0)
    internal = outcome.last("internal")
    if internal:
        raise InfrastructureError(f"{internal.get('message')} (not your code)")
    if infrastructure:
        tail = " ".join(outcome.output_tail.strip().splitlines()[-3:])[-500:]
        raise InfrastructureError(f"the confined runner could not {doing} (not your code): {tail or outcome.signal_name or 'no output'}")
    if outcome.channel_overflow:
        raise RunnerFailed(f"the process running your compiled schedule flooded its channel when asked to {doing}", "rejected")
    if outcome.timed_out:
        raise RunnerFailed(f"your compiled schedule did not {doing} within {deadline_s:.0f} s", "timeout")
    if outcome.signal_name:
        raise RunnerFailed(f"your compiled schedule crashed ({outcome.signal_name}) when asked to {doing}")
    last_line = (outcome.output_tail.strip().splitlines() or [f"exit code {outcome.returncode}"])[-1]
    raise RunnerFailed(f"your compiled schedule failed when asked to {doing}: {last_line[:300]}")


def confinement_reported(child) -> str:
    """What a runner applied before it ran anything compiled, as it reported then."""
    ready: dict = next((m for m in child.messages if m.get("stage") == "ready"), {})
    applied = ready.get("confinement")
    return "; ".join(a for a in applied if isinstance(a, str)) if isinstance(applied, list) else "(not reported)"


class LocalRunner:
    """The confined runner on this machine: fork it early, then hand it libraries to run."""

    def __init__(self, problem, config):
        self.problem, self.config = problem, config
        self.shape = problem.shape
        gpu = problem.target == "cuda"
        self.child = ForkedChild(self._main, env={**tvm_thread_env(config.threads),
                                                   "CUDA_CACHE_DISABLE": "1"})
        self.result_path = os.path.join(self.child.workdir, RESULT_FILE)
        with open(self.result_path, "wb") as handle:
            handle.truncate(result_bytes(self.shape))
        self.policy = Policy(
            private_dir=self.child.workdir,
            writable_files=(self.result_path,),
            max_file_bytes=result_bytes(self.shape),
            # A GPU driver and a multi-threaded TVM runtime start threads; never processes.
            threads=gpu or config.threads > 1,
            devices=gpu_device_nodes() if gpu else (),
            extra_readable=("/proc/driver/nvidia", "/sys/devices", "/sys/bus/pci", "/proc/self") if gpu else (),
        )
        world.supported()  # probed here, once: the fork inherits the answer
        self.child.start()

    def library_path(self, name: str) -> str:
        return os.path.join(self.child.workdir, name)

    def put(self, name: str, library) -> None:
        """Put a library (an Executable to export, or the path of a built one) where the runner
        loads it as NAME.so (the runner keeps this process's user, so the grading run's owner-only
        umask is no obstacle)."""
        path = self.library_path(f"{name}.so")
        if isinstance(library, (str, os.PathLike)):
            shutil.copyfile(library, path)
        else:
            library.export_library(path)

    # ---- in the runner (the fork) -------------------------------------------------------

    def _main(self, send) -> None:
        entered = enter_world(self.policy)  # first: from here on only what the runner needs exists
        import tvm  # already imported by the evaluator this is a fork of

        from ..problems.workload import random_inputs
        from .bench import interval_ranks, measure_interleaved  # noqa: F401  (imported now: later it may not be readable)
        from .runners import LocalSession

        inputs = random_inputs(self.shape, self.config.seed)  # numpy.random loads lazily: before confining
        interval_ranks(*_rule_key(band_rule(self.problem, self.config, CYCLE)))  # worked out once, off the timing clock
        shifter = StackShifter()  # its callbacks' trampolines are mapped executable: before confining
        # The device too: a GPU driver opens its device files and starts its threads now, before
        # the file system and the system calls close (and before any submitted code is loaded).
        session = LocalSession(self.problem.target)
        session.tensor(inputs["b"]).numpy()
        limit_memory(self.config.evaluate_memory_mb)
        confinement = entered + confine(self.policy)
        send({"kind": "stage", "stage": "ready", "confinement": confinement})
        try:
            self._serve(send, tvm, session, inputs, shifter)
        except ImportError as error:  # compiled code imports nothing: a module of ours could not load, confined
            send({"kind": "internal", "message": f"the confined runner could not import {error.name!r}: {error}"})
            raise

    def _serve(self, send, tvm, session, inputs, shifter) -> None:
        if sys.stdin.readline().strip() != "run":
            return
        # The grader's own libraries first: if they cannot run here, confined, no submission is blamed.
        modules = {}
        for name in TIMED[:-1]:
            modules[name] = tvm.runtime.load_module(f"{name}.so")
            run_once(session, modules[name], self.shape, inputs)
        send({"kind": "stage", "stage": "baseline-ran"})
        modules["candidate"] = tvm.runtime.load_module("candidate.so")
        arrays = run_once(session, modules["candidate"], self.shape, inputs)
        with open(RESULT_FILE, "r+b") as handle:  # neither created nor truncated: written in place
            for array in arrays:
                handle.write(np.ascontiguousarray(array, dtype=np.float32).tobytes())
        send({"kind": "stage", "stage": "ran"})
        request = sys.stdin.readline().split()
        if not request or request[0] != "time":
            return
        steps = parse_steps(request[2] if len(request) > 2 else "", band_rule_bounds(self.config)[1])
        samples = time_rounds(session, modules, self.problem, inputs, self.config, shifter.rounds_at(steps) if steps else None,
                              CYCLE if steps else 1)
        width = int(request[1]) if len(request) > 1 else 0
        if width:  # this core's FMA peak, right after the rounds, under the same load
            samples["peak"] = [best_seconds(session, tvm.runtime.load_module("peak.so"), width, self.config.min_repeat_ms)]
        send({"kind": "timings", **samples})
        send({"kind": "stage", "stage": "timed"})

    # ---- in the evaluator ---------------------------------------------------------------

    def run(self, deadline_s: float) -> list[np.ndarray]:
        """Run the candidate once (both libraries are in place): [output, x, w, b] afterwards.

        Until the baseline and the yardstick have run, a failure is the grader's
        (InfrastructureError): the runner, its confinement or the device does not work here,
        whatever was submitted.
        """
        self._await("ready", deadline_s, "start", infrastructure=True)
        self.child.send_line("run")
        self._await("baseline-ran", deadline_s, "run the baseline and the yardstick", infrastructure=True)
        self._await("ran", deadline_s, "run")
        return read_result(self.result_path, self.shape)

    def time(self, deadline_s: float, peak_width: int = 0, stack_steps: Sequence[int] = ()) -> dict[str, list[float]]:
        """Time baseline, yardstick and candidate in interleaved rounds (and the FMA peak kernel
        in peak.so, for vectors of `peak_width` lanes, unless 0), round i at the stack position
        `stack_steps[i]` (placement.py; none given: all where the runner happens to be)."""
        self.child.send_line(f"time {peak_width} {','.join(str(int(step)) for step in stack_steps)}".rstrip())
        self._await("timed", deadline_s, "be timed")
        return check_timings(self.child.last_message("timings"), self.config, peak=bool(peak_width))

    def _await(self, stage: str, deadline_s: float, doing: str, infrastructure: bool = False) -> None:
        await_stage(self.child, stage, deadline_s, doing, infrastructure)

    def confinement(self) -> str:
        """What the runner applied before it loaded anything compiled, as it reported then."""
        return confinement_reported(self.child)

    def close(self) -> None:
        self.child.close()
