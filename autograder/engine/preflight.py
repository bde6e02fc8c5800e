"""Before anyone is graded: the bundled journal schedule, graded once inside the real confinement.

A grader that cannot run its own known-good schedule confined (a sandbox that cannot read the
interpreter, a kernel that refuses a mechanism it claimed, a broken install) would give every
student a verdict that is the machine's fault. So every class run and every self-check starts
by grading autograder/examples/journal.py, without timing, and stops with the cause and the fix
when that does not come out correct. Once per process and setting: about half a second.

Here: what the preflight grades, and how its failure reads. The preflight itself is the first step
of a grading (`pipeline.preflight`, which `pipeline.grade_source` runs before the first grading).
"""
from __future__ import annotations

from ..errors import TvmCourseError

PROBLEM = "tile-fused-conv"
EXAMPLE = "journal"


class GraderUnusable(RuntimeError, TvmCourseError):
    """This machine cannot grade: the message says why and what to do."""


def explain(result) -> str:
    """What went wrong with the known-good schedule, and what to do about it."""
    cause = "\n".join(["  " + line for m in result.messages for line in m.splitlines()][:12])
    output = result.student_output.strip().splitlines()[-6:]
    text = (f"tvm-course cannot grade on this machine: its own journal schedule (autograder/examples/{EXAMPLE}.py), "
            f"graded inside the real confinement, ended {result.status!r} instead of passing.\n{cause}")
    if output:
        text += "\n  output:\n" + "\n".join("    " + line for line in output)
    return text + (
        "\nWhat to do: run `tvm-course doctor`, which says what each confinement mechanism needs here. "
        "A cause that names a file or a module (PermissionError, ModuleNotFoundError) means the confined "
        "process cannot read the interpreter, numpy or TVM: install them where the grading user can read "
        "them. A cause that names a namespace, Landlock or seccomp means this kernel refused what it "
        "reported it allows: set TVM_COURSE_NAMESPACES=0 to grade without namespaces, where a class run "
        "then needs --allow-unconfined. Nothing was graded."
    )
