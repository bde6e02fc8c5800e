"""The grader's own compiled libraries, built once per problem, CPU and TVM version.

Every grading runs the baseline, the yardstick and the FMA peak kernel beside the candidate;
they depend only on the problem, the target and the code that defines them, so compiling and
exporting them again for each submission (a few tenths of a second) would be wasted. They
are kept in `$TVM_COURSE_CACHE/libraries/` (default `~/.cache/tvm-course/libraries/`), in
folders only their owner may open, keyed by all of that; a grading copies them into its
runner's private directory. Where the cache cannot be written, they are built in place.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

CACHE_ENV = "TVM_COURSE_CACHE"
FORMAT = "grader-libraries/v1"
# What the libraries are made from: an edit to any of these makes new ones.
_SOURCES = ("problems/workload.py", "problems/yardsticks.py", "engine/peak.py", "engine/evaluate.py")


def cache_root() -> Path:
    root = os.environ.get(CACHE_ENV)
    return (Path(root) if root else Path.home() / ".cache" / "tvm-course") / "libraries"


def key(problem: str, target) -> str:
    import tvm

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for part in (FORMAT, problem, str(target.export()), str(getattr(target, "host", None) and target.host.export()),
                 tvm.__version__):
        digest.update(part.encode() + b"\0")
    for relative in _SOURCES:
        digest.update((package / relative).read_bytes())
    return digest.hexdigest()[:24]


def library(problem: str, target, name: str, build: Callable[[], Any]) -> Path | None:
    """The cached NAME.so for this problem and target, built by `build()` (an Executable) on a
    miss; None where the cache cannot be written (the caller then builds it itself)."""
    folder = cache_root() / key(problem, target)
    path = folder / f"{name}.so"
    if path.is_file():
        return path
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".so")
        os.close(handle)
        build().export_library(temporary)
        os.replace(temporary, path)  # whole or not at all, whatever runs beside it
        (folder / "key.json").write_text(json.dumps({"problem": problem, "target": str(target.export())}))
    except OSError:
        return None
    return path
