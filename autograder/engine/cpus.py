"""Which CPU the grader compiles for: this host's own, or one named with `--mcpu`.

One machine can show what another CPU would do: code compiled for `haswell` (AVX2) runs on an
AVX-512 host, and its speed is what a Haswell-class core would see from the same schedule. The
name goes to LLVM unchanged, for the baseline, the yardstick and the candidate alike. A name
LLVM does not know, or a CPU whose instruction sets this host lacks (AVX-512 code on an AVX2
machine dies of SIGILL), is refused before anything is compiled.

`TVM_COURSE_MCPU` sets the default for the lessons and the self-check.
"""
from __future__ import annotations

import os

from ..errors import ExitCode, TvmCourseError

ENVIRONMENT = "TVM_COURSE_MCPU"

# Feature names that are instruction-set extensions (x86 and Arm), as opposed to LLVM's tuning
# flags ("fast-gather", "false-deps-popcnt", ...), which say how to schedule, not what runs.
_ISA_PREFIXES = (
    "sse", "ssse3", "avx", "fma", "f16c", "bmi", "amx", "popcnt", "lzcnt", "movbe", "gfni", "vaes",
    "vpclmulqdq", "aes", "pclmul", "sha", "adx", "xop", "tbm", "neon", "sve", "sme", "dotprod",
    "i8mm", "bf16", "fullfp16", "fp-armv8",
)


class UnknownCPU(ValueError, TvmCourseError):
    """An --mcpu this LLVM does not know, or one this host cannot run: a usage error."""

    exit_code = ExitCode.USAGE_ERROR


def default_mcpu() -> str | None:
    """The CPU the lessons and a self-check compile for when nothing else says: TVM_COURSE_MCPU."""
    return os.environ.get(ENVIRONMENT) or None


def cpu_target(mcpu: str | None = None):
    """The LLVM target for `mcpu` (None: this host's own CPU), checked to run on this host."""
    import tvm
    from tvm.target import Target, codegen

    host = Target.from_device(tvm.cpu())
    if not mcpu or mcpu == str(host.attrs.get("mcpu", "")):
        return host
    triple = str(host.attrs["mtriple"])
    if not codegen.llvm_is_valid_cpu(mcpu, triple):
        raise UnknownCPU(f"LLVM does not know a CPU named {mcpu!r} for {triple} (examples: haswell, skylake-avx512, znver3)")
    config = {**host.export(), "mcpu": mcpu}
    config.pop("tag", None)
    target = Target({k: v for k, v in config.items() if k in ("kind", "mtriple", "mcpu", "num-cores")})
    missing = sorted(_isa(codegen.llvm_get_cpu_features(target)) - _isa(codegen.llvm_get_cpu_features(host)))
    if missing:
        raise UnknownCPU(
            f"this machine ({host.attrs.get('mcpu')}) cannot run code compiled for {mcpu!r}: it lacks "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}; choose an older CPU or grade on one that has them"
        )
    return target


def cpu_name(target) -> str:
    """The LLVM CPU name a target compiles for (its host's, for a GPU target)."""
    host = target.host if getattr(target, "host", None) is not None else target
    return str(host.attrs.get("mcpu", "")) or "generic"


def _isa(features) -> set[str]:
    return {f for f in features if f.startswith(_ISA_PREFIXES)}
