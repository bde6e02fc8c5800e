"""The instructor's solution (the source notebook's answer cell) earns every point: on the tiny
table for this host's CPU and for an older one (--mcpu haswell, where the host can run it), and
once on a real-size table (320 candidates of one student's shape)."""
from __future__ import annotations

import json
import platform

import pytest

from autograder.costmodel import grade, space, table
from autograder.engine.cpus import UnknownCPU, cpu_target

from bundled_course import source_notebook

pytestmark = pytest.mark.slow


def solution_source() -> str:
    notebook = json.loads(source_notebook("cost-model").read_text())
    cell = next(c for c in notebook["cells"] if c["metadata"].get("tvm_course", {}).get("answer") == "cost-model")
    source = "".join(cell["source"])
    return source.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION\n", "")


def assert_all_points(result: grade.CostModelResult) -> None:
    for name, part in result.parts.items():
        # full credit; pending only where this table cannot tell the reference from random (the
        # scale's fault, said as such), never less than full
        if part.fraction is None:
            assert "no better than random" in part.lines[0], (name, part.lines)
        else:
            assert part.fraction == 1.0, (name, part.lines)
    assert any(p.fraction is not None for p in result.parts.values())


def mcpus() -> list[str | None]:
    found: list[str | None] = [None]
    if platform.machine().lower() in ("x86_64", "amd64"):
        try:
            cpu_target("haswell")
            found.append("haswell")
        except UnknownCPU:
            pass
    return found


@pytest.mark.parametrize("mcpu", mcpus(), ids=lambda m: m or "host")
def test_the_solution_earns_every_point_on_each_cpu(mcpu, tables_folder):
    tiny = table.measure(space.TINY_SHAPE, "tiny", mcpu, folder=tables_folder)
    assert tiny.key["target_cpu"] == (mcpu or tiny.key["host_cpu"])
    for seed in (1, 2):
        assert_all_points(grade.grade_learner(solution_source(), tiny, seed))


def test_the_solution_earns_every_point_on_a_real_size_table(tables_folder):
    result = grade.grade_submission(solution_source(), None, student="ada", secret=b"a test's secret, 16+ characters",
                                    folder=tables_folder)
    assert "320 candidates" in result.notes[0]
    assert_all_points(result)
