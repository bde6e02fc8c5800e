"""What LLVM made of a schedule: instruction counts in the generated x86 assembly.

Counts are static (instructions in the code, not instructions executed), which is enough to
see whether a loop was vectorised with plain vector loads or with gathers and scatters.

The classes cover the three x86 vector instruction sets a course machine compiles for: SSE
(`mulps`, `addps`, `movups` on 128-bit xmm registers; no fused multiply-add), AVX2 with FMA
(`vfmadd231ps`, `vmovups` on 256-bit ymm) and AVX-512 (the same mnemonics on 512-bit zmm, plus
scatters). Which register widths the vector instructions use is counted too, so the table says
which of the three the code is. A class that counts nothing for every build is said so under
the table, instead of letting a row of zeros pass for a finding; on a CPU that is not x86 every
count is 0 and the note says that the table means nothing there.
"""
from __future__ import annotations

import platform
import re
from collections import Counter

from .tables import Table

# Instruction classes worth telling apart when reading a vectorised convolution. Patterns match
# both the SSE mnemonic (mulps) and its VEX/EVEX form (vmulps).
INSTRUCTION_CLASSES = {
    "fused multiply-adds on vectors (vfmadd...ps; AVX2/AVX-512)": r"vfn?m(add|sub)\d+ps",
    "separate multiplies and adds on vectors (mulps, addps; SSE has no FMA)": r"v?(add|sub|mul)ps",
    "other vector float arithmetic (max, min)": r"v?(max|min)ps",
    "arithmetic on single floats (...ss)": r"(v?(add|sub|mul|max|min)ss|vfn?m(add|sub)\d+ss)",
    "gathers and scatters": r"v(gather|scatter)\w+",
    "vector loads and stores (movups, movaps)": r"v?mov(u|a)ps",
}
FMA_CLASS, SEPARATE_CLASS = list(INSTRUCTION_CLASSES)[:2]
GATHER_CLASS = "gathers and scatters"

# Register widths the vector float instructions above use: which instruction set the code is.
REGISTER_CLASSES = {
    "vector float instructions on 512-bit zmm registers (AVX-512)": "zmm",
    "vector float instructions on 256-bit ymm registers (AVX, AVX2)": "ymm",
    "vector float instructions on 128-bit xmm registers (SSE, or AVX at 128 bits)": "xmm",
}

_INSTRUCTION = re.compile(r"^[ \t]+([a-z][a-z0-9]*)\b([^\n#]*)", re.MULTILINE)
_VECTOR = re.compile("|".join(f"(?:{p})" for label, p in INSTRUCTION_CLASSES.items() if "single floats" not in label))

_X86 = ("x86_64", "amd64", "x86", "i386", "i486", "i586", "i686")


def target_architecture(target=None) -> str:
    """The CPU architecture code is generated for: from the target's LLVM triple where it has
    one, else this machine's (the lessons compile for the host)."""
    triple = ""
    if target is not None:
        triple = str(getattr(target, "attrs", {}).get("mtriple", "") or "")
    return (triple.split("-")[0] if triple else platform.machine()).lower() or "unknown"


def is_x86(architecture: str) -> bool:
    return architecture.lower() in _X86


def non_x86_note(architecture: str) -> str:
    """Why the counts say nothing on a CPU that is not x86; empty on x86."""
    if is_x86(architecture):
        return ""
    return (
        f"Note: this code is for {architecture}, not x86. The classes counted here are x86 instructions "
        "(mulps, vfmadd...ps, vgather..., movups), so every count is 0 and this table says nothing about the code "
        "LLVM generated for this machine. The text around it describes what LLVM generates on x86 machines "
        "such as the course machines."
    )


def assembly(executable) -> str:
    """The host module's assembly text, for this machine's LLVM target."""
    return executable.mod.inspect_source("asm")


def count_mnemonics(assembly_text: str) -> Counter:
    """Mnemonic -> number of occurrences, for AT&T-syntax assembly as LLVM prints it."""
    return Counter(m.group(1) for m in _INSTRUCTION.finditer(assembly_text))


def count_registers(assembly_text: str) -> Counter:
    """Register width ('zmm', 'ymm', 'xmm') -> vector float instructions of INSTRUCTION_CLASSES
    whose widest operand is a register of that width."""
    widths: Counter = Counter()
    for match in _INSTRUCTION.finditer(assembly_text):
        if not _VECTOR.fullmatch(match.group(1)):
            continue
        operands = match.group(2)
        for width in ("zmm", "ymm", "xmm"):
            if f"%{width}" in operands:
                widths[width] += 1
                break
    return widths


def instruction_counts(executable) -> Counter:
    return count_mnemonics(assembly(executable))


def classify(counts: Counter) -> dict[str, int]:
    """Totals per entry of INSTRUCTION_CLASSES."""
    return {
        label: sum(n for mnemonic, n in counts.items() if re.fullmatch(pattern, mnemonic))
        for label, pattern in INSTRUCTION_CLASSES.items()
    }


def profile(executable) -> dict[str, int]:
    """Totals per instruction class and per register width, for one build."""
    text = assembly(executable)
    widths = count_registers(text)
    return {**classify(count_mnemonics(text)), **{label: widths[width] for label, width in REGISTER_CLASSES.items()}}


def instruction_set(counts: dict[str, int]) -> str:
    """Which x86 vector instruction set a profile's vector code is, by its widest registers."""
    labels = list(REGISTER_CLASSES)
    if counts.get(labels[0]):
        return "AVX-512"
    if counts.get(labels[1]):
        return "AVX2" if counts.get(FMA_CLASS) else "AVX"
    if counts.get(labels[2]):
        return "SSE" if not counts.get(FMA_CLASS) else "AVX at 128 bits"
    return "no vector float code"


def class_table(executables: dict, title: str = "", target=None) -> Table:
    """One column per compiled variant, one row per instruction class and register width; a note
    under it names every class that counted nothing (on a CPU that is not x86: all of them)."""
    per_variant = {name: profile(exe) for name, exe in executables.items()}
    labels = [*INSTRUCTION_CLASSES, *REGISTER_CLASSES]
    rows = [(label, *(str(per_variant[name][label]) for name in executables)) for label in labels]
    rows.append(("vector instruction set of the code", *(instruction_set(per_variant[name]) for name in executables)))
    architecture = target_architecture(target)
    note = non_x86_note(architecture) or _zero_note(per_variant, labels)
    return Table.of(("x86 instructions in the code", *executables), rows, title, note=note)


def _zero_note(per_variant: dict, labels: list[str]) -> str:
    """Names the rows that counted nothing in any build: absent from this code, not a finding about it."""
    if not per_variant:
        return ""
    empty = [label.split(" (")[0] for label in labels if not any(counts[label] for counts in per_variant.values())]
    if not empty:
        return ""
    return ("Counted nothing in any build here: " + "; ".join(empty) + ". This code has none of them "
            "(the target's instruction set lacks them, or LLVM did not use them), so those zeros say "
            "nothing about speed.")
