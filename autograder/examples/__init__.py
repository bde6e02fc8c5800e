"""Example submissions bundled with the package: what `make demo` grades.

Each file defines `schedule(sch)`. `path(name)` finds one; `names()` lists them.
"""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def names() -> list[str]:
    return sorted(p.stem for p in _HERE.glob("*.py") if not p.stem.startswith("_"))


def path(name: str) -> Path:
    found = _HERE / f"{name}.py"
    if not found.exists():
        raise FileNotFoundError(f"no example schedule {name!r}; examples: {', '.join(names())}")
    return found


def source(name: str) -> str:
    return path(name).read_text(encoding="utf-8")
