"""What LLVM made of a schedule: instruction counts in the generated x86 assembly.

Counts are static (instructions in the code, not instructions executed), which is enough to
see whether a loop was vectorised with plain vector loads or with gathers and scatters.

The instruction classes are x86 (AVX) mnemonics. On any other CPU (an aarch64 laptop, say) every
count is 0, so `class_table` then carries a note saying so instead of letting the zeros pass for
a finding.
"""
from __future__ import annotations

import platform
import re
from collections import Counter

from .tables import Table

# Instruction classes worth telling apart when reading a vectorised convolution.
INSTRUCTION_CLASSES = {
    "fused multiply-adds on vectors (vfmadd...ps)": r"vfmadd\d+ps",
    "fused multiply-adds on single floats (vfmadd...ss)": r"vfmadd\d+ss",
    "other vector float arithmetic (add, mul, max)": r"v(add|sub|mul|max|min)ps",
    "gathers and scatters": r"v(gather|scatter)\w+",
    "vector loads and stores": r"vmov(u|a)ps",
}

_INSTRUCTION = re.compile(r"^[ \t]+([a-z][a-z0-9]*)\b", re.MULTILINE)

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
        "(vfmadd...ps, vgather..., vmovups), so every count is 0 and this table says nothing about the code "
        "LLVM generated for this machine. The text around it describes what LLVM generates on x86 machines "
        "such as the course machines."
    )


def assembly(executable) -> str:
    """The host module's assembly text, for this machine's LLVM target."""
    return executable.mod.inspect_source("asm")


def count_mnemonics(assembly_text: str) -> Counter:
    """Mnemonic -> number of occurrences, for AT&T-syntax assembly as LLVM prints it."""
    return Counter(m.group(1) for m in _INSTRUCTION.finditer(assembly_text))


def instruction_counts(executable) -> Counter:
    return count_mnemonics(assembly(executable))


def classify(counts: Counter) -> dict[str, int]:
    """Totals per entry of INSTRUCTION_CLASSES."""
    return {
        label: sum(n for mnemonic, n in counts.items() if re.fullmatch(pattern, mnemonic))
        for label, pattern in INSTRUCTION_CLASSES.items()
    }


def class_table(executables: dict, title: str = "", target=None) -> Table:
    """One column per compiled variant, one row per instruction class; on a CPU that is not x86
    (`target`'s, else this machine's) the table carries a note that its counts mean nothing there."""
    per_variant = {name: classify(instruction_counts(exe)) for name, exe in executables.items()}
    rows = [(label, *(str(per_variant[name][label]) for name in executables)) for label in INSTRUCTION_CLASSES]
    return Table.of(("x86 instructions in the code", *executables), rows, title,
                    note=non_x86_note(target_architecture(target)))
