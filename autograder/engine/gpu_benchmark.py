"""The GPU benchmark's half that runs here: GPU schedules compiled to CUDA, written out as files
that a machine with a GPU and no TVM can time (`gpu_kernel_timer.py`, copied beside them).

    python -m autograder.engine.gpu_benchmark export build/gpu-benchmark
    # then, on the GPU machine (CuPy, numpy; no TVM, no course package):
    python build/gpu-benchmark/time_kernels.py

`export` compiles each schedule as the grader does for CUDA (`tvm.compile` with a CUDA target: no
GPU needed), and writes for each its CUDA source (`NAME.cu`, from the device module's
`inspect_source()`), its PTX where `nvcc` is on PATH (`NAME.ptx`, for sm_90), and into `plan.json`
the launches the host code makes, in order (kernel, grid, block, arguments), with the buffers
they pass (the function's four tensors by role, host allocations between kernels as scratch),
read off the same lowering the OpenCL runner reads (engine/opencl.py). By default it exports the
problem's yardstick and the reference solution (course/solutions/gpu_bound.py, the instructor's
edition only); `--schedule NAME=FILE` adds any file defining `schedule(sch)`. The files are
trusted code: the instructor's, never a student's (those go through the grader's sandbox).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

from ..problems import get_problem
from ..problems.variants import JOURNAL, VARIANTS, Variant
from ..errors import TvmCourseError

PROBLEM = "gpu-fused-conv"
PLAN_FILE = "plan.json"
PLAN_FORMAT = "tvm-course-gpu-benchmark/1"
TIMER_FILE = "time_kernels.py"
YARDSTICK = "yardstick"
REFERENCE = "reference"
REFERENCE_FILE = Path(__file__).resolve().parents[2] / "course" / "solutions" / "gpu_bound.py"
PTX_ARCH = "sm_90"


class ExportError(ValueError, TvmCourseError):
    """A schedule cannot be exported for timing; the message says which and why."""


def schedule_from_file(path: str | Path) -> Callable:
    """`schedule(sch)` from a trusted file (the instructor's)."""
    path = Path(path)
    namespace: dict = {"__name__": "gpu_benchmark_schedule"}
    try:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    except OSError as error:
        raise ExportError(f"cannot read {path}: {error.strerror}") from None
    if not callable(namespace.get("schedule")):
        raise ExportError(f"{path} defines no schedule(sch)")
    return namespace["schedule"]


def default_schedules() -> dict[str, Callable]:
    """The yardstick and, in the instructor's edition, the reference solution."""
    problem = get_problem(PROBLEM)
    schedules = {YARDSTICK: problem.apply_yardstick}
    if REFERENCE_FILE.is_file():
        schedules[REFERENCE] = schedule_from_file(REFERENCE_FILE)
    return schedules


def compiled_schedule(schedule: Callable, variant: Variant = JOURNAL) -> dict:
    """One schedule on `variant`'s workload, compiled for CUDA: its source and its launch plan."""
    import tvm
    from tvm import s_tir

    from . import opencl
    from .checks import check_binding

    problem = get_problem(PROBLEM).with_shape(variant.shape)
    sch = s_tir.Schedule(problem.workload())
    schedule(sch)
    binding = check_binding(sch)
    if not binding.passed:
        raise ExportError(binding.message)
    mod = tvm.IRModule({"main": sch.mod["main"]})
    target = tvm.target.Target({"kind": "cuda", "arch": PTX_ARCH}, host="llvm")
    source = tvm.compile(mod, target=target).mod.imports[0].inspect_source()
    if "extern __shared__" in source:
        raise ExportError("the schedule uses dynamic shared memory (shared.dyn), whose size this benchmark "
                          "does not pass at launch: use 'shared'")
    # The launches the CUDA build's host code makes, read off its lowering as the OpenCL runner
    # reads its own (engine/opencl.py).
    host_mod, _ = opencl._lower(mod, target)
    launches, buffers = opencl._host_plan(host_mod["main"], mod["main"])
    return {
        "source": source,
        "buffers": [{"name": b.name, "dtype": b.dtype, "elements": b.elements, "role": b.role} for b in buffers],
        "launches": [{"kernel": launch.kernel, "grid": list(launch.groups), "block": list(launch.local),
                      "args": [list(a) for a in launch.args]} for launch in launches],
    }


def ptx(source: str) -> str | None:
    """The source compiled to PTX for PTX_ARCH by nvcc, where nvcc is on PATH (else None)."""
    if shutil.which("nvcc") is None:
        return None
    import tvm
    from tvm.support import nvcc

    with tvm.target.Target({"kind": "cuda", "arch": PTX_ARCH}):
        text = nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")
    return bytes(text).decode() if isinstance(text, (bytes, bytearray)) else text


def export(directory: str | Path, schedules: dict[str, Callable] | None = None, variant: Variant = JOURNAL,
           seed: int = 0, with_ptx: bool = True) -> Path:
    """Write every schedule's kernels and launches, and the timer, into `directory`; its plan."""
    directory = Path(directory)
    schedules = default_schedules() if schedules is None else schedules
    if YARDSTICK not in schedules:
        raise ExportError(f"the schedules must include the yardstick, named {YARDSTICK!r}: speed is measured against it")
    problem = get_problem(PROBLEM).with_shape(variant.shape)
    directory.mkdir(parents=True, exist_ok=True)
    plan: dict[str, Any] = {
        "format": PLAN_FORMAT, "problem": PROBLEM, "seed": seed,
        "shape": {"input": list(problem.shape.input_shape), "weight": list(problem.shape.weight_shape),
                  "bias": list(problem.shape.bias_shape), "output": list(problem.shape.output_shape),
                  "padding": problem.shape.padding},
        "rtol": problem.rtol, "atol": problem.atol,
        "bands": [[band.min_speedup, band.credit] for band in problem.speed_bands],
        "yardstick": YARDSTICK, "schedules": {},
    }
    for name, schedule in schedules.items():
        if not name.replace("-", "_").isidentifier():
            raise ExportError(f"schedule name {name!r}: letters, digits, - and _ only")
        try:
            compiled = compiled_schedule(schedule, variant)
        except ExportError as error:
            raise ExportError(f"{name}: {error}") from None
        (directory / f"{name}.cu").write_text(compiled.pop("source"), encoding="utf-8")
        entry = {"source": f"{name}.cu", **compiled}
        if with_ptx:
            text = ptx((directory / f"{name}.cu").read_text(encoding="utf-8"))
            if text is not None:
                (directory / f"{name}.ptx").write_text(text, encoding="utf-8")
                entry["ptx"] = f"{name}.ptx"
                entry["ptx_arch"] = PTX_ARCH
        plan["schedules"][name] = entry
    (directory / PLAN_FILE).write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("gpu_kernel_timer.py"), directory / TIMER_FILE)
    return directory


def _variant(text: str) -> Variant:
    if text == "journal":
        return JOURNAL
    for variant in VARIANTS:
        if f"{variant.height}x{variant.width}x{variant.out_channels}" == text:
            return variant
    raise argparse.ArgumentTypeError(f"{text!r} is neither 'journal' nor HEIGHTxWIDTHxCHANNELS of a variant")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.engine.gpu_benchmark",
                                     description="Compile GPU schedules to CUDA here, for timing on a GPU machine without TVM.")
    commands = parser.add_subparsers(dest="command", required=True)
    out = commands.add_parser("export", help="write kernels, launches and the timer into DIRECTORY")
    out.add_argument("directory")
    out.add_argument("--schedule", action="append", default=[], metavar="NAME=FILE",
                     help="also export FILE's schedule(sch) under NAME (repeatable)")
    out.add_argument("--variant", type=_variant, default=JOURNAL, help="journal (default) or HEIGHTxWIDTHxCHANNELS")
    out.add_argument("--no-ptx", action="store_true", help="write CUDA source only")
    args = parser.parse_args(argv)
    schedules = default_schedules()
    for item in args.schedule:
        name, _, path = item.partition("=")
        if not name or not path:
            parser.error(f"--schedule {item!r}: expected NAME=FILE")
        try:
            schedules[name] = schedule_from_file(path)
        except ExportError as error:
            parser.error(str(error))
    try:
        directory = export(args.directory, schedules, args.variant, with_ptx=not args.no_ptx)
    except ExportError as error:
        print(f"gpu_benchmark export: {error}", file=sys.stderr)
        return 2
    plan = json.loads((directory / PLAN_FILE).read_text(encoding="utf-8"))
    for name, entry in plan["schedules"].items():
        launches = ", ".join(f"{launch['kernel']} {math.prod(launch['grid'])}x{math.prod(launch['block'])}" for launch in entry["launches"])
        print(f"{name}: {launches}{' (+ PTX)' if 'ptx' in entry else ''}")
    print(f"wrote {directory}; on a GPU machine: python {directory / TIMER_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
