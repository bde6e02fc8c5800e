"""What students receive holds no assignment's full-credit answer (the issue on students' own work).

Every CPU schedule the package or the lessons show is graded for real and must earn at most the
correctness and fusion points and a third of the speed points; the reference solutions, which
do earn more, appear nowhere in the package or the lessons. The cost model's full-credit bar is
the instructor's solution cell of the source notebook: none of its code is in the package (what
the package holds instead, the public baseline, earns less: tests/costmodel/test_baseline.py).
"""
from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest

import solutions
from autograder import examples
from autograder.engine.pipeline import grade_source
from autograder.lessons import schedules
from autograder.problems import get_problem

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SPEED_SHARE = get_problem("tile-fused-conv").weights.speed


def as_submission(function) -> str:
    """A package function written as the submission a student would paste."""
    source = inspect.getsource(function)
    name = function.__name__
    return source.replace(f"def {name}(sch) -> None:", "def schedule(sch):", 1).replace(f"def {name}(sch):", "def schedule(sch):", 1)


def lesson_schedules() -> dict[str, str]:
    """Every function of `sch` a lesson's code cells define, as the submission pasting it makes."""
    found = {}
    for path in sorted((ROOT / "lessons").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or "def " not in source:
                continue
            for node in ast.parse(source).body:
                if isinstance(node, ast.FunctionDef) and [a.arg for a in node.args.args] == ["sch"]:
                    found[f"{path.stem}: {node.name}"] = ast.get_source_segment(source, node) + f"\n\nschedule = {node.name}\n"
    return found


SHOWN = {
    **lesson_schedules(),
    **{f"examples/{name}": examples.source(name) for name in examples.names()},
    "the CPU yardstick (lessons 1 and 2)": schedules.yardstick_source("tile-fused-conv"),
    "lesson 2: journal + vectorised Add/ReLU": "from autograder.lessons import schedules\n"
    + as_submission(schedules.journal_with_vectorized_tail).replace("example(", "schedules.example("),
    "lesson 1: padding inlined": as_submission(schedules.pad_inlined),
}


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_a_schedule_students_can_read_earns_at_most_a_third_of_the_speed_points(name, fast_config):
    result = grade_source("tile-fused-conv", SHOWN[name], fast_config)
    assert result.credit.get("speed", 0.0) <= SPEED_SHARE / 3 + 1e-9, (name, result.to_text())


def test_the_reference_solutions_earn_more_so_the_check_can_fail(fast_config):
    result = grade_source("tile-fused-conv", solutions.source("blocked_vectorized"), fast_config)
    assert result.credit["speed"] > SPEED_SHARE / 3


def _normalised_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(("#", '"""'))]


def _student_facing_texts():
    for path in sorted((ROOT / "autograder").rglob("*")):
        if path.suffix in (".py", ".json", ".yaml", ".js", ".html") and "__pycache__" not in path.parts:
            yield path, path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "lessons").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        yield path, "\n".join("".join(cell["source"]) for cell in cells)


@pytest.mark.parametrize("name", ["blocked_vectorized", "gpu_bound"])
def test_no_reference_solution_appears_in_the_package_or_the_lessons(name):
    solution = _normalised_lines(solutions.source(name))
    window = 6  # this many consecutive lines of a solution, anywhere, is a copy of it
    chunks = {tuple(solution[i : i + window]) for i in range(len(solution) - window + 1)}
    for path, text in _student_facing_texts():
        lines = _normalised_lines(text)
        found = {tuple(lines[i : i + window]) for i in range(len(lines) - window + 1)} & chunks
        assert not found, f"{path} holds {window} lines of course/solutions/{name}.py"


def cost_model_solution_lines() -> list[str]:
    """The instructor's cost-model solution's code lines long enough to be its own (not
    `import numpy as np`), as the class run reads the solution from the source notebook."""
    from autograder.nbgrader_ext.plan import load_plan

    plan = load_plan(ROOT / "course" / "source" / "cost-model" / "cost-model.ipynb")
    solution = next(a.solution for a in plan.answers.values() if a.kind == "cost-model")
    return [line for line in _normalised_lines(solution) if len(line) >= 30 and "BEGIN SOLUTION" not in line]


def test_no_line_of_the_cost_model_solution_appears_in_the_package_or_the_lessons():
    lines = cost_model_solution_lines()
    assert len(lines) >= 8  # the check has something to find
    for path, text in _student_facing_texts():
        present = set(_normalised_lines(text))
        found = [line for line in lines if line in present]
        assert not found, f"{path} holds the cost model's solution line(s): {found}"
