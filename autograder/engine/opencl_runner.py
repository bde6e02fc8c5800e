"""Child process: runs a GPU schedule's kernels on an OpenCL device (PoCL, or Oclgrind, on the CPU), confined.

Usage (by the evaluator only, through OpenCLRunner): python -m autograder.engine.opencl_runner FD
RESULT_BYTES, then on stdin one JSON line {"shape": ConvShape spec, "seed": N} once yardstick.json
is in this process's directory, and one more line once candidate.json is (each an
engine/opencl.py KernelProgram). This process never imports TVM.

In order: its own namespaces (world.py) first thing; a device chosen by building and running a
probe kernel on each in turn (opencl_device.py: a device that lists itself may build nothing);
every program built from
its OpenCL C (PoCL's compiler runs in this process and links each kernel with /usr/bin/ld: the
only time anything is executed, before confinement, on source TVM generated from a validated
trace) with work-group specialisation off, so that no launch needs the linker again; then
confinement (no exec, no files but its own directory and the result file); then the
yardstick's launches (the grader's own: if they fail, the grader is at fault), then the
candidate's twice, work-item and work-group ids numbered forwards and then backwards. PoCL runs
a work-group's work-items one after another between barriers, so a race between threads (a
read of shared memory before the barrier that should precede it) shows in one order or the
other. Each run's output (NaN-filled first, as are the buffers between kernels) and inputs
as they were afterwards go into the result file, which the evaluator reads as data.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from .opencl_device import DEVICES_ENV, NoWorkingDevice, choose, describe

RESULT_FILE = "result.f32"
# Ids numbered backwards: a macro may name the builtin it replaces (C does not expand it again).
REVERSED_IDS = (
    "#define get_local_id(d) (get_local_size(d) - 1 - get_local_id(d))\n"
    "#define get_group_id(d) (get_num_groups(d) - 1 - get_group_id(d))\n"
)
RUNS = ("yardstick", "candidate", "candidate-reversed")  # the order of the result file
# What PoCL's kernel build executes, and reads besides the system's libraries.
LINKER = "/usr/bin/ld"


# The grader's own switches for the OpenCL implementations (the instructor's environment, not the
# student's): which devices to try, PoCL's and Oclgrind's settings, the ICD loader's registry.
PASSED_THROUGH = ("POCL_", "OCLGRIND_", "OCL_ICD_", DEVICES_ENV)
# Where the system's ICD loader registry lives, and where a system PoCL keeps its kernel headers.
ICD_REGISTRY = "/etc/OpenCL/vendors"


def environment(workdir: str) -> dict[str, str]:
    """What the runner's OpenCL is told (set by the evaluator, before the runner starts)."""
    given = {key: value for key, value in os.environ.items() if key.startswith(PASSED_THROUGH)}
    return {
        **given,
        "POCL_CACHE_DIR": os.path.join(workdir, "pocl-cache"),  # its own, removed with it
        "POCL_WORK_GROUP_SPECIALIZATION": "0",  # one build a kernel, at build time: no linking later
        "POCL_MAX_PTHREAD_COUNT": "1",  # one core, work-groups in order: repeatable, and kind to the machine
        "PYOPENCL_NO_CACHE": "1",
        "POCL_DEBUG": "0",
    }


def system_icd_paths(registry: str = ICD_REGISTRY) -> tuple[str, ...]:
    """The system's ICD registry and what a registered PoCL reads besides its library (its
    kernel headers in PREFIX/share/pocl): without them a system PoCL (Debian's, whose LLVM knows
    newer CPUs than PyPI's) is invisible in the runner's world, or fails with '1 error generated'."""
    if not os.path.isdir(registry):
        return ()
    paths = [registry]
    for name in sorted(os.listdir(registry)):
        try:
            with open(os.path.join(registry, name), encoding="utf-8", errors="replace") as handle:
                library = handle.readline().strip()
        except OSError:
            continue
        folder = os.path.dirname(os.path.realpath(library)) if os.path.isabs(library) else "/usr/lib"
        for up in (folder, os.path.dirname(folder), os.path.dirname(os.path.dirname(folder))):
            share = os.path.join(up, "share", "pocl") if up != "/" else ""
            if share and os.path.isdir(share):
                paths.append(share)
                break
    return tuple(dict.fromkeys(paths))


def linker_paths() -> tuple[str, ...]:
    """The linker and what it resolves to (the world binds real paths)."""
    if not os.path.exists(LINKER):
        return ()
    return tuple(dict.fromkeys((LINKER, os.path.realpath(LINKER))))


def main(argv: list[str]) -> None:
    from .confine import Policy, confine, enter_world
    from .sandbox import limit_memory, open_channel

    send = open_channel(argv[0])
    result_bytes = int(argv[1])
    workdir = os.getcwd()
    policy = Policy(private_dir=workdir, writable_files=(os.path.join(workdir, RESULT_FILE),),
                    max_file_bytes=result_bytes, threads=True, extra_readable=linker_paths() + system_icd_paths())
    entered = enter_world(policy)
    import numpy as np

    try:
        import pyopencl as cl

        device, trials = choose(cl, os.environ.get(DEVICES_ENV))
        context = cl.Context([device])
    except NoWorkingDevice as error:
        send({"kind": "internal", "message": str(error)})
        return
    except Exception as error:  # no pyopencl, or an ICD loader without vendors
        send({"kind": "internal", "message": f"no OpenCL device here: {_last_line(error)}"})
        return
    queue = cl.CommandQueue(context)
    send({"kind": "stage", "stage": "started", "device": describe(device, trials)})
    # First the yardstick (known before any submission is: built while the evaluator compiles),
    # then the candidate.
    request = json.loads(sys.stdin.readline() or "{}")
    from ..problems.workload import ConvShape, random_inputs

    shape = ConvShape.from_spec(request["shape"])
    inputs = random_inputs(shape, int(request["seed"]))
    plans: dict[str, dict] = {}
    built: dict[str, Any] = {}  # pyopencl's programs
    for step, runs in enumerate((RUNS[:1], RUNS[1:])):
        if step:
            sys.stdin.readline()  # the candidate's program is in place
        for run in runs:
            name = run.split("-")[0]
            plans.setdefault(name, _read_plan(name))
            try:
                built[run] = cl.Program(context, (REVERSED_IDS if run.endswith("reversed") else "") + plans[name]["source"]).build()
                # Asking for the binary makes PoCL compile and link every kernel's work-group
                # function now (its generic one, for any work-group size), not at the first launch.
                built[run].get_info(cl.program_info.BINARIES)
            except Exception as error:
                send({"kind": "build-failed", "program": name, "log": _last_lines(error)})
                return
            send({"kind": "stage", "stage": f"{run}-built"})
    prepared = {run: _Run(cl, np, context, queue, built[run], plans[run.split("-")[0]], inputs) for run in RUNS}
    limit_memory(2048)
    confinement = entered + confine(policy)
    send({"kind": "stage", "stage": "ready", "confinement": confinement})
    with open(RESULT_FILE, "r+b") as results:  # neither created nor truncated: written in place
        for run in RUNS:
            for array in prepared[run].run():
                results.write(np.ascontiguousarray(array, dtype=np.float32).tobytes())
            results.flush()
            send({"kind": "stage", "stage": f"{run}-ran"})


def _read_plan(name: str) -> dict:
    with open(f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)


class _Run:
    """One program's buffers and launches, ready before confinement; run() only enqueues."""

    def __init__(self, cl, np, context, queue, program, plan: dict, inputs: dict) -> None:
        self.cl, self.np, self.queue = cl, np, queue
        flags = cl.mem_flags
        self.buffers, self.fill, self.roles = {}, {}, {}
        for spec in plan["buffers"]:
            name, role = spec["name"], spec["role"]
            self.roles[role if role != "scratch" else name] = name
            host = np.ascontiguousarray(inputs[role], dtype=np.float32).ravel() if role in ("x", "w", "b") \
                else np.full(int(spec["elements"]), np.nan, dtype=np.float32)
            self.fill[name] = host
            self.buffers[name] = cl.Buffer(context, flags.READ_WRITE, max(4, host.nbytes))
        kernels = {name: cl.Kernel(program, name) for name in dict.fromkeys(launch["kernel"] for launch in plan["launches"])}
        self.launches = []
        for launch in plan["launches"]:
            kernel = kernels[launch["kernel"]]
            args = [self.buffers[arg[1]] if arg[0] == "buffer" else np.dtype(arg[1]).type(arg[2]) for arg in launch["args"]]
            local = tuple(int(n) for n in launch["local"])
            groups = tuple(int(n) for n in launch["groups"])
            self.launches.append((kernel, args, tuple(g * size for g, size in zip(groups, local)), local))
        self.shapes = {role: inputs[role].shape for role in ("x", "w", "b")}

    def run(self) -> list:
        """[output, x, w, b] after one call: every buffer refilled first (inputs as given, the
        rest NaN), the launches in host order, then the device's copy read back."""
        cl, np = self.cl, self.np
        for name, host in self.fill.items():
            cl.enqueue_copy(self.queue, self.buffers[name], host)
        for kernel, args, global_size, local_size in self.launches:
            kernel.set_args(*args)
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
        arrays = []
        for role in ("output", "x", "w", "b"):
            name = self.roles[role]
            out = np.empty_like(self.fill[name])
            cl.enqueue_copy(self.queue, out, self.buffers[name])
            arrays.append(out)
        self.queue.finish()
        return arrays


def _last_line(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(error).__name__


def _last_lines(error: BaseException, count: int = 6) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:])[-1500:] or type(error).__name__


if __name__ == "__main__":
    main(sys.argv[1:])
