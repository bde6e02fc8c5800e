"""A GPU schedule's kernels as an OpenCL program that a CPU device (PoCL) can run: the evaluator's side.

Where no CUDA device is reachable, the same scheduled function is lowered once more for
OpenCL with the CUDA limits, and this module turns the lowering into plain data
(`KernelProgram`): the kernels' OpenCL C, the buffers (the function's four tensors and the
host allocations that carry intermediates between kernels) and the launches in host order
with their work-group counts and sizes. The confined runner (`opencl_runner.py`, which never
imports TVM: TVM's LLVM and PoCL's do not share a process well) builds and runs it.

What such a run proves: the schedule's indexing, its binding of loops to blocks and threads,
its staging through shared memory and its synchronisation, on fresh inputs. What it does not:
CUDA's own code generation (PTX, ptxas), warp-level behaviour, and anything about time.

The same lowering also gives what a GPU's speed depends on (`KernelStats`): global-memory
traffic per output element, threads and shared memory per block, and the occupancy those allow.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from .opencl_runner import RUNS  # the result file's order, shared with the runner (which has no TVM)
from ..errors import TvmCourseError

# The CUDA limits every GPU since Kepler has (the default `opencl` target allows 256 threads and
# 16 KiB of shared memory with a warp of 1, which would lower the same schedule differently).
CUDA_LIMITS = {"max_num_threads": 1024, "max_threads_per_block": 1024,
               "max_shared_memory_per_block": 48 * 1024, "thread_warp_size": 32}
# A candidate's run may take this many times the yardstick's run on the same device before a run
# cut short by the grading's limit is the candidate's timeout rather than the device's slowness.
CONTROL_FACTOR = 4.0
# A kernel launched from a host loop is launched once per iteration: beyond this, the run on a
# CPU would take minutes, and the schedule is left for a GPU to grade.
MAX_LAUNCHES = 4096
ROLES = {0: "x", 1: "w", 2: "b", 3: "output"}
SCALAR_DTYPES = ("int32", "int64")
LAUNCH_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")
# CUDA's dynamic shared memory size, a launch parameter too; the OpenCL lowering has none
# (shared_scope_for_opencl makes such buffers static), so it is left out of what is compared.
DYNAMIC_SHARED_TAG = "tirx.use_dyn_shared_memory"


class NotRunnable(ValueError, TvmCourseError):
    """The lowering has something this runner does not model (a host branch, a dynamic size):
    the schedule is still graded on a GPU, never scored 0 for it."""


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: str  # "float32"
    elements: int
    role: str  # x, w, b, output, or scratch (a host allocation between kernels)


@dataclass(frozen=True)
class Launch:
    kernel: str
    args: tuple  # ("buffer", NAME) or ("scalar", DTYPE, VALUE), in the kernel's parameter order
    groups: tuple[int, int, int]  # work-groups (CUDA's grid of blocks)
    local: tuple[int, int, int]  # work-items per work-group (CUDA's threads per block)


@dataclass(frozen=True)
class KernelStats:
    kernel: str
    launches: int
    threads_per_block: int
    blocks: int
    shared_bytes: int  # __local (shared) memory per block
    local_bytes: int  # private arrays per thread (registers or CUDA local memory)
    global_read_bytes: int  # loads from global memory, summed over every thread of every launch
    global_write_bytes: int


@dataclass(frozen=True)
class KernelProgram:
    source: str  # every kernel's OpenCL C, once
    buffers: tuple[Buffer, ...]
    launches: tuple[Launch, ...]
    stats: tuple[KernelStats, ...]

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "buffers": [asdict(b) for b in self.buffers],
                           "launches": [asdict(launch) for launch in self.launches]})

    def traffic_per_output(self, output_elements: int) -> tuple[float, float]:
        """Global-memory bytes read and written per output element, over all kernels."""
        read = sum(s.global_read_bytes for s in self.stats)
        written = sum(s.global_write_bytes for s in self.stats)
        return read / output_elements, written / output_elements


def opencl_target(host):
    from tvm.target import Target

    return Target({"kind": "opencl", **CUDA_LIMITS}, host=host)


def shared_scope_for_opencl(trace: list) -> list:
    """The trace with every `shared.dyn` scope made `shared`: TVM's OpenCL printer turns a
    dynamic shared buffer into a private array and drops its barriers (CUDA gets real shared
    memory and __syncthreads), which would make a correct schedule look wrong. Static and
    dynamic shared memory are the same memory; only how its size is given differs."""
    if isinstance(trace, list):
        return [shared_scope_for_opencl(item) for item in trace]
    if isinstance(trace, dict):
        return {key: shared_scope_for_opencl(value) for key, value in trace.items()}
    return "shared" if trace == "shared.dyn" else trace


def build_program(scheduled_mod, host) -> KernelProgram:
    """Lower `scheduled_mod` (an IRModule with the scheduled `main`) for OpenCL as tvm.compile
    does, and read the program off the lowering: source from the device code generator,
    buffers and launches from the host function before its final passes."""
    from tvm import tirx
    from tvm.tirx.build import codegen_build

    host_mod, device_mods = _lower(scheduled_mod, opencl_target(host))
    _finalize_host, finalize_device = tirx.get_tir_pipeline("default")[1:]
    kernels = {}
    for device_mod in device_mods.values():
        for gv, func in device_mod.functions.items():
            kernels[gv.name_hint] = func
    if not kernels:
        raise NotRunnable("no kernel was generated")
    sources = []
    for device_target, device_mod in device_mods.items():
        sources.append(codegen_build(finalize_device()(device_mod), device_target).inspect_source())
    launches, buffers = _host_plan(host_mod["main"], scheduled_mod["main"])
    stats = tuple(_kernel_stats(name, kernels[name], [launch for launch in launches if launch.kernel == name]) for name in
                  dict.fromkeys(launch.kernel for launch in launches))
    return KernelProgram(_one_program(sources), tuple(buffers), tuple(launches), stats)


def _lower(scheduled_mod, target):
    """tvm.compile's lowering up to the split into host and device functions."""
    from tvm import tirx
    from tvm.tirx.build import split_host_device_mods

    mod = tirx.transform.BindTarget(target.with_host(target.host))(scheduled_mod)
    return split_host_device_mods(tirx.get_tir_pipeline("default")[0](mod))


def check_same_launches(program: KernelProgram, scheduled_mod, cuda_target) -> None:
    """The OpenCL lowering must launch what the CUDA one launches (the same kernels, blocks and
    threads), or a run on OpenCL proves nothing about the CUDA build: NotRunnable if not."""
    host_mod, _ = _lower(scheduled_mod, cuda_target)
    cuda = [(launch.kernel, launch.groups, launch.local) for launch in _host_plan(host_mod["main"], scheduled_mod["main"])[0]]
    ours = [(launch.kernel, launch.groups, launch.local) for launch in program.launches]
    if cuda != ours:
        first = next((i for i, (a, b) in enumerate(zip(cuda, ours)) if a != b), min(len(cuda), len(ours)))
        raise NotRunnable(f"lowered for OpenCL, launch {first + 1} differs from the CUDA build's "
                          f"({ours[first] if first < len(ours) else 'none'} against {cuda[first] if first < len(cuda) else 'none'})")


def _one_program(sources: list[str]) -> str:
    """inspect_source() gives one section per kernel after `// Function: NAME`, each with the
    declarations of all: repeated declarations are valid C, so the sections are joined whole."""
    return "\n".join(sources)


def _host_plan(host_main, scheduled) -> tuple[list[Launch], list[Buffer]]:
    """The launches of the host function in order (host loops unrolled), and every buffer
    they pass: the four parameters by position, host allocations as scratch."""
    param_names = {param.name: ROLES[i] for i, param in enumerate(scheduled.params)}
    buffers: dict[str, Buffer] = {}
    data_of: list[tuple[object, str]] = []  # (data expression or var, buffer name)
    launches: list[Launch] = []

    def declare(buf, scratch: bool) -> None:
        elements = math.prod(int(d) for d in buf.shape)
        name = buf.name
        if not scratch and name not in param_names:
            return  # a view the host declares of a parameter under another name: not passed
        if scratch:
            name = _fresh(name, buffers)
        buffers.setdefault(name, Buffer(name, str(buf.dtype), elements, "scratch" if scratch else param_names[name]))
        data_of.append((buf.data, name))

    def buffer_named(expr) -> str | None:
        for data, name in reversed(data_of):
            if _same_expr(data, expr):
                return name
        return None

    def visit(stmt, env: dict) -> None:
        kind = type(stmt).__name__
        if kind == "SeqStmt":
            for s in stmt.seq:
                visit(s, env)
        elif kind == "AttrStmt":
            visit(stmt.body, env)
        elif kind in ("DeclBuffer", "AllocBuffer"):
            declare(stmt.buffer, scratch=kind == "AllocBuffer")
            if getattr(stmt, "body", None) is not None:
                visit(stmt.body, env)
        elif kind in ("Bind", "LetStmt"):
            if _dtype(stmt.var) in SCALAR_DTYPES:
                try:
                    env = {**env, stmt.var: _evaluate(stmt.value, env)}
                except NotRunnable:
                    pass  # a handle or a value no launch uses
            if getattr(stmt, "body", None) is not None:
                visit(stmt.body, env)
        elif kind == "For":
            start, extent = _evaluate(stmt.min, env), _evaluate(stmt.extent, env)
            if extent * max(1, len(launches)) > MAX_LAUNCHES * 4:
                raise NotRunnable(f"a host loop of {extent} iterations launches kernels")
            for i in range(start, start + extent):
                visit(stmt.body, {**env, stmt.loop_var: i})
                if len(launches) > MAX_LAUNCHES:
                    raise NotRunnable(f"more than {MAX_LAUNCHES} kernel launches from host loops")
        elif kind == "Evaluate":
            call = stmt.value
            op = getattr(getattr(call, "op", None), "name", "")
            if op.endswith("call_ffi_kernel"):
                launches.append(_launch(call, env, buffer_named))
            elif op.endswith("call_packed") and call.args and str(call.args[0]).strip('"') == "__tvm_set_device":
                pass
            elif op:
                raise NotRunnable(f"the host code calls {op}")
        elif kind in ("AssertStmt", "Return"):
            pass
        elif kind == "IfThenElse":
            if _evaluate(stmt.condition, env):
                visit(stmt.then_case, env)
            elif stmt.else_case is not None:
                visit(stmt.else_case, env)
        else:
            raise NotRunnable(f"host statement {kind}")

    visit(_compute_scope(host_main.body) or host_main.body, {})
    if not launches:
        raise NotRunnable("the host function launches no kernel")
    roles = {b.role for b in buffers.values()}
    if not {"x", "w", "b", "output"} <= roles:
        raise NotRunnable("the launches do not name all four of the function's tensors")
    return launches, list(buffers.values())


def _same_expr(a, b) -> bool:
    """The same TIR expression: one object, or structurally equal (a parameter's data pointer is
    an expression the host declares anew for each view of it)."""
    from tvm_ffi import structural_equal

    if a.same_as(b):
        return True
    try:
        return bool(structural_equal(a, b))
    except Exception:  # expressions of kinds it cannot compare
        return False


def _compute_scope(stmt):
    """The part of the packed host function after its argument checks (the `compute_scope`
    attribute), where the buffers are declared and the kernels launched."""
    kind = type(stmt).__name__
    if kind == "AttrStmt" and stmt.attr_key == "compute_scope":
        return stmt.body
    children = list(stmt.seq) if kind == "SeqStmt" else [getattr(stmt, name, None) for name in ("body", "then_case", "else_case")]
    for child in children:
        if child is not None:
            found = _compute_scope(child)
            if found is not None:
                return found
    return None


def _fresh(name: str, taken: dict) -> str:
    if name not in taken:
        return name
    n = 1
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def _launch(call, env: dict, buffer_named) -> Launch:
    tags = [str(t) for t in call.attrs.launch_params] if hasattr(call, "attrs") and hasattr(call.attrs, "launch_params") else None
    args = list(call.args)
    name = str(args[0]).strip('"')
    if tags is None:
        raise NotRunnable(f"launch of {name} has no launch parameters")
    unknown = [t for t in tags if t not in LAUNCH_TAGS and t != DYNAMIC_SHARED_TAG]
    if unknown:
        raise NotRunnable(f"launch of {name} uses {', '.join(unknown)}")
    sizes = [_evaluate(a, env) for a in args[len(args) - len(tags):]]
    extent = dict(zip(tags, sizes))
    groups_x, groups_y, groups_z = (int(extent.get(f"blockIdx.{d}", 1)) for d in "xyz")
    local_x, local_y, local_z = (int(extent.get(f"threadIdx.{d}", 1)) for d in "xyz")
    groups, local = (groups_x, groups_y, groups_z), (local_x, local_y, local_z)
    passed: list[tuple] = []
    for arg in args[1: len(args) - len(tags)]:
        buffer = buffer_named(arg)
        if buffer is not None:
            passed.append(("buffer", buffer))
        elif _dtype(arg) in SCALAR_DTYPES:
            passed.append(("scalar", _dtype(arg), _evaluate(arg, env)))
        else:
            raise NotRunnable(f"launch of {name} passes {arg} ({_dtype(arg)})")
    return Launch(name, tuple(passed), groups, local)


def _dtype(expr) -> str:
    dtype = getattr(expr, "dtype", None)
    return str(dtype if dtype is not None else getattr(expr, "ty", ""))


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b,
    # C's truncating division: the host code's Div and Mod of non-negative sizes alike
    "Div": lambda a, b: int(a / b), "Mod": lambda a, b: a - b * int(a / b),
    "Min": min, "Max": max, "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b, "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
    "And": lambda a, b: bool(a and b), "Or": lambda a, b: bool(a or b),
}


def _evaluate(expr, env: dict) -> int:
    """An integer expression of the host code, with host loop variables bound in `env`."""
    if isinstance(expr, int):
        return expr
    kind = type(expr).__name__
    if kind == "IntImm":
        return int(expr.value)
    if kind == "Var":
        for var, value in env.items():
            if var.same_as(expr):
                return value
        raise NotRunnable(f"the host code uses {expr} at run time")
    if kind in _BINARY:
        left, right = _evaluate(expr.a, env), _evaluate(expr.b, env)
        if kind in ("FloorDiv", "FloorMod", "Div", "Mod") and right == 0:
            raise NotRunnable("the host code divides by zero")
        return int(_BINARY[kind](left, right))
    if kind == "Not":
        return int(not _evaluate(expr.a, env))
    if kind == "Cast":
        return _evaluate(expr.value, env)
    if kind == "Select":
        return _evaluate(expr.true_value if _evaluate(expr.condition, env) else expr.false_value, env)
    raise NotRunnable(f"the host code computes {kind} at run time")


def _kernel_stats(name: str, func, launches: list[Launch]) -> KernelStats:
    """Per-kernel resources from its lowered device function: shared and private allocations,
    and global loads and stores counted over its loops (both sides of a branch taken, so an
    upper bound) for one thread, then over every thread of every launch."""
    counter = _AccessCounter()
    counter.visit(func.body, 1)
    launch = launches[0]
    threads = math.prod(launch.local)
    all_threads = sum(math.prod(launch.local) * math.prod(launch.groups) for launch in launches)
    return KernelStats(
        kernel=name, launches=len(launches), threads_per_block=threads, blocks=math.prod(launch.groups),
        shared_bytes=counter.allocated.get("shared", 0), local_bytes=counter.allocated.get("local", 0),
        global_read_bytes=int(counter.read * all_threads), global_write_bytes=int(counter.written * all_threads),
    )


class _AccessCounter:
    def __init__(self) -> None:
        self.read = 0.0
        self.written = 0.0
        self.allocated: dict[str, int] = {}

    def visit(self, stmt, times: float) -> None:
        kind = type(stmt).__name__
        if kind == "SeqStmt":
            for s in stmt.seq:
                self.visit(s, times)
        elif kind == "For":
            extent = stmt.extent
            self.visit(stmt.body, times * (int(extent.value) if hasattr(extent, "value") else 1))
        elif kind == "IfThenElse":
            self._loads(stmt.condition, times)
            self.visit(stmt.then_case, times)
            if stmt.else_case is not None:
                self.visit(stmt.else_case, times)
        elif kind == "BufferStore":
            if _scope(stmt.buffer) == "global":
                self.written += times * _bytes(_dtype(stmt.value))
            self._loads(stmt.value, times)
            for index in stmt.indices:
                self._loads(index, times)
        elif kind in ("AllocBuffer", "DeclBuffer", "Allocate"):
            buffer = getattr(stmt, "buffer", None)
            if kind == "AllocBuffer" and buffer is not None:
                scope = _scope(buffer)
                key = "shared" if scope.startswith("shared") else ("local" if scope == "local" else None)
                if key:
                    size = math.prod(int(d) if hasattr(d, "value") or isinstance(d, int) else 0 for d in buffer.shape)
                    self.allocated[key] = self.allocated.get(key, 0) + size * _bytes(buffer.dtype)
            if getattr(stmt, "body", None) is not None:
                self.visit(stmt.body, times)
        elif kind in ("Evaluate",):
            self._loads(stmt.value, times)
        elif kind in ("Bind", "LetStmt"):
            self._loads(stmt.value, times)
            if getattr(stmt, "body", None) is not None:
                self.visit(stmt.body, times)
        elif hasattr(stmt, "body"):
            self.visit(stmt.body, times)

    def _loads(self, expr, times: float) -> None:
        found = 0
        stack = [expr]
        while stack:
            node = stack.pop()
            if type(node).__name__ in ("BufferLoad", "TensorLoad") and _scope(_loaded(node)) == "global":
                found += _bytes(_dtype(node))
            for name in ("a", "b", "value", "condition", "true_value", "false_value"):
                child = getattr(node, name, None)
                if child is not None and not isinstance(child, (int, float, str)):
                    stack.append(child)
            for name in ("args", "indices"):
                stack.extend(c for c in (getattr(node, name, None) or ()) if not isinstance(c, (int, float, str)))
        self.read += times * found


def _loaded(load):
    """The buffer a load reads (TVM 0.27 calls the node TensorLoad and the buffer its source)."""
    return getattr(load, "buffer", None) or load.source


def _scope(buffer) -> str:
    try:
        return str(buffer.scope())
    except Exception:
        return "global"


def _bytes(dtype) -> int:
    import tvm

    dt = tvm.DataType(str(dtype))
    return max(1, dt.bits * dt.lanes // 8)


# Per streaming multiprocessor, from NVIDIA's CUDA C Programming Guide (compute capabilities
# table): resident threads, resident blocks, shared memory (bytes), and 1 KiB of it reserved per
# block from sm_80 on. Registers are not modelled: their count is known only after ptxas.
SM_LIMITS = {
    "sm_70": (2048, 32, 96 * 1024, 0),
    "sm_75": (1024, 16, 64 * 1024, 0),
    "sm_80": (2048, 32, 164 * 1024, 1024),
    "sm_86": (1536, 16, 100 * 1024, 1024),
    "sm_89": (1536, 24, 100 * 1024, 1024),
    "sm_90": (2048, 32, 228 * 1024, 1024),
}


def occupancy(stats: KernelStats, arch: str) -> tuple[float, str] | None:
    """(resident warps / the SM's maximum, what limits it) on `arch`, from threads and shared
    memory per block alone; None for an architecture not in SM_LIMITS."""
    if arch not in SM_LIMITS:
        return None
    max_threads, max_blocks, shared, reserved = SM_LIMITS[arch]
    warps = -(-stats.threads_per_block // 32)
    limits = {"threads": max_threads // (warps * 32), "blocks per SM": max_blocks}
    if stats.shared_bytes:
        limits["shared memory"] = shared // (stats.shared_bytes + reserved)
    limiter = min(limits, key=lambda name: limits[name])
    blocks = limits[limiter]
    return min(1.0, blocks * warps * 32 / max_threads), limiter


def describe(candidate: KernelProgram, yardstick: KernelProgram, output_elements: int, arch: str) -> str:
    """What a GPU's speed depends on, candidate beside yardstick, for the feedback."""

    def line(label: str, program: KernelProgram) -> str:
        read, written = program.traffic_per_output(output_elements)
        heaviest = max(program.stats, key=lambda s: s.global_read_bytes + s.global_write_bytes)
        occupied = occupancy(heaviest, arch)
        occ = f", occupancy {occupied[0]:.0%} ({occupied[1]} limit)" if occupied else ""
        kernels = len(program.stats)
        return (f"{label}: {kernels} kernel{'s' * (kernels != 1)}, {read:.1f} B read and {written:.1f} B written "
                f"in global memory per output; its heaviest kernel {heaviest.kernel}: {heaviest.threads_per_block} "
                f"threads and {heaviest.shared_bytes} B shared memory per block{occ}")

    return (f"what its speed on a GPU depends on (counted in the lowered kernels, caches and registers not "
            f"modelled; occupancy for {arch}, 48 KiB shared memory and 1024 threads per block): "
            f"{line('yours', candidate)}; {line('the yardstick', yardstick)}")


class BuildFailed(RuntimeError, TvmCourseError):
    """PoCL could not build a program (its compiler's last lines)."""

    def __init__(self, program: str, log: str):
        super().__init__(log)
        self.program = program


class OpenCLRunner:
    """The confined OpenCL runner (opencl_runner.py), a new interpreter without TVM: started
    early so that PoCL starts while the evaluator compiles; handed programs to build and run."""

    def __init__(self, shape, config, scratch: str | None = None, env: dict[str, str] | None = None):
        from .measure import result_bytes
        from .opencl_runner import RESULT_FILE, environment
        from .sandbox import Child

        self.shape, self.config = shape, config
        self.run_bytes = result_bytes(shape)
        self.child = Child("autograder.engine.opencl_runner", [], untrusted=True, scratch=scratch)
        self.child.args = [str(len(RUNS) * self.run_bytes)]
        self.child.env.update({**environment(self.child.workdir), **(env or {})})
        self.result_path = os.path.join(self.child.workdir, RESULT_FILE)
        with open(self.result_path, "wb") as handle:
            handle.truncate(len(RUNS) * self.run_bytes)
        self._yardstick_sent = False
        self._sent_at: dict[str, float] = {}  # when each program was handed over (this process's clock)
        self.child.start()

    def device(self, deadline_s: float) -> str:
        """The OpenCL device the runner found (InfrastructureError when none)."""
        from .measure import await_stage

        await_stage(self.child, "started", deadline_s, "start an OpenCL device", infrastructure=True)
        started = next((m for m in self.child.messages if m.get("stage") == "started"), {})
        return str(started.get("device", "an OpenCL device"))[:1000]

    def build_yardstick(self, yardstick: KernelProgram) -> None:
        """Have the runner build the yardstick now (it needs no submission): it builds while the
        evaluator replays and compiles the candidate."""
        if self._yardstick_sent:
            return
        self._write("yardstick", yardstick)
        self.child.send({"shape": self.shape.to_spec(), "seed": self.config.seed})
        self._yardstick_sent = True
        self._sent_at["yardstick"] = time.monotonic()

    def run(self, yardstick: KernelProgram, candidate: KernelProgram, deadline_s: float) -> dict[str, list]:
        """Build and run both programs: {run: [output, x, w, b]} for the yardstick and for the
        candidate with ids forwards and backwards. BuildFailed when PoCL cannot build the
        candidate; InfrastructureError when the yardstick cannot be built or run."""
        self.start(yardstick, candidate)
        return self.results(deadline_s)

    def start(self, yardstick: KernelProgram, candidate: KernelProgram) -> None:
        """Hand both programs over; the runner builds and runs them while the caller goes on."""
        self.build_yardstick(yardstick)
        self._write("candidate", candidate)
        self.child.send_line("candidate")
        self._sent_at["candidate"] = time.monotonic()

    def results(self, deadline_s: float) -> dict[str, list]:
        """What run() returns, once the runner has done what start() asked."""
        from .measure import await_stage

        end = time.monotonic() + deadline_s
        left = lambda: max(0.0, end - time.monotonic())  # noqa: E731  (one deadline for every stage)
        device = self.device(left())
        await_stage(self.child, "yardstick-built", left(), "build the yardstick's kernels", infrastructure=True)
        if not self.child.wait_for_message(lambda: "candidate-built" in self.child.stages_reached
                                           or self.child.last_message("build-failed"), left()):
            await_stage(self.child, "candidate-built", left(), "build your kernels for the OpenCL device")
        failed = self.child.last_message("build-failed")
        if failed:
            raise BuildFailed(str(failed.get("program")), str(failed.get("log", ""))[:1500])
        # The yardstick runs after the candidate is built: time the candidate's build spent is
        # not the device's to answer for (a kernel made to build slowly would otherwise pass its
        # own timeout off as the grader's).
        if not self.child.wait_for_stage("yardstick-ran", left()) and self.child.process.poll() is None:
            self._blame_a_slow_build("run the yardstick's kernels")
        await_stage(self.child, "yardstick-ran", left(), "run the yardstick's kernels", infrastructure=True)
        reached = self.child.stages_reached
        control_s = reached["yardstick-ran"] - reached.get("ready", reached["yardstick-ran"])
        for stage, after, doing in (("candidate-ran", "yardstick-ran", "run on the OpenCL device"),
                                    ("candidate-reversed-ran", "candidate-ran",
                                     "run on the OpenCL device with thread ids numbered backwards")):
            self._await_candidate(stage, after, doing, left, control_s, device)
        return _read_runs(self.result_path, self.shape)

    def _await_candidate(self, stage: str, after: str, doing: str, left, control_s: float, device: str) -> None:
        """Wait for one of the candidate's runs. If time runs out while it has run less than
        CONTROL_FACTOR times as long as the yardstick's own run on this device, the device (a
        simulator, a loaded machine) is too slow for the grading's limit: the grader's fault,
        decided from what the trusted side timed, never from what the candidate did."""
        from .measure import InfrastructureError, await_stage

        if not self.child.wait_for_stage(stage, left()) and self.child.process.poll() is None:
            ran_s = time.monotonic() - self.child.stages_reached[after]
            self._blame_a_slow_build(doing)
            if ran_s < CONTROL_FACTOR * control_s:
                raise InfrastructureError(
                    f"{device} is too slow for the grading's time limit: the yardstick's kernels took {control_s:.1f} s "
                    f"there, and yours had run {ran_s:.1f} s when the time ran out (not your code)")
        await_stage(self.child, stage, left(), doing)

    def _blame_a_slow_build(self, doing: str) -> None:
        """When the time has run out: a candidate whose kernels took CONTROL_FACTOR times as long
        to build as the yardstick's did spent it, and it is the candidate's timeout
        (RunnerFailed), decided from the trusted side's own clock. Otherwise nothing."""
        from .measure import RunnerFailed

        reached = self.child.stages_reached
        if "yardstick-built" not in reached or "candidate" not in self._sent_at:
            return
        # Each build from when its program was handed over (or the runner was free to start it)
        # to when the runner said it was built; the candidate's two builds (ids forwards and
        # backwards) end when the runner is ready to run, or have not ended yet.
        yardstick_s = max(reached["yardstick-built"] - max(reached.get("started", 0.0), self._sent_at["yardstick"]), 0.05)
        candidate_s = reached.get("ready", time.monotonic()) - max(reached["yardstick-built"], self._sent_at["candidate"])
        if candidate_s >= 2 * CONTROL_FACTOR * yardstick_s:  # two builds of the candidate, one of the yardstick
            raise RunnerFailed(f"your kernels took {candidate_s:.1f} s to build for the OpenCL device, "
                               f"{candidate_s / yardstick_s:.0f} times as long as the yardstick's, and the time left could not "
                               f"{doing}", "timeout")

    def _write(self, name: str, program: KernelProgram) -> None:
        with open(os.path.join(self.child.workdir, f"{name}.json"), "w", encoding="utf-8") as handle:
            handle.write(program.to_json())

    def confinement(self) -> str:
        from .measure import confinement_reported

        return confinement_reported(self.child)

    def close(self) -> None:
        self.child.close()


def _read_runs(path: str, shape) -> dict[str, list]:
    """The runner's file, read as data: exactly three runs' [output, x, w, b], or RunnerFailed."""
    from .measure import read_results

    return dict(zip(RUNS, read_results(path, shape, len(RUNS))))


# What working_device() starts a runner for: the smallest convolution, no program ever run.
_PROBE_SHAPE = {"batch": 1, "in_channels": 1, "height": 4, "width": 4, "out_channels": 1, "kernel": 3, "padding": 1}


def working_device(deadline_s: float = 120.0) -> str:
    """The OpenCL device a grading would use here, found as a grading finds it: by a runner in its
    own world, which builds and runs a probe kernel on each device in turn (opencl_device.py).
    Its description, or InfrastructureError with each device's own build log and what to install."""
    from ..problems.workload import ConvShape
    from .config import GraderConfig

    runner = OpenCLRunner(ConvShape(**_PROBE_SHAPE), GraderConfig())
    try:
        return runner.device(deadline_s)
    finally:
        runner.close()
