"""executed_notebook: a real kernel runs a notebook once; the cache serves it until its inputs change."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.site import executed
from autograder.site.executed import LessonExecutionError, cache_key, cached_path, executed_notebook


def _notebook(path, *sources):
    notebook = new_notebook(cells=[new_code_cell(s) for s in sources])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def _stdout(notebook) -> str:
    return "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "stream")


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_COURSE_CACHE", str(tmp_path / "mine"))
    assert executed.cache_dir() == tmp_path / "mine" / "executed"
    monkeypatch.delenv("TVM_COURSE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert executed.cache_dir() == tmp_path / "xdg" / "tvm-course" / "executed"


def test_key_changes_with_the_notebook(tmp_path):
    path = _notebook(tmp_path / "a.ipynb", "print(1)")
    first = cache_key(path)
    assert cache_key(path) == first
    _notebook(path, "print(2)")
    assert cache_key(path) != first


def test_package_digest_covers_what_lessons_import_and_skips_the_site(tmp_path):
    package = tmp_path / "autograder"
    (package / "lessons").mkdir(parents=True)
    (package / "site" / "static").mkdir(parents=True)
    (package / "lessons" / "plots.py").write_text("WIDTH = 3\n")
    (package / "site" / "build.py").write_text("X = 1\n")
    (package / "site" / "static" / "site.css").write_text("body {}\n")
    first = executed.package_source_digest(package)

    (package / "site" / "build.py").write_text("X = 2\n")  # the site is not imported by lessons
    (package / "site" / "static" / "site.css").write_text("body { color: red }\n")
    (package / "lessons" / "__pycache__").mkdir()
    (package / "lessons" / "__pycache__" / "plots.cpython-311.pyc").write_bytes(b"\0")
    assert executed.package_source_digest(package) == first

    (package / "lessons" / "plots.py").write_text("WIDTH = 4\n")
    assert executed.package_source_digest(package) != first
    (package / "lessons" / "plots.py").write_text("WIDTH = 3\n")
    (package / "problems.yaml").write_text("a: 1\n")  # data files count too
    assert executed.package_source_digest(package) != first


def test_executes_once_then_serves_the_cache(use_cache, tmp_path):
    path = _notebook(tmp_path / "stamp.ipynb", "import os, time\nprint('run', os.getcwd(), time.time_ns())")
    started = time.monotonic()
    first = executed_notebook(path)
    first_seconds = time.monotonic() - started
    assert "run " + str(tmp_path) in _stdout(first)  # a real kernel, running in the notebook's folder
    assert first.metadata[executed.METADATA_KEY]["executed_seconds"] > 0
    recorded = first.metadata[executed.METADATA_KEY]
    assert recorded["cpu"] == executed.cpu_model() and recorded["tvm_version"] == executed._version("apache-tvm")
    assert recorded["executed_at"].endswith("+00:00") and recorded["machine"]
    assert cached_path(path).is_file()

    executed.clear_memory()  # as a new process would: from the file, not from memory
    started = time.monotonic()
    again = executed_notebook(path)
    assert time.monotonic() - started < min(1.0, first_seconds)
    assert _stdout(again) == _stdout(first)  # the same run (time_ns differs on every real run)

    again.cells[0].outputs.clear()  # callers get copies
    assert _stdout(executed_notebook(path)) == _stdout(first)

    rerun = executed_notebook(path, refresh=True)
    assert _stdout(rerun) != _stdout(first)


def test_two_processes_that_want_one_lesson_at_once_run_it_once(use_cache, tmp_path):
    # two test workers, or a site build beside the tests: the second waits for the first's run
    path = _notebook(tmp_path / "once.ipynb", "import time\nprint('run', time.time_ns())\ntime.sleep(2)")
    program = ("import sys; from autograder.site.executed import executed_notebook\n"
               "print(''.join(o.get('text', '') for c in executed_notebook(sys.argv[1]).cells for o in c.get('outputs', [])))")
    both = [subprocess.Popen([sys.executable, "-c", program, str(path)], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2]) for _ in range(2)]
    said = [process.communicate(timeout=180)[0] for process in both]
    assert [process.returncode for process in both] == [0, 0]
    assert said[0].startswith("run ") and said[0] == said[1]  # one run, its output served to both
    assert [p.name for p in cached_path(path).parent.glob("once-*.ipynb")] == [cached_path(path).name]


def test_the_kernel_talks_over_private_sockets_without_the_tcp_warning(tmp_path, capfd, monkeypatch):
    # over TCP, ipykernel warns at every start that the connection is not encrypted: noise for a reader
    monkeypatch.chdir(tmp_path)
    path = _notebook(tmp_path / "quiet.ipynb", "print('ran')")
    capfd.readouterr()
    notebook = executed.execute(path)
    assert "ran" in _stdout(notebook)
    said = capfd.readouterr()
    assert "running over TCP" not in said.out + said.err, said.err[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quiet.ipynb"]  # its sockets are not left beside it


def test_the_kernel_ends_with_the_run(tmp_path):
    # a kernel handed to nbclient is not shut down by it: each lesson's kernel (and its TVM
    # workers) would live on until the process that ran it ends
    import psutil

    def kernels():
        return [c.pid for c in psutil.Process().children(recursive=True)
                if "ipykernel_launcher" in " ".join(c.cmdline())]

    before = kernels()
    executed.execute(_notebook(tmp_path / "ends.ipynb", "print('ran')"))
    assert kernels() == before


def test_make_lab_starts_its_kernels_over_unix_sockets_too():
    import re
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text(encoding="utf-8")
    lab = re.search(r"^lab:.*\n\t(.+)$", makefile, re.M).group(1)
    assert "jupyter lab" in lab and "--KernelManager.transport=ipc" in lab


def test_a_failing_cell_names_the_notebook_and_error_and_is_not_cached(use_cache, tmp_path):
    path = _notebook(tmp_path / "broken.ipynb", "x = 1", "raise ValueError('the tile is too big')")
    with pytest.raises(LessonExecutionError) as raised:
        executed_notebook(path)
    message = str(raised.value)
    assert "broken.ipynb" in message and "ValueError" in message and "the tile is too big" in message
    assert not cached_path(path).exists()


def test_unknown_kernel_is_a_clear_error(use_cache, tmp_path):
    path = _notebook(tmp_path / "k.ipynb", "print(1)")
    with pytest.raises(LessonExecutionError, match="kernel 'no-such-kernel'.*kernelspec list"):
        executed_notebook(path, kernel_name="no-such-kernel")


def test_missing_notebook(tmp_path):
    with pytest.raises(FileNotFoundError, match="no notebook at"):
        executed_notebook(tmp_path / "nope.ipynb")


def test_a_damaged_cache_entry_is_executed_again(use_cache, tmp_path):
    path = _notebook(tmp_path / "damaged.ipynb", "print('fresh')")
    target = cached_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("{not json", encoding="utf-8")
    executed.clear_memory()
    assert "fresh" in _stdout(executed_notebook(path))
    assert nbformat.read(target, as_version=4).cells  # replaced by a good entry


def test_cpu_model_reads_linux_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    assert executed.cpu_model(cpuinfo) == "AMD EPYC 9654 96-Core Processor"
    assert executed.cpu_model(tmp_path / "absent")  # falls back to lscpu or Python, never empty


def test_key_follows_the_cpu_the_lesson_compiles_for(monkeypatch, tmp_path):
    from autograder.site.executed import lesson_mcpu

    path = _notebook(tmp_path / "02-tiling-trace.ipynb", "print(1)")
    monkeypatch.delenv("TVM_COURSE_MCPU", raising=False)
    monkeypatch.delenv("TVM_COURSE_LESSON_MCPU", raising=False)
    own = cache_key(path)
    monkeypatch.setenv("TVM_COURSE_MCPU", "haswell")
    assert lesson_mcpu(path) == "haswell" and cache_key(path) != own
    monkeypatch.setenv("TVM_COURSE_LESSON_MCPU", "01-two-levels=skylake-avx512, 02-tiling-trace=x86-64-v2")
    assert lesson_mcpu(path) == "x86-64-v2" and lesson_mcpu(tmp_path / "01-two-levels.ipynb") == "skylake-avx512"
    assert lesson_mcpu(tmp_path / "other.ipynb") == "haswell"  # no entry of its own: TVM_COURSE_MCPU
    pinned = cache_key(path)
    monkeypatch.setenv("TVM_COURSE_MCPU", "znver3")
    assert cache_key(path) == pinned != own  # its own entry wins over TVM_COURSE_MCPU
