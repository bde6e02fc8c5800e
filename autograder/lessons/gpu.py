"""CUDA builds that work without a GPU, and timing only where one exists.

`tvm.compile` for a CUDA target produces CUDA C source on any machine; loading and running the
kernel needs the CUDA driver and a GPU. A schedule whose loops are not bound to GPU threads
raises nothing: TVM quietly compiles it for the host CPU, with no device module at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

CUDA_ARCH = "sm_90"


def cuda_target():
    """A CUDA target (Hopper) for compiling; needs no GPU on this machine."""
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": CUDA_ARCH})


def has_device_code(executable) -> bool:
    """True when the build carries a device (CUDA) module; False when it all ran on the host."""
    return len(executable.mod.imports) > 0


def kernel_source(executable) -> str:
    """The CUDA C source of the device module."""
    if not has_device_code(executable):
        raise ValueError("this build has no device module: its loops were never bound to GPU threads")
    return executable.mod.imports[0].inspect_source()


def kernels_only(source: str) -> str:
    """The `__global__` kernel definitions, without TVM's header of macros and includes."""
    lines = source.splitlines()
    definitions = [i for i, line in enumerate(lines) if "__global__" in line and line.rstrip().endswith("{")]
    if not definitions:
        raise ValueError("no __global__ kernel definition in the source")
    return "\n".join(lines[definitions[0] :]).strip()


def source_facts(source: str) -> dict[str, object]:
    """Counts a reader checks first in a kernel: kernels, shared arrays and their bytes, barriers."""
    shared = re.findall(r"__shared__[^;]*?float\s+(\w+)\[(\d+)\]", source)
    return {
        "kernels": len(re.findall(r"__global__[^;{]*\{", source)),
        "shared arrays": [name for name, _ in shared],
        "shared bytes per block": sum(4 * int(n) for _, n in shared),
        "__syncthreads() calls": source.count("__syncthreads()"),
        "threads per block, by kernel": dict(
            (name, int(threads)) for threads, name in re.findall(r"__launch_bounds__\((\d+)\)\s+(\w+)\([^;]*?\{", source)
        ),
    }


_FOR = re.compile(r"^\s*for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) \{\s*$")


def _kernel_name(line: str) -> str | None:
    """The kernel a line defines (`... __global__ ... name(params) {`), else None."""
    if "__global__" not in line or not line.rstrip().endswith("{"):
        return None
    names = [n for n in re.findall(r"(\w+)\(", line) if n != "__launch_bounds__"]
    return names[-1] if names else None


def barriers_per_thread(source: str) -> dict[str, int]:
    """How many `__syncthreads()` each thread of each kernel executes: every barrier counted once
    per iteration of the loops around it (read from TVM's CUDA source, whose loops have the form
    `for (int i = 0; i < N; ++i) {`; a loop of another form, or a branch, counts once)."""
    counts: dict[str, int] = {}
    name, stack = None, []
    for line in source.splitlines():
        if name is None:
            name = _kernel_name(line)
            if name is not None:
                stack, counts[name] = [1], 0
            continue
        if "__syncthreads()" in line:
            multiplier = 1
            for factor in stack:
                multiplier *= factor
            counts[name] += line.count("__syncthreads()") * multiplier
        loop = _FOR.match(line)
        if loop:
            stack.append(int(loop.group(2)))
            continue
        for char in line:
            if char == "{":
                stack.append(1)
            elif char == "}":
                stack.pop()
        if not stack:
            name = None
    return counts


def kernel_facts(source: str) -> dict[str, int]:
    """Threads per block, shared bytes per block and barriers each thread executes, for a source
    with exactly one kernel (what lesson 3's first exercise asks to predict)."""
    facts = source_facts(source)
    if facts["kernels"] != 1:
        raise ValueError(f"expected one kernel, found {facts['kernels']}")
    (threads,) = facts["threads per block, by kernel"].values()
    (barriers,) = barriers_per_thread(source).values()
    return {"threads per block": threads, "shared bytes per block": facts["shared bytes per block"],
            "barriers per thread": barriers}


def device_functions(mod, target) -> dict:
    """The kernels of a scheduled module after TVM's s_tir lowering (name -> PrimFunc), before
    code generation: what `verify_gpu_code` inspects."""
    import tvm
    from tvm import tirx

    host = target if target.host is not None else tvm.target.Target(target, host="llvm")
    lowered = tvm.tirx.get_tir_pipeline("s_tir")[0](tirx.transform.BindTarget(host)(mod))
    kernels = {}
    for global_var, func in lowered.functions.items():
        func_target = func.attrs.get("target") if func.attrs is not None else None
        if isinstance(func, tirx.PrimFunc) and func_target is not None and func_target.kind.name == "cuda":
            kernels[global_var.name_hint] = func
    return kernels


def gpu_code_violations(mod, target, limits: dict) -> list[str]:
    """What TVM's `VerifyGPUCode` pass reports for the module's kernels under `limits` (empty: none).

    `tvm.s_tir.analysis.verify_gpu_code(func, limits)` answers True or False; the pass of the same
    name (`s_tir.transform.VerifyGPUCode`, registered in src/s_tir/analysis/verify_gpu_code.cc)
    raises with one line per violated limit, which this returns.
    """
    import tvm

    kernels = tvm.IRModule(device_functions(mod, target))
    try:
        tvm.get_global_func("s_tir.transform.VerifyGPUCode")(limits)(kernels)
    except Exception as error:  # noqa: BLE001  (TVM raises a RuntimeError listing the violations)
        text = str(error)
        body = text.split("GPU constraint(s) violated:", 1)[-1].split("In function", 1)[0]
        return [line.strip() for line in body.splitlines() if line.strip()]
    return []


@dataclass(frozen=True)
class MatmulData:
    """Inputs of relu(x @ w + b) for a PrimFunc of that shape, and the float64 answer; placed on
    any device, with the interface `time_on_gpu` expects (as `WorkloadData` for the conv)."""

    inputs: tuple  # x, w, b as numpy arrays
    output_shape: tuple
    expected: np.ndarray

    @classmethod
    def make(cls, func, seed: int = 0) -> "MatmulData":
        rng = np.random.default_rng(seed)
        shapes = [tuple(int(d) for d in p.shape) for p in func.params]  # x, w, b, output
        x, w, b = (rng.standard_normal(s, dtype=np.float32) for s in shapes[:3])
        expected = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0.0)
        return cls((x, w, b), shapes[3], expected)

    def primfunc_arguments(self, device) -> list:
        import tvm

        return [tvm.runtime.tensor(a, device) for a in self.inputs] + [tvm.runtime.empty(self.output_shape, "float32", device)]

    def max_error(self, output) -> float:
        values = output.numpy() if hasattr(output, "numpy") else np.asarray(output)
        return float(np.max(np.abs(values.astype(np.float64) - self.expected)))

    def is_correct(self, output) -> bool:
        values = output.numpy() if hasattr(output, "numpy") else np.asarray(output)
        return bool(np.allclose(values, self.expected, rtol=1e-4, atol=1e-3))


def timing_report(executable, data) -> str:
    """The kernel's time on this machine's GPU, or a plain statement that there is none."""
    from .session import cuda_device_name

    seconds = time_on_gpu(executable, data) if executable is not None else None
    if seconds is None:
        return (
            "No CUDA GPU on this machine (tvm.cuda(0).exist is False): the kernels above were compiled "
            "to CUDA source, not run, and no GPU time is shown."
        )
    return f"On {cuda_device_name()}: {seconds * 1e3:.3f} ms per run (median; output checked against the reference)."


def timing_table(runs: dict):
    """Each kernel's GPU time (name -> (executable, data)), outputs checked, as a Table; where
    there is no GPU, the table says so and times nothing."""
    from .session import cuda_device_name
    from .tables import Table

    if cuda_device_name() is None:
        return Table.of(("kernel", "median time per run"), [(name, "not run") for name in runs],
                        "GPU timings", note=timing_report(None, None))
    rows = [(name, f"{time_on_gpu(executable, data) * 1e3:.4f} ms") for name, (executable, data) in runs.items()]
    return Table.of(("kernel", "median time per run"), rows, f"On {cuda_device_name()}, outputs checked against the reference")


def time_on_gpu(executable, data, rounds: int = 7) -> float | None:
    """Median seconds per run on CUDA device 0, output checked; None where there is no GPU."""
    from .session import cuda_device_name

    if cuda_device_name() is None:
        return None
    import numpy as np
    import tvm

    device = tvm.cuda(0)
    arguments = data.primfunc_arguments(device)
    executable["main"](*arguments)
    device.sync()
    if not data.is_correct(arguments[-1]):
        raise AssertionError(f"the GPU output is wrong: max error {data.max_error(arguments[-1]):.3g}")
    evaluator = executable.mod.time_evaluator("main", device, number=1, repeat=rounds, min_repeat_ms=20)
    return float(np.median(evaluator(*arguments).results))


# ---- Kernels run without a GPU: the autograder's OpenCL device -------------------------------

@dataclass(frozen=True)
class KernelRun:
    """One schedule's kernels run on the OpenCL device, outputs checked as the grader checks them."""

    device: str
    launches: int
    correct: bool  # with thread ids numbered forwards and backwards alike
    detail: str  # the max error, or where the first wrong output is


def run_on_opencl(mod, seed: int = 0) -> KernelRun:
    """Run a scheduled fused conv's kernels (an IRModule with `main`, at the course's journal
    shape) the way the autograder does where no GPU is reachable: lowered for OpenCL with the
    CUDA limits, run on PoCL's CPU device in a confined process beside the GPU yardstick, outputs
    NaN-filled first and compared with the float64 reference, thread ids numbered both ways."""
    import tvm

    from ..engine import opencl
    from ..engine.config import GraderConfig
    from ..problems import get_problem
    from ..problems.workload import random_inputs, reference
    from tvm import s_tir

    problem = get_problem("gpu-fused-conv")
    yardstick = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(yardstick)
    programs = [opencl.build_program(tvm.IRModule({"main": m["main"]}), "llvm") for m in (yardstick.mod, mod)]
    runner = opencl.OpenCLRunner(problem.shape, GraderConfig(seed=seed))
    try:
        device = runner.device(120.0)
        runs = runner.run(*programs, 120.0)
    finally:
        runner.close()
    inputs = random_inputs(problem.shape, seed)
    expected = reference(inputs["x"], inputs["w"], inputs["b"], problem.shape.padding)
    allowed = problem.atol + problem.rtol * np.abs(expected)
    for run in ("candidate", "candidate-reversed"):
        output = runs[run][0]
        wrong = ~(np.abs(output - expected) <= allowed)
        if wrong.any():
            where = tuple(int(i) for i in np.argwhere(wrong)[0])
            order = "" if run == "candidate" else " with thread ids numbered backwards"
            return KernelRun(device, len(programs[1].launches), False,
                             f"{int(wrong.sum())} wrong outputs{order}; the first at {where}: got {output[where]:.4g}, expected {expected[where]:.4g}")
    error = float(np.abs(runs["candidate"][0] - expected).max())
    return KernelRun(device, len(programs[1].launches), True, f"max abs error {error:.2g}")


def opencl_table(modules: dict):
    """Each schedule's kernels (name -> IRModule) run on the OpenCL device, as a Table."""
    from .tables import Table

    from ..engine.measure import InfrastructureError

    rows, device = [], "the OpenCL device"
    for name, mod in modules.items():
        try:
            run = run_on_opencl(mod)
        except InfrastructureError as error:
            # No device here builds kernels (PyPI's PoCL on a CPU newer than its LLVM, say): the
            # lesson says what it could not run, and why, and goes on.
            return Table.of(("schedule", "kernel launches", "correct", "detail"),
                            [(name, "-", "not run here", "no OpenCL device on this machine could build a kernel")
                             for name in modules],
                            "Not run: no OpenCL device here builds kernels", note=str(error))
        device = run.device
        rows.append((name, run.launches, "yes, both thread orders" if run.correct else "NO", run.detail))
    return Table.of(("schedule", "kernel launches", "correct", "detail"), rows, f"Run on {device}, without a GPU",
                    note="What this proves: the indexing, the binding to blocks and threads, the staging and the "
                         "barriers. What it does not: CUDA's own code generation, warps, and anything about time.")


# ---- What a GPU schedule costs, counted on its lowering (no GPU, no timing) -------------------

@dataclass(frozen=True)
class CountedCosts:
    """What a GPU schedule of the fused conv costs, read off its lowered kernels: memory
    operations as the kernels issue them (before any cache), per output element of the
    function; the conv kernel's (the one that writes the output) block shape, shared memory,
    barriers and work per thread. Counts, not times: what lesson 3's reasoning says a GPU's
    speed depends on. How much faster a schedule with fewer of them runs, only a GPU says."""

    kernels: int
    global_bytes_per_output: float  # loads and stores of global memory, every kernel, per output
    shared_bytes_per_block: int
    barriers_per_thread: int
    threads_per_block: int
    blocks: int
    outputs_per_thread: float
    multiply_adds_per_thread: float

    ROWS = (
        ("kernels launched", "kernels", "{:d}"),
        ("global memory loads + stores per output (bytes, before caches)", "global_bytes_per_output", "{:.1f}"),
        ("shared memory per block (bytes)", "shared_bytes_per_block", "{:d}"),
        ("barriers (__syncthreads) per thread", "barriers_per_thread", "{:d}"),
        ("threads per block", "threads_per_block", "{:d}"),
        ("thread blocks", "blocks", "{:d}"),
        ("outputs per thread", "outputs_per_thread", "{:g}"),
        ("multiply-adds per thread", "multiply_adds_per_thread", "{:g}"),
    )


def counted_costs(mod) -> CountedCosts:
    """The counted costs of a scheduled fused conv (an IRModule or Schedule's `mod` with `main`,
    every block bound): from its lowering for a GPU (engine.opencl.build_program, the lowering
    the autograder runs) and, for the barriers, its CUDA source."""
    import math

    import tvm

    from ..engine import opencl

    main = mod["main"]
    program = opencl.build_program(tvm.IRModule({"main": main}), "llvm")
    output = next(b.name for b in program.buffers if b.role == "output")
    writer = next(launch.kernel for launch in program.launches if ("buffer", output) in launch.args)
    conv = next(s for s in program.stats if s.kernel == writer)
    output_shape = [int(d) for d in main.params[3].shape]
    weight_shape = [int(d) for d in main.params[1].shape]  # out channels, in channels, kernel, kernel
    outputs = math.prod(output_shape)
    threads = conv.launches * conv.blocks * conv.threads_per_block
    per_output_work = math.prod(weight_shape[1:])
    barriers = barriers_per_thread(kernel_source(tvm.compile(tvm.IRModule({"main": main}), target=cuda_target())))
    moved = sum(s.global_read_bytes + s.global_write_bytes for s in program.stats)
    return CountedCosts(
        kernels=len(program.stats), global_bytes_per_output=moved / outputs,
        shared_bytes_per_block=conv.shared_bytes, barriers_per_thread=barriers.get(writer, 0),
        threads_per_block=conv.threads_per_block, blocks=conv.blocks * conv.launches,
        outputs_per_thread=outputs / threads, multiply_adds_per_thread=outputs * per_output_work / threads,
    )


COSTS_NOTE = (
    "Counted on the lowered kernels, not timed. Global memory is counted as the kernels issue it, "
    "before the GPU's caches catch repeated reads (so a schedule that reads a value from global memory "
    "9 times is charged 9 times); shared memory and barriers are the conv kernel's. What lesson 3 says "
    "makes a GPU kernel fast is fewer global loads, shared memory only for what several threads read, "
    "few barriers, and enough work per thread to hide the rest. How much faster that is on a GPU, only "
    "a GPU says: the speed points are measured there, against the yardstick."
)


def costs_table(modules: dict, title: str = "Counted costs, from the lowered kernels"):
    """The counted costs of each schedule (name -> its IRModule), side by side, as a Table."""
    from .tables import Table

    costs = {name: counted_costs(mod) for name, mod in modules.items()}
    rows = [(label, *(fmt.format(getattr(c, attr)) for c in costs.values())) for label, attr, fmt in CountedCosts.ROWS]
    return Table.of(("", *costs), rows, title, note=COSTS_NOTE)


def costs_beside_yardstick(schedule, variant=None, name: str = "your schedule"):
    """Your schedule's counted costs beside the gpu-fused-conv yardstick's, on your variant's
    workload (the journal's without one): what the gpu-tiling notebook shows. A schedule that
    raises, or leaves a block unbound, gets a sentence saying so instead of numbers."""
    from tvm import s_tir

    from ..engine.checks import check_binding
    from ..problems import get_problem

    problem = get_problem("gpu-fused-conv")
    if variant is not None:
        problem = problem.with_shape(variant.shape)
    yardstick = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(yardstick)
    mine = s_tir.Schedule(problem.workload())
    try:
        schedule(mine)
    except Exception as error:  # noqa: BLE001  (a student's schedule may raise anything)
        return _costs_unavailable(yardstick, f"your schedule raised {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
    binding = check_binding(mine)
    if not binding.passed:
        return _costs_unavailable(yardstick, binding.message)
    try:
        return costs_table({"yardstick (one thread per pixel)": yardstick.mod, name: mine.mod})
    except Exception as error:  # noqa: BLE001  (TVM may refuse to lower what it scheduled)
        return _costs_unavailable(yardstick, f"TVM could not lower it for a GPU: {type(error).__name__}")


def _costs_unavailable(yardstick, why: str):
    from .tables import Table

    table = costs_table({"yardstick (one thread per pixel)": yardstick.mod})
    return Table.of(table.columns, table.rows, "Counted costs: the yardstick's only", note=f"Your schedule is not counted: {why}")
