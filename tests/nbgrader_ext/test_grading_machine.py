"""autograder/nbgrader_ext/grading_machine.py and grading_machine_release.py: the machine that
grades, named by the instructor, released with the assignment, shown by the notebook and by the
self-check, which says when it timed on another CPU."""
from __future__ import annotations

import json

import pytest

from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.nbgrader_ext import kernel_side
from autograder.nbgrader_ext.grading_machine import (
    FORMAT, MAX_FILE_BYTES, RELEASE_FILE, GradingMachineError, Machine, read, this_cpu, timing_note, write,
)
from autograder.problems import get_problem
from autograder.problems.variants import VARIANTS

from bundled_course import COURSE

CPU_PROBLEM = get_problem("tile-fused-conv")


def another_cpu() -> str:
    """An LLVM CPU name that is not this machine's (whatever this machine is today)."""
    return next(name for name in ("haswell", "skylake") if name != this_cpu())


# --- the setting's values ----------------------------------------------------------------------


@pytest.mark.parametrize("fields, says", [
    ({"cpu": "Zen 4"}, "not an LLVM CPU name"),
    ({"cpu": ""}, "not an LLVM CPU name"),
    ({"cpu": None}, "not an LLVM CPU name"),
    ({"cpu": "x" * 41}, "not an LLVM CPU name"),
    ({"cpu": "znver4", "mcpu": "AVX2!"}, "mcpu: 'AVX2!' is not an LLVM CPU name"),
    ({"cpu": "znver4", "description": "two\nlines"}, "one line of printable text"),
    ({"cpu": "znver4", "description": "\x1b[31mred"}, "one line of printable text"),
    ({"cpu": "znver4", "description": "x" * 201}, "at most 200"),
])
def test_a_bad_value_is_refused_naming_it(fields, says):
    with pytest.raises(GradingMachineError, match=says.replace("(", r"\(")):
        Machine(**fields)


def test_the_released_file_reads_back_and_a_bad_one_says_what_is_wrong(tmp_path):
    machine = Machine(cpu="znver4", description="AMD EPYC 9654 (Zen 4), one core", mcpu="haswell")
    path = write(tmp_path / RELEASE_FILE, machine)
    assert read(path) == machine
    assert machine.compiles_for == "haswell" and "the grader compiles for haswell" in machine.describe()
    assert read(tmp_path / "absent.json") is None  # no machine named: not an error
    bad = {
        "not JSON": b"{",
        "not a grading machine": json.dumps({"format": "something else", "cpu": "znver4"}).encode(),
        "unknown keys extra": json.dumps({"format": FORMAT, "cpu": "znver4", "extra": 1}).encode(),
        "is not an LLVM CPU name": json.dumps({"format": FORMAT, "cpu": ["znver4"]}).encode(),
        f"over {MAX_FILE_BYTES} bytes": b" " * (MAX_FILE_BYTES + 1),
    }
    for says, data in bad.items():
        (tmp_path / "bad.json").write_bytes(data)
        with pytest.raises(GradingMachineError, match=says):
            read(tmp_path / "bad.json")


# --- what the self-check says ------------------------------------------------------------------


def test_the_same_cpu_promises_the_graders_speed_points():
    machine = Machine(cpu="znver4", description="The course server")
    note = timing_note(machine, "znver4", "znver4", CPU_PROBLEM)
    assert not note.estimate
    assert note.text.startswith("Graded on: The course server (CPU znver4 as LLVM names it).")
    assert "the same CPU" in note.text and "estimate" not in note.text


def test_another_cpu_is_an_estimate_and_says_why_from_the_calibration():
    machine = Machine(cpu="znver5", description="The course server")
    note = timing_note(machine, "haswell", "haswell", CPU_PROBLEM)
    assert note.estimate and "another CPU (haswell)" in note.text and "estimate" in note.text
    # the reason is the problem's own calibration: the schedule whose speed differed most between cores
    own = [m for m in CPU_PROBLEM.measured if m.host == m.cpu]
    schedule = max({m.schedule for m in own}, key=lambda s: (lambda v: max(v) / min(v))([m.median for m in own if m.schedule == s]))
    assert f"({schedule})" in note.text
    assert "Correctness and fusion do not depend on the CPU" in note.text
    assert "TVM_COURSE_MCPU=znver5" in note.text  # compiling for the grader's CPU is the closest this machine gets


def test_the_grading_machines_mcpu_counts_and_is_advised():
    machine = Machine(cpu="znver4", mcpu="haswell")
    assert timing_note(machine, "znver4", "haswell", CPU_PROBLEM).estimate is False
    differs = timing_note(machine, "znver4", "znver4", CPU_PROBLEM)
    assert differs.estimate and "TVM_COURSE_MCPU=haswell" in differs.text


def test_an_unnamed_machine_and_an_untimed_schedule():
    unnamed = timing_note(None, "znver4", "znver4", CPU_PROBLEM)
    assert unnamed.estimate and "has not named the machine that grades" in unnamed.text
    untimed = timing_note(Machine(cpu="znver4"), "", None, CPU_PROBLEM)
    assert not untimed.estimate and untimed.text == "Graded on: CPU znver4 as LLVM names it."


def test_the_first_cell_prints_the_machine_or_why_it_cannot(tmp_path, capsys):
    path = write(tmp_path / RELEASE_FILE, Machine(cpu="znver4", description="The course server"))
    assert kernel_side.grading_machine(str(path)) == Machine(cpu="znver4", description="The course server")
    assert "Graded on: The course server" in capsys.readouterr().out
    assert kernel_side.grading_machine(str(tmp_path / "absent.json")) is None
    assert "has not named" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{")
    assert kernel_side.grading_machine(str(tmp_path / "bad.json")) is None  # the notebook goes on
    said = capsys.readouterr().out
    assert "cannot be shown" in said and "is not JSON" in said and "ask your instructor" in said


@pytest.mark.slow
def test_the_self_check_names_the_grading_machine_and_warns_when_it_timed_on_another_cpu(tmp_path, capsys):
    """One real grading (a fresh process, timed), then what the self-check and the speed cell print."""
    elsewhere = write(tmp_path / "elsewhere.json", Machine(cpu=another_cpu(), description="The course server"))
    schedule = ("def schedule(sch):\n    conv = sch.get_sblock('conv2d_nchw')\n    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)\n"
                "    yo, yi = sch.split(yy, factors=[None, 16])\n    xo, xi = sch.split(xx, factors=[None, 16])\n"
                "    sch.reorder(yo, xo, yi, xi)\n    sch.reverse_compute_at(sch.get_sblock('T_add'), xo)\n"
                "    sch.reverse_compute_at(sch.get_sblock('compute'), xo)\n")
    result = kernel_side.self_check("tile-fused-conv", schedule, VARIANTS[0], machine_file=str(elsewhere),
                                    timing_rounds=3, min_repeat_ms=5.0)
    assert result.status == "passed" and result.yardstick_speedup is not None, result.to_text()
    printed = capsys.readouterr().out
    assert f"Graded on: The course server (CPU {another_cpu()} as LLVM names it)" in printed
    assert f"another CPU ({this_cpu()})" in printed and "an estimate" in printed
    kernel_side.points(result, "speed", out_of=3)
    assert "An estimate: timed on this machine's CPU" in capsys.readouterr().out
    kernel_side.points(result, "correctness", out_of=4)
    assert "An estimate" not in capsys.readouterr().out  # correctness is no estimate
    # the same grading against a machine of this CPU: the grader's speed points, no warning
    here = write(tmp_path / "here.json", Machine(cpu=this_cpu()))
    same = kernel_side._timing_note("tile-fused-conv", result, str(here))
    assert not same.estimate and "the same CPU" in same.text


# --- the instructor's setting, through a real release ------------------------------------------


def _course_with(tmp_path, lines: str):
    root = copy_course(COURSE, tmp_path / "course")
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text(encoding="utf-8") + "\n" + lines + "\n", encoding="utf-8")
    return root


@pytest.mark.slow
def test_a_release_carries_the_grading_machine_and_the_class_runs_mcpu(tmp_path):
    # the class run's mcpu: any name this machine's LLVM knows (its own is one on every host)
    root = _course_with(tmp_path, f'c.GradingMachine.cpu = "{this_cpu()}"\n'
                                  'c.GradingMachine.description = "The course server, one core"\n'
                                  f'c.TrustedGrader.settings = {{"mcpu": "{this_cpu()}"}}')
    released = release_assignment(root, "tiling", students=["alice"])
    assert read(released / RELEASE_FILE) == Machine(cpu=this_cpu(), description="The course server, one core", mcpu=this_cpu())
    assert (released / "variants.json").is_file() and (released / "tiling.ipynb").is_file()


@pytest.mark.slow
def test_a_release_refuses_a_cpu_llvm_does_not_know_and_drops_a_stale_file_when_none_is_named(tmp_path, caplog):
    from autograder.course.course_dir import CourseError

    root = _course_with(tmp_path, 'c.GradingMachine.cpu = "zen4"')
    with pytest.raises(CourseError, match="releasing tiling failed"):
        release_assignment(root, "tiling", students=["alice"])
    # what `nbgrader generate_assignment` prints to the instructor
    assert "c.GradingMachine: cpu: LLVM does not know a CPU named 'zen4'" in caplog.text
    unnamed = copy_course(COURSE, tmp_path / "unnamed")
    stale = unnamed / "release" / "tiling" / RELEASE_FILE
    stale.parent.mkdir(parents=True)
    write(stale, Machine(cpu="znver4"))
    released = release_assignment(unnamed, "tiling", students=["alice"])
    assert not (released / RELEASE_FILE).exists()
    assert "No grading machine named" in caplog.text and "c.GradingMachine.cpu" in caplog.text
