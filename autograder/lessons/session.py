"""What a lesson needs before it measures anything: TVM on one thread, the host target, a GPU or not."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import TvmCourseError


class ThreadCountError(RuntimeError, TvmCourseError):
    pass


@dataclass(frozen=True)
class Lab:
    """The machine a lesson runs on, as TVM sees it."""

    tvm_version: str
    target: object  # tvm.target.Target for this CPU (not plain "llvm", which is SSE2-only)
    device: object  # tvm.cpu(0)
    threads: int
    gpu: str | None  # the CUDA device's name, or None where there is none
    l1_data_cache: int | None  # bytes of L1 data cache per core, from sysfs (None where unknown)
    float_lanes: int = 4  # float32 lanes of the target's widest vector register (16 AVX-512, 8 AVX2, 4 SSE)
    fma: bool = False  # whether the target has fused multiply-add (x86-64-v2, SSE only, has not)

    def vector_words(self, pixels: int) -> str:
        """How `pixels` float32 values fit this target's widest vector registers, in words (LLVM may
        still choose narrower ones: the lessons' machine-code tables show which it used)."""
        registers = -(-pixels // self.float_lanes)
        shape = "one" if registers == 1 else str(registers)
        how = "with fused multiply-adds" if self.fma else "with a multiply and a separate add each (this target has no FMA)"
        return (f"{pixels} pixels fill {shape} of this target's widest vector registers ({self.float_lanes} float32 "
                f"lanes each), {how}")

    def summary(self) -> str:
        gpu = self.gpu or "none (GPU cells compile CUDA source but do not run it)"
        return (
            f"TVM {self.tvm_version}; host target {self.target}; "
            f"{self.threads} TVM thread for timings; CUDA GPU: {gpu}"
        )

    def _repr_markdown_(self) -> str:
        gpu = self.gpu or "none: GPU cells compile CUDA source but cannot run it"
        return "\n".join(
            [
                f"- TVM **{self.tvm_version}**",
                f"- host target: `{self.target}`",
                f"- TVM threads used for timing: **{self.threads}**",
                f"- L1 data cache per core: **{_kib(self.l1_data_cache)}**",
                f"- vector registers: **{self.float_lanes} float32 lanes**, fused multiply-add: **{'yes' if self.fma else 'no'}**",
                f"- CUDA GPU: **{gpu}**",
            ]
        )

    def __repr__(self) -> str:
        return self.summary()


def _kib(count: int | None) -> str:
    return "unknown" if count is None else f"{count // 1024} KiB"


def l1_data_cache_bytes(cpu_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int | None:
    """The L1 data cache of CPU 0 as Linux reports it, in bytes."""
    for index in sorted(cpu_dir.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if level == "1" and kind in ("Data", "Unified"):
            units = {"K": 1024, "M": 1024 * 1024}
            return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
    return None


def host_target():
    """The LLVM target for this CPU, with its vector extensions; or, where TVM_COURSE_MCPU names
    another CPU (haswell, znver3, ...), for that one, so a lesson shows what it would do."""
    from ..engine.cpus import cpu_target, default_mcpu

    return cpu_target(default_mcpu())


def cuda_device_name() -> str | None:
    """The name of CUDA device 0, or None where the CUDA runtime finds no GPU."""
    from ..engine.runners import gpu_present

    if not gpu_present():
        return None
    import tvm

    return str(tvm.cuda(0).device_name)


def start() -> Lab:
    """Import TVM on one thread and describe the machine; call first in every lesson."""
    os.environ.update({"TVM_NUM_THREADS": "1", "TVM_BIND_THREADS": "0"})  # one thread, not bound (engine/threads.py)
    import tvm

    threads = int(tvm.runtime.num_threads())
    if threads != 1:
        raise ThreadCountError(
            f"TVM is running {threads} threads: it was imported before TVM_NUM_THREADS=1 was set. "
            "Restart the kernel and run the notebook from the top."
        )
    from tvm.target import codegen

    from ..engine import peak

    target = host_target()
    return Lab(
        tvm_version=tvm.__version__,
        target=target,
        device=tvm.cpu(0),
        threads=threads,
        gpu=cuda_device_name(),
        l1_data_cache=l1_data_cache_bytes(),
        float_lanes=peak.lanes(target),
        fma="fma" in set(codegen.llvm_get_cpu_features(target)),
    )
