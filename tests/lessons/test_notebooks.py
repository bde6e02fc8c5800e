"""The lesson notebooks: committed clean, shaped as the course expects, and run top to bottom by a real kernel."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import syllabus

ROOT = Path(__file__).resolve().parents[2]
LESSONS_DIR = ROOT / "lessons"
COMMITTED = sorted(LESSONS_DIR.glob("*.ipynb"))
COURSE = syllabus.load()
LESSONS = [(unit, lesson) for unit in COURSE.units for lesson in unit.lessons]
TIME_LIMIT_S = 300  # each lesson must run top to bottom in under five minutes on a course machine


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def test_every_committed_notebook_is_in_the_syllabus():
    listed = {(ROOT / lesson.notebook).resolve() for _, lesson in LESSONS}
    assert COMMITTED, "no lesson notebooks found"
    assert {p.resolve() for p in COMMITTED} <= listed


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_notebook_carries_no_outputs(path):
    notebook = _read(path)
    nbformat.validate(notebook)
    dirty = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs or execution counts; clear them before committing"
    assert notebook.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("unit,lesson", LESSONS, ids=lambda x: getattr(x, "id", None))
def test_lesson_opens_with_goals_and_ends_with_its_quiz_and_assignments(unit, lesson):
    notebook = _read(ROOT / lesson.notebook)
    first, last = notebook.cells[0], notebook.cells[-1]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {lesson.title}")
    assert "### Learning goals" in first.source
    assert last.cell_type == "markdown"
    # Students take the released student copy; quizzes/ holds the instructor copy with the answers.
    assert f"tvm-course quiz take {lesson.student_quiz}" in last.source
    assert f'quiz.show("../{lesson.student_quiz}")' in last.source
    assert "make student-quizzes" in last.source
    assert f"quiz take {lesson.quiz}" not in last.source and f'quiz.show("../{lesson.quiz}")' not in last.source
    # Students receive the released assignment (nbgrader), never course/source/: name it by its id.
    assert "course/source" not in last.source, "students never get course/source/: name the released assignment"
    named = set(re.findall(r"`([\w-]+)` assignment", last.source))
    assert named, "the last cell should name the assignment(s) that follow, as: the `ID` assignment"
    assert named <= {a.id for a in unit.assignments}
    for a in unit.assignments:
        if a.after == lesson.id:
            assert a.id in named, f"{lesson.id} should point to the `{a.id}` assignment"


def test_python3_kernel_runs_this_environment():
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.fail("no 'python3' kernel: run `.venv/bin/python -m ipykernel install --sys-prefix --name python3` (make does)")
    # jupyter_client starts a bare "python" with the Python that launches the kernel.
    assert spec.argv[0] in ("python", "python3", sys.executable), (
        f"the python3 kernel starts {spec.argv[0]}, not this environment's {sys.executable}; "
        "reinstall it with `.venv/bin/python -m ipykernel install --sys-prefix --name python3`"
    )


def _executed(path: Path):
    """The lesson run by a real kernel, once per test run: the site build reads the same run
    (autograder.site.executed; tests/conftest.py names the CPU each lesson runs for)."""
    from autograder.site.executed import METADATA_KEY, executed_notebook, lesson_mcpu

    notebook = executed_notebook(path)
    return notebook, notebook.metadata[METADATA_KEY]["executed_seconds"], lesson_mcpu(path)


def _text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            elif output.output_type in ("display_data", "execute_result"):
                parts.append(output.data.get("text/markdown", output.data.get("text/plain", "")))
    return "\n".join(parts)


def _images(notebook) -> int:
    return sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells
        for output in cell.get("outputs", [])
    )


def _plots_have_text(notebook) -> None:
    """Every plot carries its summary as alt text, and the same summary follows it as text."""
    for index, cell in enumerate(notebook.cells):
        outputs = cell.get("outputs", [])
        for position, output in enumerate(outputs):
            if "image/png" not in output.get("data", {}):
                continue
            alt = output.get("metadata", {}).get("image/png", {}).get("alt")
            assert alt, f"cell {index}: a plot without alt text"
            after = "".join(o.text for o in outputs[position + 1:] if o.output_type == "stream")
            assert after.startswith(alt), f"cell {index}: the plot's summary is not printed after it"


def _check_ran_here(notebook, elapsed: float, name: str):
    from autograder.site.executed import METADATA_KEY

    assert notebook.metadata[METADATA_KEY]["kernel_name"] == "python3"  # test_python3_kernel_runs_this_environment
    assert elapsed < TIME_LIMIT_S, f"{name} took {elapsed:.0f} s; the limit is {TIME_LIMIT_S} s"


def _banner_names(text: str, mcpu: str) -> None:
    """The lab's banner says which CPU the run compiled for."""
    if mcpu:
        assert f'"mcpu":"{mcpu}"' in text.replace(" ", ""), f"the run should compile for {mcpu}"


def _check_two_levels(notebook) -> str:
    text = _text(notebook)
    assert "TVM threads used for timing: **1**" in text
    assert "| fused + scheduled |" in text
    assert "pixels fill" in text and "float32 lanes each" in text  # the vector width, this target's
    assert "Spearman rank correlation" in text
    assert "the fastest's largest error against the float64 answer" in text and "| best sampled candidate |" in text
    # the search ran on the design space, and said what happened
    assert "distinct candidates drawn from the design space" in text
    assert "MetaSchedule's search: 8 trials asked for, 8 built, 8 ran" in text, "every trial should build and run here"
    assert "It found a schedule" in text and "| MetaSchedule, 8 trials |" in text
    assert "Total trials" not in text  # MetaSchedule's own running totals, "Total trials: 0" first, are in its log
    assert "| best sampled candidate (our design space) |" in text
    assert "'padding inlined into the conv' is" in text
    assert "MISSING" not in text  # every renamed API resolves in the installed TVM
    assert _images(notebook) >= 3  # speedup bars, predicted vs measured, search curves
    _plots_have_text(notebook)
    assert "Bar chart: Graph level alone, then both levels. Speedup over 'unfused'" in text
    feedback = "\n".join(_exercise_feedback(notebook))
    # the exercises left as they are run, and their checks say what is missing
    assert "✗ Exercise (TVMScript): not yet" in feedback and "its output is x @ w, without the bias and the ReLU" in feedback
    assert "✗ Exercise (design space): not yet" in feedback and "one value, so the search cannot choose it" in feedback
    assert "… Puzzle: no answer yet" in feedback and "`compute` still runs at the root" in feedback
    return text


@pytest.fixture(scope="module")
def two_levels():
    return _executed(LESSONS_DIR / "01-two-levels.ipynb")


@pytest.mark.slow
def test_two_levels_runs_top_to_bottom(two_levels):
    """Lesson 1, run once for this run's CPU (tests/conftest.py); the site build reads the same run."""
    notebook, elapsed, mcpu = two_levels
    _check_ran_here(notebook, elapsed, f"01-two-levels{' under ' + mcpu if mcpu else ''}")
    text = _check_two_levels(notebook)
    _banner_names(text, mcpu)


TILING_TRACE = LESSONS_DIR / "02-tiling-trace.ipynb"
GPU_TRACE = LESSONS_DIR / "03-gpu-trace.ipynb"
# The TVM calls each lesson teaches, typed in its cells (the student reads them, not a helper's name).
TAUGHT_CALLS = {
    TILING_TRACE: ("tvm.s_tir.Schedule(fused_func)", 'sch.get_sblock("conv2d_nchw")', "sch.get_loops(conv)",
                   "sch.split(yy, factors=[None, 16])", "sch.reorder(y_outer, x_outer, y_inner, x_inner)",
                   'sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)', "print(sch.mod.script())", ".vectorize(",
                   'tvm.compile(fused_func, target="c")', 'inspect_source("ll")', 'tvm.tirx.get_tir_pipeline("s_tir")'),
    GPU_TRACE: ("tvm.s_tir.Schedule(fused_func)", "sch.split(yy, factors=[None, 16])",
                'sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)', "tvm.compile(sch.mod, target=cuda)",
                ".bind(", '.cache_read(matmul, operand, "shared")', '.cache_write(matmul, 0, "local")',
                "tvm.s_tir.analysis.verify_gpu_code("),
}
SPLIT_LESSONS = list(TAUGHT_CALLS)


def _code(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


@pytest.mark.parametrize("path", SPLIT_LESSONS, ids=lambda p: p.stem)
def test_each_lesson_types_the_tvm_calls_it_teaches_in_its_cells(path):
    """The student reads (and could type) every primitive the lesson teaches, not a helper's name."""
    code = _code(_read(path))
    for call in TAUGHT_CALLS[path]:
        assert call in code, f"{path.name} should show {call} in a cell"
    assert "example_source(" not in code and "journal_steps(" not in code


@pytest.mark.parametrize("path,at_least", [(TILING_TRACE, 5), (GPU_TRACE, 2)], ids=lambda x: getattr(x, "stem", x))
def test_each_lesson_has_exercises_that_check_themselves(path, at_least):
    exercises = [cell for cell in _read(path).cells if "exercise" in cell.metadata.get("tags", [])]
    assert len(exercises) >= at_least
    for number, cell in enumerate(exercises, start=1):
        assert cell.cell_type == "code" and cell.source.startswith(f"# Exercise {number} ("), cell.source[:60]
        assert "exercises." in cell.source, "each exercise checks itself"


def test_the_split_lessons_hand_over_in_order():
    """Lesson 2 (the CPU) sends the student on to lesson 3 (the GPU), which starts from lesson 2's
    schedule; neither teaches the other's half."""
    cpu, gpu = _read(TILING_TRACE), _read(GPU_TRACE)
    assert "`03-gpu-trace.ipynb`" in cpu.cells[-1].source and "`03-gpu-trace.ipynb`" in cpu.cells[0].source
    assert "`gpu-tiling` assignment" not in cpu.cells[-1].source
    assert ".bind(" not in _code(cpu) and "cuda" not in _code(cpu).lower()
    assert "Lesson 2" in gpu.cells[0].source and ".vectorize(" not in _code(gpu)


def test_the_gpu_lesson_describes_the_gpu_assignment_as_it_is():
    """What next says what the assignment asks, that kernels run on an OpenCL device where there
    is no GPU, and that the speed points wait for a GPU, with provisional edges."""
    from autograder.problems import get_problem

    text = " ".join(_read(GPU_TRACE).cells[-1].source.split())
    for said in ("every block bound to GPU threads", '"local"', "in shared memory", "more than one output",
                 "OpenCL device", "pending until a GPU measures them", "provisional", "three numbers of GPU arithmetic"):
        assert said in text, said
    problem = get_problem("gpu-fused-conv")
    assert problem.target == "cuda"
    assert "checked statically" not in text and "staging inputs" not in text


@pytest.mark.parametrize("path", [LESSONS_DIR / "01-two-levels.ipynb", *SPLIT_LESSONS], ids=lambda p: p.stem)
def test_each_lesson_says_its_time_and_where_the_measured_range_is(path):
    """A time estimate, and the run time only as measured under load in docs/students.md, never a
    number from one machine written into the lesson."""
    opening = _read(path).cells[0].source
    assert "**Time.**" in opening and "docs/students.md" in opening
    assert path.name in (ROOT / "docs" / "students.md").read_text(encoding="utf-8").split("## Lessons", 1)[1]


_OPTIONAL = {  # the sections a student may skip: (lesson, what the heading names)
    ("01-two-levels.ipynb", "MetaSchedule end to end"),
    ("02-tiling-trace.ipynb", "a roofline"),
    ("02-tiling-trace.ipynb", "the machine code"),
}


def _bound_names(source: str) -> set[str]:
    import ast

    bound = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound


def _loaded_names(source: str) -> set[str]:
    import ast

    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_a_skipped_optional_section_leaves_nothing_missing(path):
    """A student who skips an optional section's cells can run the rest: no later cell uses a name
    that only the skipped cells bind."""
    cells = _read(path).cells
    heading = re.compile(r"^#{2,3} ", re.M)
    optional, inside = [], False
    for cell in cells:
        if cell.cell_type == "markdown" and heading.search(cell.source):
            inside = bool(re.search(r"^#{2,3} Optional: ", cell.source, re.M))
        optional.append(inside)
    code = [(cell.source, skipped) for cell, skipped in zip(cells, optional) if cell.cell_type == "code"]
    kept_bound = set().union(*(_bound_names(source) for source, skipped in code if not skipped))
    only_optional = set().union(*(_bound_names(source) for source, skipped in code if skipped)) - kept_bound
    used = set().union(*(_loaded_names(source) for source, skipped in code if not skipped))
    assert not only_optional & used, f"{path.name}: {sorted(only_optional & used)} bound only in an optional section"


def test_optional_sections_say_so_and_why():
    found = set()
    for path in COMMITTED:
        for cell in _read(path).cells:
            if cell.cell_type != "markdown":
                continue
            for heading in re.findall(r"^#+ Optional: (.+)$", cell.source, re.M):
                found.add((path.name, next(name for lesson, name in _OPTIONAL if lesson == path.name and name in heading)))
                after = cell.source.split(heading, 1)[1]
                assert "skip" in after.split("\n\n")[1], f"{path.name}: '{heading}' should say why it can be skipped"
    assert found == _OPTIONAL


_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_EXERCISE_COUNT = re.compile(rf"\b({'|'.join(_COUNT_WORDS)}|\d+) exercises\b", re.I)


@pytest.mark.parametrize("path", SPLIT_LESSONS, ids=lambda p: p.stem)
def test_no_page_miscounts_the_lessons_exercises(path):
    """A count of exercises written in the text goes stale when one is added (lesson 2 said six
    and had seven): the lesson and the students' guide name none, or the right one."""
    tagged = len([cell for cell in _read(path).cells if "exercise" in cell.metadata.get("tags", [])])
    texts = {path.name: "\n".join(cell.source for cell in _read(path).cells if cell.cell_type == "markdown"),
             "docs/students.md": (ROOT / "docs" / "students.md").read_text(encoding="utf-8")}
    for where, text in texts.items():
        if where == "docs/students.md":  # the row of this lesson in the guide's table
            text = next(line for line in text.splitlines() if line.startswith(f"| `lessons/{path.name}`"))
        for found in _EXERCISE_COUNT.finditer(text):
            word = found.group(1).lower()
            count = int(word) if word.isdigit() else _COUNT_WORDS[word]
            assert count == tagged, f"{where} says {found.group(0)!r}; {path.name} has {tagged} exercises"


# A measured quantity stated in prose: "1.33x", "0.46 ms", "118 GFLOP/s", "10 GB/s".
_MEASURED = re.compile(r"\b\d+(\.\d+)?(x\b| ?(ms|µs|us|GFLOP/s|GB/s)\b)")


@pytest.mark.parametrize("path", SPLIT_LESSONS, ids=lambda p: p.stem)
def test_lesson_prose_states_no_measured_number(path):
    """Numbers measured on some machine are printed by the code, never written in the text."""
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            found = _MEASURED.search(cell.source)
            assert not found, f"markdown states a measured number: {found.group(0)!r} in {cell.source[:80]!r}"


def _exercise_feedback(notebook) -> list[str]:
    found = []
    for cell in notebook.cells:
        if "exercise" in cell.metadata.get("tags", []):
            outputs = [o.data.get("text/markdown", "") for o in cell.outputs if o.output_type in ("display_data", "execute_result")]
            found.append("\n".join(outputs))
    return found


def _check_tiling_trace(notebook) -> str:
    text = _text(notebook)
    assert "+for nn, ff, yy_0, xx_0 in T.grid(1, 16, 14, 14):" in text
    assert "replayed loop nest equals the original: True" in text
    assert "| conv2d_nchw_intermediate | 1 x 1 x 16 x 16 | global | 1.0 KiB |" in text
    assert "| pad_temp | 1 x 3 x 18 x 18 | global | 3.8 KiB |" in text  # one tile's input window
    # the pass list is printed from the installed TVM: passes run before LowerInitBlock
    listed = next(line for line in text.splitlines() if "s_tir.LowerInitBlock" in line).split(", ")
    assert listed.index("s_tir.LowerInitBlock") > 0
    assert listed.index("s_tir.LowerInitBlock") < listed.index("s_tir.CompactBufferAllocation")
    assert "What this run measured, on this CPU" in text and "The roofline's verdicts, on this CPU" in text
    # the journal's "C++ function (PrimFunc)": a PrimFunc is TensorIR; building it makes C, LLVM IR, machine code
    assert "fused_func is a tvm.tirx.function.PrimFunc" in text
    assert "for (int32_t ff = 0; ff < 16; ++ff) {" in text and "define " in text and "lines of assembly for" in text
    _check_exercises_left_as_handed_out(notebook, at_least=5)
    assert _images(notebook) >= 4  # loop nests, tile grid, speedup bars, roofline
    _plots_have_text(notebook)
    assert "Tile grid. The 224 x 224 output is cut into 14 x 14 = 196 tiles of 16 x 16" in text
    assert "Roofline: The four builds against this core's roofs. Measured " in text
    assert "This core's roofs, measured now in 3 interleaved rounds" in text
    return text


def _check_exercises_left_as_handed_out(notebook, at_least: int) -> None:
    feedback = _exercise_feedback(notebook)
    assert len(feedback) >= at_least
    for number, note in enumerate(feedback, start=1):
        # a starting point runs, and its check says what is missing: never an error, never "done"
        assert note.startswith((f"**… Exercise {number}: no answer yet**", f"**✗ Exercise {number}: not yet**")), note[:80]


def _check_gpu_trace(notebook) -> str:
    text = _text(notebook)
    assert "+for nn, ff, yy_0, xx_0 in T.grid(1, 16, 14, 14):" not in text  # lesson 2's diff is not repeated
    assert "device modules imported by the build: 0" in text
    assert 'extern "C" __global__' in text
    assert "__shared__ alignas(64) float x_shared_ptr[256];" in text  # the head's staged chunk
    assert "| sum in registers | 256 | 2048 | 64 |" in text and "| sum in shared memory | 256 | 3072 | 545 |" in text
    assert "Used threads per block (2048) is greater than the allowed maximum (1024)" in text
    # without a GPU the yardstick's kernels still run, on the OpenCL device, and are checked; where
    # no device builds kernels, the lesson says what it could not run, and why, and goes on
    from device_state import opencl_device

    device, missing = opencl_device()
    if missing:
        assert "Not run: no OpenCL device here builds kernels" in text and "what to install" in text
    else:
        assert "Run on the OpenCL device" in text and "yes, both thread orders" in text
    _check_exercises_left_as_handed_out(notebook, at_least=2)
    assert _images(notebook) >= 1  # the journal's loops beside the yardstick's, bound
    _plots_have_text(notebook)
    return text


@pytest.fixture(scope="module")
def gpu_trace():
    return _executed(GPU_TRACE)


@pytest.mark.slow
def test_gpu_trace_runs_top_to_bottom(gpu_trace):
    """Lesson 3, run once for this run's CPU (its kernels are CUDA and OpenCL: the CPU changes only the host code)."""
    notebook, elapsed, mcpu = gpu_trace
    _check_ran_here(notebook, elapsed, f"03-gpu-trace{' under ' + mcpu if mcpu else ''}")
    _check_gpu_trace(notebook)


@pytest.fixture(scope="module")
def tiling_trace():
    return _executed(TILING_TRACE)


@pytest.mark.slow
def test_tiling_trace_runs_top_to_bottom(tiling_trace):
    """Lesson 2, run once for this run's CPU for it (an SSE-only x86 on x86 hosts: tests/conftest.py)."""
    notebook, elapsed, mcpu = tiling_trace
    _check_ran_here(notebook, elapsed, f"02-tiling-trace{' under ' + mcpu if mcpu else ''}")
    text = _check_tiling_trace(notebook)
    _banner_names(text, mcpu)
    if mcpu:
        assert f"What this run measured, on this CPU ({mcpu})" in text
    if mcpu == "x86-64-v2":  # no FMA, no AVX: the tables and roofs say so instead of counting zeros
        assert "fused multiply-add: **no**" in text
        assert "multiply + add peak (no FMA on this target" in text
        assert "Counted nothing in any build here: fused multiply-adds on vectors" in text
        assert "| vector instruction set of the code | SSE |" in text
