"""Lesson notebooks executed by a real Jupyter kernel, cached so each one runs once.

    from autograder.site.executed import executed_notebook
    nb = executed_notebook("lessons/01-two-levels.ipynb")   # a NotebookNode with outputs

Executing a lesson takes minutes; its outputs only change when its inputs do. The cache key
covers everything an executed lesson depends on that this package can know about:

- the notebook file's bytes;
- the source of the `autograder` package that lessons import (every file under it except
  `autograder/site/`, which renders lessons but is never imported by them);
- the versions of tvm-course, TVM, Python and the kernel name;
- the CPU the lesson compiles for: `TVM_COURSE_MCPU`, or the notebook's own entry in
  `TVM_COURSE_LESSON_MCPU` ("01-two-levels=haswell,02-tiling-trace=x86-64-v2"), which runs
  that notebook's kernel with `TVM_COURSE_MCPU` set to it. The test suite uses it to run each
  lesson under a different CPU once, and the site build of the same session reuses those runs.

The kernel shows matplotlib's inline figures as "retina" PNGs (KERNEL_ARGUMENTS): twice the pixels
of the size they are shown at, which their output metadata gives, so that they stay sharp on phones
and high-DPI screens (figures.py). The lessons' own plots (autograder/lessons/plots.py) do the same.

The cache lives in `$TVM_COURSE_CACHE/executed/` when that variable is set, else in
`$XDG_CACHE_HOME/tvm-course/executed/` (by default `~/.cache/tvm-course/executed/`). Entries
are written atomically, so concurrent builds cannot leave a torn file; a failed run is never
cached. The site build and the lesson tests call the same function, so a test session
executes each lesson once.
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.metadata
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from ..errors import TvmCourseError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; each process runs a lesson itself
    fcntl = None

KERNEL_NAME = "python3"
# A lesson runs in 1-5 minutes in all; one cell that runs this long is stuck.
CELL_TIMEOUT_S = 900
CACHE_ENV = "TVM_COURSE_CACHE"
MCPU_ENV, LESSON_MCPU_ENV = "TVM_COURSE_MCPU", "TVM_COURSE_LESSON_MCPU"
# Bump when what is stored, or how it is keyed, changes.
CACHE_FORMAT = "executed-notebook/v4"  # v2: the run's machine, date and TVM version; v3: retina figures; v4: the CPU compiled for
KERNEL_ARGUMENTS = ["--InlineBackend.figure_formats=retina"]
# Package files that lessons never import: changing them must not re-execute lessons.
_NOT_IMPORTED_BY_LESSONS = ("site",)
_SOURCE_SUFFIXES = (".py", ".json", ".yaml", ".yml")

# Where an executed notebook records how and where its run went: {"executed_seconds", "kernel_name",
# "executed_at" (UTC, ISO 8601), "cpu" (the CPU model), "machine" (e.g. x86_64), "tvm_version"};
# the website shows the last four on each lesson page, since its numbers were measured there.
METADATA_KEY = "tvm_course_execution"

_memory: dict[str, NotebookNode] = {}


class LessonExecutionError(RuntimeError, TvmCourseError):
    """A lesson notebook failed to run; the message names the notebook, the cell and the error."""


def cache_dir() -> Path:
    """Where executed notebooks are stored (see the module docstring)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser() / "executed"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "tvm-course" / "executed"


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def package_source_digest(package_dir: str | Path | None = None) -> str:
    """SHA-256 over the relative paths and bytes of the package files that lessons can import."""
    package_dir = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*")):
        relative = path.relative_to(package_dir)
        if (not path.is_file() or path.suffix not in _SOURCE_SUFFIXES or "__pycache__" in relative.parts
                or relative.parts[0] in _NOT_IMPORTED_BY_LESSONS):
            continue
        digest.update(relative.as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def lesson_mcpu(path: str | Path) -> str:
    """The CPU `path` compiles for when executed here ('' for this machine's own)."""
    for entry in os.environ.get(LESSON_MCPU_ENV, "").split(","):
        stem, _, mcpu = entry.strip().partition("=")
        if stem and stem == Path(path).stem:
            return mcpu.strip()
    return os.environ.get(MCPU_ENV, "")


def cache_key(path: str | Path, kernel_name: str = KERNEL_NAME) -> str:
    """The hex key an executed copy of `path` is stored under."""
    parts = [
        CACHE_FORMAT,
        hashlib.sha256(Path(path).read_bytes()).hexdigest(),
        package_source_digest(),
        f"tvm-course {_version('tvm-course')}",
        f"apache-tvm {_version('apache-tvm')}",
        f"python {platform.python_version()} {platform.machine()}",
        f"kernel {kernel_name}",
        f"mcpu {lesson_mcpu(path)}",
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def cached_path(path: str | Path, kernel_name: str = KERNEL_NAME) -> Path:
    """The cache file for `path`: named after the notebook (for people) and the key (for lookups)."""
    return cache_dir() / f"{Path(path).stem}-{cache_key(path, kernel_name)[:32]}.ipynb"


def executed_notebook(path: str | Path, *, refresh: bool = False, kernel_name: str = KERNEL_NAME,
                      cell_timeout_s: int = CELL_TIMEOUT_S) -> NotebookNode:
    """`path` executed top to bottom by a real kernel, from the cache when its key matches.

    The notebook runs in its own folder (as in JupyterLab). A cell that raises stops the run
    with LessonExecutionError, and nothing is cached. `refresh=True` runs it even when cached.
    `notebook.metadata[METADATA_KEY]["executed_seconds"]` is how long the run took (the run
    that filled the cache, when it comes from there). Each call returns a fresh copy.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no notebook at {path}")
    target = cached_path(path, kernel_name)
    key = str(target)
    if not refresh and key in _memory:
        return copy.deepcopy(_memory[key])
    # One process runs a lesson while the others that want it wait, then read what it cached:
    # two test workers, or a site build beside the tests, would each spend the minute again.
    with _running(target):
        notebook = None if refresh else _read_cached(target)
        if notebook is None:
            notebook = execute(path, kernel_name=kernel_name, cell_timeout_s=cell_timeout_s)
            if cached_path(path, kernel_name) != target:
                # a source changed while the notebook ran; the outputs may mix both, so keep them uncached
                return copy.deepcopy(notebook)
            _store(notebook, target)
    _memory[key] = notebook
    return copy.deepcopy(notebook)


def _read_cached(target: Path) -> NotebookNode | None:
    if not target.is_file():
        return None
    try:
        return nbformat.read(target, as_version=4)
    except Exception:  # a damaged cache entry is re-executed, not trusted
        return None


@contextlib.contextmanager
def _running(target: Path):
    """Held while `target`'s notebook runs: an advisory lock on a file beside the cache entry.
    Where the lock cannot be taken (a read-only cache, a file system without locks) each process
    runs the notebook itself, as before there was a lock."""
    if fcntl is None:
        yield
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(target.with_name(f".{target.name}.lock"), os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(handle)  # closing drops the lock


def execute(path: str | Path, *, kernel_name: str = KERNEL_NAME, cell_timeout_s: int = CELL_TIMEOUT_S) -> NotebookNode:
    """Run the notebook now, without the cache; LessonExecutionError if a cell fails."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    started = time.monotonic()
    mcpu = lesson_mcpu(path)
    environment = {**os.environ, MCPU_ENV: mcpu} if mcpu else {k: v for k, v in os.environ.items() if k != MCPU_ENV}
    try:
        with _kernel_manager(kernel_name) as manager:
            client = NotebookClient(notebook, km=manager, kernel_name=kernel_name, timeout=cell_timeout_s,
                                    extra_arguments=list(KERNEL_ARGUMENTS),
                                    resources={"metadata": {"path": str(path.resolve().parent)}})
            client.execute(env=environment)
    except CellExecutionError as err:
        raise LessonExecutionError(f"{path}: a cell raised {err.ename}: {err.evalue}\n{err}") from None
    except CellTimeoutError:
        raise LessonExecutionError(f"{path}: a cell ran longer than {cell_timeout_s} s and was stopped") from None
    except DeadKernelError as err:
        raise LessonExecutionError(f"{path}: the kernel died while running the notebook ({err})") from None
    except Exception as err:  # e.g. no such kernel: say which notebook and what to do
        raise LessonExecutionError(
            f"{path}: could not run the notebook with kernel {kernel_name!r}: {type(err).__name__}: {err}. "
            f"Is the kernel installed? `make venv` installs it; `jupyter kernelspec list` shows what is there."
        ) from None
    notebook.metadata[METADATA_KEY] = {"executed_seconds": round(time.monotonic() - started, 3),
                                       "kernel_name": kernel_name, "mcpu": mcpu, **run_environment()}
    return notebook


@contextlib.contextmanager
def _kernel_manager(kernel_name: str):
    """A kernel manager that talks to its kernel over Unix sockets in a private folder, removed
    afterwards. Over TCP (jupyter_client's default) ipykernel warns at every start that the
    connection is not encrypted: noise here, where kernel and client share one machine and user.
    (Windows has no such sockets: TCP there.)"""
    from jupyter_client.manager import KernelManager

    if os.name == "nt":
        with _shut_down_after(KernelManager(kernel_name=kernel_name)) as manager:
            yield manager
        return
    with tempfile.TemporaryDirectory(prefix="tvm-course-kernel-") as sockets:
        with _shut_down_after(KernelManager(kernel_name=kernel_name, transport="ipc", ip=os.path.join(sockets, "kernel"),
                                            connection_file=os.path.join(sockets, "kernel.json"))) as manager:
            yield manager


@contextlib.contextmanager
def _shut_down_after(manager):
    """nbclient shuts down only a kernel whose manager it made itself: one handed to it (as here,
    for the sockets) would live on, with the lesson's TVM workers, until this process ends."""
    try:
        yield manager
    finally:
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)


def run_environment() -> dict[str, str]:
    """Where and when a lesson runs now: what its measured numbers depend on."""
    from datetime import datetime, timezone

    return {
        "executed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "machine": platform.machine() or "unknown",
        "tvm_version": _version("apache-tvm"),
    }


@dataclass(frozen=True)
class MeasuredOn:
    """Where an executed lesson's numbers were measured (None where the run did not record it)."""

    cpu: str | None
    machine: str | None
    date: str | None  # YYYY-MM-DD, UTC
    tvm_version: str | None

    @classmethod
    def of(cls, notebook: NotebookNode) -> "MeasuredOn":
        info = notebook.metadata.get(METADATA_KEY, {}) or {}

        def text(key: str) -> str | None:
            value = info.get(key)
            return str(value) if value else None

        executed_at = text("executed_at")
        return cls(text("cpu"), text("machine"), executed_at[:10] if executed_at else None, text("tvm_version"))


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """This machine's CPU model as Linux reports it (else lscpu's, else Python's best guess)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("model name", "hardware", "cpu model") and value.strip():
            return value.strip()
    try:
        import subprocess

        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        lscpu = ""
    for line in lscpu.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "an unknown CPU"


def _store(notebook: NotebookNode, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            nbformat.write(notebook, stream)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it private; a cache file need not be
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def clear_memory() -> None:
    """Forget the in-process copies (the files stay); for tests that change the cache folder."""
    _memory.clear()


if __name__ == "__main__":  # python -m autograder.site.executed NOTEBOOK...: warm the cache
    for name in sys.argv[1:]:
        executed_notebook(name)
        print(f"{name}: executed ({cached_path(name)})")
