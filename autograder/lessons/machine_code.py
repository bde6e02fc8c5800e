"""What LLVM made of a schedule: instruction counts in the generated x86 assembly.

Counts are static (instructions in the code, not instructions executed), which is enough to
see whether a loop was vectorised with plain vector loads or with gathers and scatters.
"""
from __future__ import annotations

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


def assembly(executable) -> str:
    """The host module's assembly text (x86 for this machine's LLVM target)."""
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


def class_table(executables: dict, title: str = "") -> Table:
    """One column per compiled variant, one row per instruction class."""
    per_variant = {name: classify(instruction_counts(exe)) for name, exe in executables.items()}
    rows = [(label, *(str(per_variant[name][label]) for name in executables)) for label in INSTRUCTION_CLASSES]
    return Table.of(("instructions in the code", *executables), rows, title)
