"""What the assignment notebooks call inside the student's kernel.

None of this is trusted: code in the student's notebook can replace any of it. It is here so
that a student sees, before submitting, what the instructor's grader will say. The points
that reach the gradebook are computed outside the kernel, from the source of the answer
cells (see preprocessors.py), and written over whatever these cells printed.

During the instructor's grading run (nbgrader sets NBGRADER_EXECUTION=autograde in the
kernel) `self_check` does not grade again: the trusted grader does that once, in parallel.
"""
from __future__ import annotations

import numbers
import os
from typing import Callable, Mapping

from .credit import score_part
from .questions import get_question_set
from ..errors import TvmCourseError


def autograding() -> bool:
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


class GradedOutsideTheKernel:
    """Stands in for a Result while nbgrader autogrades: the trusted grader fills these cells in."""

    def __init__(self, problem: str):
        self.problem = problem

    def __repr__(self) -> str:
        return (
            f"{self.problem}: graded by the instructor's trusted grader, which re-grades the source of "
            "your schedule cell in a sandbox; its verdict replaces this cell's output."
        )


def my_variant(say: bool = True):
    """This student's own workload: their id ($TVM_COURSE_STUDENT, or the JupyterHub user) looked
    up in the variants.json released with the assignment, printed (`say`; the cost model, whose
    workload is derived from the variant, says its own). A clear error says what is missing."""
    from ..problems.variants import JOURNAL, student_variant

    if autograding():  # the instructor's grader derives each student's variant itself
        return JOURNAL
    student, variant = student_variant()
    if say:
        print(f"Student {student}: {variant.describe()}.")
    return variant


def grading_machine(path: str | None = None):
    """The machine that grades this assignment, as released beside the notebook
    (grading-machine.json: grading_machine.py), printed; None where the release names none. A file
    that cannot be read is said, and the notebook goes on (only the instructor can fix it)."""
    from .grading_machine import RELEASE_FILE, GradingMachineError, read

    if autograding():
        return None
    try:
        machine = read(path or RELEASE_FILE)
    except GradingMachineError as error:
        print(f"The grading machine cannot be shown ({error}): ask your instructor to release the assignment again.")
        return None
    if machine is None:
        print("Graded on: a machine your instructor has not named (no grading-machine.json beside this notebook): "
              "your self-check's speed points are this machine's, and may differ from the grade's.")
    else:
        print(f"Graded on: {machine.describe()}.")
    return machine


def self_check(problem: str, schedule: Callable | str, variant=None, *, machine_file: str | None = None, **settings):
    """Grade your schedule cell on `variant` (your own workload) the way the instructor will (with
    fresh random inputs and timing): the whole text of the cell that defined `schedule`, as plain
    Python, alone, in a fresh process (answer_cell.py), which is what the class run grades. A
    string is graded as given. Then it says which machine grades, and whether it timed on that
    machine's CPU or its speed points are an estimate (`machine_file`: where the released
    grading-machine.json is; the notebook's folder by default)."""
    if autograding():
        return GradedOutsideTheKernel(problem)
    import dataclasses

    from ..engine.config import GraderConfig
    from ..problems.variants import current_student
    from .answer_cell import grade_schedule_cell

    text = schedule if isinstance(schedule, str) else defining_cell(schedule)
    config = dataclasses.replace(GraderConfig(), **settings)
    result = grade_schedule_cell(problem, text, config, variant=variant, student=current_student() if variant is not None else None)
    note = _timing_note(problem, result, machine_file)
    print(note.text)
    result.timing_note = note  # read by points() for the speed part; not a field: the class run has none
    return result


def _timing_note(problem: str, result, machine_file: str | None):
    from ..problems import get_problem
    from .grading_machine import RELEASE_FILE, GradingMachineError, TimingNote, read, this_cpu, timing_note

    try:
        machine = read(machine_file or RELEASE_FILE)
    except GradingMachineError as error:
        return TimingNote(f"The grading machine cannot be shown ({error}): your speed points are this machine's, "
                          "and may differ from the grade's.", True)
    found = get_problem(problem)
    timed = result.cpu if found.target == "cpu" and result.yardstick_speedup is not None else None
    return timing_note(machine, this_cpu() if timed else "", timed, found)


class CellNotFound(LookupError, TvmCourseError):
    """The cell that defined a function is not in this kernel's input history; the message says why."""


def defining_cell(function: Callable) -> str:
    """The text of the notebook cell that last defined `function` in this kernel, as written (from
    IPython's input history): the cell the class run grades. Found by the name IPython compiled
    the cell under, which is the function's file name; a cell under a cell magic (`%%time`) runs
    under a name of the magic's own, and is the newest cell that defines the function once its
    IPython lines are set aside."""
    name = getattr(function, "__name__", repr(function))
    code = getattr(function, "__code__", None)
    shell = _shell()
    if code is None or shell is None:
        where = "outside a notebook's kernel" if shell is None else f"{name!r} is not a function defined in Python"
        raise CellNotFound(f"cannot find the cell that defined {name} ({where}): pass the schedule cell's text as a string")
    history = list(shell.history_manager.input_hist_raw)
    for number in range(len(history) - 1, 0, -1):
        raw = history[number]
        if name in _bound_by(raw) and code.co_filename in _compiled_names(shell, raw, number):
            return raw
    if os.path.isfile(code.co_filename) and not _is_cell_file(code.co_filename):
        raise CellNotFound(f"{name} was defined in {code.co_filename}, not in a cell of this notebook: the grader grades "
                           f"your schedule cell's text, alone, so define {name}(sch) in that cell and run it")
    for raw in reversed(history[1:]):
        if name in _bound_by(raw):
            return raw
    raise CellNotFound(f"cannot find the cell that defined {name} in this kernel's history: run your schedule cell again, "
                       "then this one")


def _compiled_names(shell, raw: str, number: int) -> set[str]:
    """The names IPython may have compiled history entry `number` under: the history keeps a
    cell without its trailing newlines, and ipykernel names a cell after its text as sent."""
    names = set()
    for ending in ("", "\n", "\n\n", "\n\n\n"):
        try:
            names.add(shell.compile.get_code_name(raw + ending, shell.transform_cell(raw + ending), number))
        except Exception:  # a cell IPython itself cannot transform defined nothing
            pass
    return names


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _is_cell_file(path: str) -> bool:
    """ipykernel names a cell's code after a file in its temporary folder (ipykernel/compiler.py)."""
    return os.path.basename(os.path.dirname(path)).startswith("ipykernel_")


def _bound_by(raw: str) -> set[str]:
    """The names a cell binds, read as plain Python with its IPython lines set aside."""
    from .answer_cell import ipython_only_lines
    from .safe_arithmetic import names_bound

    lines = raw.splitlines()
    for line in ipython_only_lines(raw):
        lines[line.number - 1] = line.text[: len(line.text) - len(line.text.lstrip())] + "pass"
    return names_bound("\n".join(lines))


def points(result, part: str, out_of: float) -> float:
    """The points a test cell shows for one part (correctness, fusion or speed) of `result`."""
    if isinstance(result, GradedOutsideTheKernel):
        print(repr(result))
        return 0.0
    score = score_part(result, part)
    print(score.message)
    note = getattr(result, "timing_note", None)
    if part == "speed" and note is not None and note.estimate:
        print("  An estimate: timed on this machine's CPU, which is not the grading machine's or not known to be "
              "(the self-check's note says why that matters).")
    earned = score.points(out_of)
    return 0.0 if earned is None else earned


def check_answer_format(question_set: str, namespace: Mapping[str, object]) -> None:
    """The visible check of a question cell: for each answer, what the grader reads of it in the
    answer cell's text (as last run in this kernel: answer_cell_text), read as the
    class run reads it (safe_arithmetic.py) on this student's variant, and where that differs from
    the value in this kernel; an answer the grader leaves unread, with its line and why. It never
    says whether an answer is right: the key is not in this package."""
    names = [q.name for q in get_question_set(question_set)]
    cell = answer_cell_text(names)
    if cell is None:  # outside a notebook's kernel: only the values here can be looked at
        _check_values(names, namespace)
        return
    from .safe_arithmetic import read_assignments

    read = read_assignments(cell, _variant_constants(namespace))
    unread = read.problems_for(names)
    missing = []
    for name in names:
        here = namespace.get(name, _NOT_SET)
        if name in unread:
            print(f"{name}: unread ({unread[name]}): as the cell stands it scores nothing")
        elif name not in read.values:
            missing.append(name)
            print(f"{name}: no answer in the answer cell")
        elif _same(read.values[name], here):
            print(f"{name} = {read.values[name]!r}: read by the grader as {read.values[name]!r}")
        else:
            kernel = "no value" if here is _NOT_SET else f"{_shown(here)}"
            print(f"{name}: the grader reads {read.values[name]!r} from the answer cell, but this kernel has {kernel}: "
                  "the grader goes by the cell's text alone (another cell changed it, or the cell was edited since it ran)")
    for note in read.notes:
        print(f"The answer cell: {note}")
    if missing:
        raise NameError(f"assign a number to {', '.join(missing)} in the answer cell above")
    if unread:
        raise UnreadAnswers(f"the grader cannot read {', '.join(unread)}: write each as NAME = a number or arithmetic, "
                            "on a line of its own at the top level of the answer cell")
    print("All answers are there, read as shown. The grader checks their values when you submit.")


class UnreadAnswers(ValueError, TvmCourseError):
    """An answer the grader would not read (inside an `if`, a `def`, ...); the message names them."""


_NOT_SET = object()


def answer_cell_text(names) -> str | None:
    """The answer cell as last run in this kernel (IPython's input history): of the cells that
    bind any of `names`, the one that binds the most of them, the newest among equals (a scratch
    cell trying one answer after the answer cell is not taken for it). "" where no cell binds
    any (values that came from elsewhere, a file or %run, are no answer: the grader reads the
    answer cell); None outside IPython."""
    shell = _shell()
    if shell is None:
        return None
    wanted = set(names)
    best, most = "", 0
    for raw in shell.history_manager.input_hist_raw[1:]:
        bound = len(wanted & _bound_by(raw))
        if bound and bound >= most:
            best, most = raw, bound
    return best


def _variant_constants(namespace: Mapping[str, object]) -> dict[str, int]:
    """The sizes the grader reads the answers with: this student's variant, as my_variant finds it."""
    from ..problems.variants import Variant, VariantError, student_variant

    try:
        return student_variant()[1].constants()
    except VariantError:
        shown = namespace.get("VARIANT")
        return shown.constants() if isinstance(shown, Variant) else {}


def _same(read, here) -> bool:
    try:
        return isinstance(here, numbers.Real) and not isinstance(here, bool) and float(read) == float(here)
    except (OverflowError, ValueError):
        return False


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_values(names, namespace: Mapping[str, object]) -> None:
    missing = []
    for name in names:
        value = namespace.get(name)
        if value is None:
            missing.append(name)
        else:
            kind = "a number" if isinstance(value, numbers.Real) and not isinstance(value, bool) else f"NOT a number ({type(value).__name__})"
            print(f"{name} = {value!r}: {kind}")
    if missing:
        raise NameError(f"assign a number to {', '.join(missing)} in the answer cell above")
    print("All answers are there. The grader reads them from the answer cell's text when you submit "
          "(run this in the notebook to see what it reads).")


def question_points(question_set: str, namespace: Mapping[str, object], out_of: float) -> float:
    """What a question cell's hidden test shows in the kernel: nothing about the values.

    The answer key is not in this package (students have it installed): only the instructor's
    trusted grader has it, and it writes the points of this cell when the notebook is graded.
    Here the cell says so and shows 0, whatever the answers, so that it is no oracle.
    """
    names = ", ".join(q.name for q in get_question_set(question_set))
    print(f"{names}: checked when you submit, by the instructor's grader (its points replace this cell's)")
    return 0.0


def allowed_primitives(problem: str) -> list[str]:
    """The schedule primitives the grader accepts for `problem`, by the names a schedule calls
    (`sch.split`, ...): engine/trace_schema.py's own list for the problem's target, which each
    assignment's text is checked against (tests/course/test_tiling_notebook.py)."""
    from ..engine.trace_schema import SCHEMAS, primitive_name
    from ..problems import get_problem

    target = get_problem(problem).target
    return sorted(primitive_name(kind) for kind, spec in SCHEMAS.items() if target == "cuda" or not spec.cuda_only)


def refused_primitives(problem: str) -> list[str]:
    """The primitives the grader refuses for `problem`, each with a message saying why."""
    from ..engine.trace_schema import REFUSED_KINDS, SCHEMAS, primitive_name
    from ..problems import get_problem

    target = get_problem(problem).target
    gpu_only = [kind for kind, spec in SCHEMAS.items() if spec.cuda_only and target != "cuda"]
    return sorted(primitive_name(kind) for kind in [*REFUSED_KINDS, *gpu_only])


def show_workload(problem: str, variant=None) -> None:
    """Print the TensorIR function a problem's schedule works on (its blocks and loops), on
    `variant`'s shapes (default: the journal's)."""
    if autograding():
        print("(not printed while the instructor grades)")
        return
    from ..problems import get_problem

    found = get_problem(problem)
    print((found.with_shape(variant.shape) if variant is not None else found).workload().script())
