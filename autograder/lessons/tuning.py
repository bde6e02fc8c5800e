"""MetaSchedule's `tune_tir`, fitted to the machine a lesson runs on, and what happened in it.

`tune_tir`'s default builder compiles every candidate in fresh worker processes, and its
default build function first imports `tvm.s_tir.tensor_intrin` (TVMScript for every tensor
intrinsic TVM knows, CUDA's included). On a loaded two-core course machine that import alone
took 20-38 s, past `LocalBuilder`'s 30 s limit, so every trial failed and the search returned
nothing. `tune_tir` imports the same library once more in the kernel (its TuneContext does),
which took minutes in a Jupyter kernel on a busy machine. The lesson's search runs its own
design space, which needs no tensor intrinsic, so it calls `tune_tir`'s own second half,
`ms.tune_tasks`, with a context built without that import (`context`), and `KernelBuilder`
compiles candidates in the kernel with `tvm.tirx.build` (what MetaSchedule's default build does,
less the import): a build takes a fraction of a second. Candidates still run in MetaSchedule's `LocalRunner`, a
killable child process, under a limit fitted to this machine (`fitted_runner_timeout`).

Both record the errors they see, so when trials fail the lesson prints the first builder and
runner error instead of pointing at a log that holds none.

In Jupyter, `tune_tasks` shows its task table (a pandas table) and prints "Total trials: 0" before
the first trial and again after every round, from C++, past Python's logging; `progress_to_log`
sends that table to the search's log instead, and the lesson prints `TuningReport`.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
from tvm.s_tir.meta_schedule.runner import PyRunner

# A trial's run (load the built module, allocate its arguments, time it) is given this many times
# what the same steps took for the unscheduled kernel just before the search, and never less
# than RUNNER_FLOOR_S: a slow candidate is only a few times slower than the unscheduled one, and
# the machine may get busier during the search.
RUNNER_FACTOR = 20
RUNNER_FLOOR_S = 30.0


@derived_object
class KernelBuilder(PyBuilder):
    """Builds each candidate in this process with MetaSchedule's default build and export."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []
        self.built = 0

    def build(self, build_inputs):
        import tvm
        from tvm.s_tir.meta_schedule.builder.local_builder import default_export
        from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

        results = []
        for build_input in build_inputs:
            try:
                module = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(build_input.mod)
                artifact = default_export(tvm.tirx.build(module, build_input.target))
            except Exception as error:  # noqa: BLE001  (a candidate that does not build is a failed trial)
                self.errors.append(f"{type(error).__name__}: {_first_line(error)}")
                results.append(BuilderResult(None, self.errors[-1]))
                continue
            self.built += 1
            results.append(BuilderResult(artifact, None))
        return results


@derived_object
class RecordingRunner(PyRunner):
    """MetaSchedule's LocalRunner, with every run's error kept for the report."""

    def __init__(self, timeout_sec: float) -> None:
        from tvm.s_tir import meta_schedule as ms

        super().__init__()
        self.timeout_sec = timeout_sec
        self.inner = ms.runner.LocalRunner(timeout_sec=timeout_sec)
        self.errors: list[str] = []
        self.ran = 0

    def run(self, runner_inputs):
        futures = self.inner.run(runner_inputs)
        for future in futures:
            result = future.result()
            if result.error_msg:
                self.errors.append(_first_line(result.error_msg, limit=600))
            else:
                self.ran += 1
        return futures


def context(func, target, space=None, strategy=None, work_dir: str | None = None, seed: int = 1):
    """A MetaSchedule TuneContext for `func` on `target` (what `tune_tir` makes for each task), with
    `space` (e.g. `ms.space_generator.ScheduleFn(design_space)`) and `strategy`; its log goes to
    `work_dir`'s files when given.

    `TuneContext.__init__` first imports `tvm.s_tir.tensor_intrin`, TVM's whole library of tensor
    intrinsics: 20 s on an idle course machine, far more under load and inside a Jupyter kernel
    (TVMScript's parser calls `inspect.stack()` for each of its hundreds of functions). Only
    tensorizing schedule rules use it; a design space of our own, the feature extractor and the
    cost model never do. So the context is built with the FFI constructor that `__init__` itself
    calls, without that import.
    """
    from tvm.s_tir.meta_schedule import TuneContext, _ffi_api
    from tvm.s_tir.meta_schedule.logging import get_logger, get_loggers_from_work_dir, get_logging_func
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    logger = get_loggers_from_work_dir(work_dir, ["main"])[0] if work_dir else get_logger(__name__)
    tune = TuneContext.__new__(TuneContext)
    tune.__init_handle_by_constructor__(
        _ffi_api.TuneContext,
        _normalize_mod(func),
        target,
        space,
        strategy,
        "main",
        1,  # threads for feature extraction and the search
        seed,
        get_logging_func(logger),
    )
    _ffi_api.TuneContextInitialize(tune)
    return tune


@contextlib.contextmanager
def progress_to_log():
    """Within it, MetaSchedule's task table and running totals go to the search's log (work_dir's
    files) instead of the notebook.

    Its C++ task scheduler asks `s_tir.meta_schedule.using_ipython` whether it runs in Jupyter; if
    so it displays the table and writes "Total trials: N" to the process's stdout (which the
    kernel shows), else it logs both. That function, held by C++ once looked up, asks
    `get_ipython()`, a builtin IPython adds; a module-level `get_ipython` that returns None
    shadows it for MetaSchedule's module alone, for the duration.
    """
    from tvm.s_tir.meta_schedule import utils

    had = "get_ipython" in vars(utils)
    saved = vars(utils).get("get_ipython")
    utils.get_ipython = lambda: None
    try:
        yield
    finally:
        if had:
            utils.get_ipython = saved
        else:
            del utils.get_ipython


def _first_line(error, limit: int = 400) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    informative = [line for line in lines if line.startswith(("Error message:", "TimeoutError", "LocalRunner:"))]
    text = " ".join(lines[:2]) if not informative else " ".join(informative[:2])
    return text[:limit]


def fitted_runner_timeout(func, target, device, arguments) -> tuple[float, float]:
    """(limit, measured): seconds a trial's run may take here, and what exporting, loading and
    running the unscheduled `func` took just now (what every trial's run does)."""
    import os
    import tempfile

    import tvm
    from tvm.support.tar import tar

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "unscheduled.tar")
        tvm.compile(func, target).mod.export_library(path, fcompile=tar)
        loaded = tvm.runtime.load_module(path)
        loaded["main"](*arguments)
    measured = time.monotonic() - started
    return max(RUNNER_FLOOR_S, RUNNER_FACTOR * measured), measured


@dataclass
class TuningReport:
    """What one `tune_tir` call did: trials asked for, built, run, the first errors, the time."""

    trials: int
    seconds: float
    built: int
    ran: int
    build_errors: list[str] = field(default_factory=list)
    run_errors: list[str] = field(default_factory=list)
    found: bool = False

    @classmethod
    def of(cls, trials: int, seconds: float, builder: KernelBuilder, runner: RecordingRunner, found: bool) -> "TuningReport":
        return cls(trials, seconds, builder.built, runner.ran, list(builder.errors), list(runner.errors), found)

    def __str__(self) -> str:
        lines = [f"MetaSchedule's search: {self.trials} trials asked for, {self.built} built, {self.ran} ran, in {self.seconds:.0f} s."]
        if self.found:
            lines.append("It found a schedule: the table below times it.")
        else:
            lines.append("It found no schedule: no trial both built and ran, so there is nothing to time from it.")
        if self.build_errors:
            lines.append(f"{len(self.build_errors)} builds failed; the first: {self.build_errors[0]}")
        if self.run_errors:
            lines.append(f"{len(self.run_errors)} runs failed; the first: {self.run_errors[0]}")
        return "\n".join(lines)

    __repr__ = __str__
