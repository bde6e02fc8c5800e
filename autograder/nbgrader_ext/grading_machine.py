"""The machine that grades: named by the instructor, released with each assignment, shown by the
notebook and by the self-check.

Speed points are a ratio to a yardstick timed beside the schedule, on the same core, in the same
rounds: the clock cancels, the core does not. The course's own calibration
(problems/tile_fused_conv.py) measured one register-blocked schedule above the middle band on one
microarchitecture and under the first on another. A self-check times on the student's machine,
so it can promise the grader's speed points only where that machine's CPU is the grading
machine's: elsewhere they are an estimate, and the self-check says so, and why.

The instructor names the machine in the course's nbgrader configuration (course/nbgrader_config.py):

    c.GradingMachine.cpu = "znver4"   # the grading host's CPU, as LLVM names it
    c.GradingMachine.description = "AMD EPYC 9654 (Zen 4), one core of the course's grading server"

and where the grader compiles for another CPU than the host's own, the one setting the class run
uses says so, `c.TrustedGrader.settings = {"mcpu": "haswell"}`: the release copies it, so the two
cannot disagree. `nbgrader generate_assignment` checks them and writes grading-machine.json
(grading_machine_release.py) beside the released notebook; the notebook's first cell and the self-check
read it from there. Nothing in it is secret. Read in the student's kernel it is untrusted like
everything there: it changes what the notebook shows, never a grade.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import ExitCode, TvmCourseError

RELEASE_FILE = "grading-machine.json"
FORMAT = "tvm-course-grading-machine/1"
MAX_DESCRIPTION = 200
MAX_FILE_BYTES = 4096
# LLVM's CPU names: znver4, skylake-avx512, x86-64-v3, neoverse-v2, apple-m1, ...
_LLVM_CPU = re.compile(r"[a-z0-9][a-z0-9._+-]{0,39}")
_KEYS = {"format", "cpu", "mcpu", "description"}


class GradingMachineError(ValueError, TvmCourseError):
    """A grading machine that cannot be named as given; the message says which value and why."""

    exit_code = ExitCode.USAGE_ERROR


@dataclass(frozen=True)
class Machine:
    """The grading machine: its CPU as LLVM names it, what the grader compiles for where that is
    another CPU (`mcpu`), and a description for people."""

    cpu: str
    description: str = ""
    mcpu: str | None = None

    def __post_init__(self) -> None:
        check_cpu_name(self.cpu, "cpu")
        if self.mcpu is not None:
            check_cpu_name(self.mcpu, "mcpu")
        if not isinstance(self.description, str):
            raise GradingMachineError(f"description: expected text, got {type(self.description).__name__}")
        if len(self.description) > MAX_DESCRIPTION:
            raise GradingMachineError(f"description: {len(self.description)} characters, at most {MAX_DESCRIPTION}")
        unprintable = [c for c in self.description if unicodedata.category(c)[0] in "CZ" and c != " "]
        if unprintable:
            raise GradingMachineError(f"description: one line of printable text, without {unprintable[0]!r}")

    @property
    def compiles_for(self) -> str:
        """The CPU the grader compiles the code for: `mcpu`, else the host's own."""
        return self.mcpu or self.cpu

    def describe(self) -> str:
        llvm = f"CPU {self.cpu} as LLVM names it"
        if self.mcpu and self.mcpu != self.cpu:
            llvm += f"; the grader compiles for {self.mcpu}"
        return f"{self.description} ({llvm})" if self.description else llvm

    def to_dict(self) -> dict:
        return {"format": FORMAT, "cpu": self.cpu, "mcpu": self.mcpu, "description": self.description}

    @classmethod
    def from_dict(cls, data: object) -> "Machine":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise GradingMachineError(f"not a grading machine ({FORMAT})")
        unknown = sorted(str(k) for k in set(data) - _KEYS)
        if unknown:
            raise GradingMachineError(f"unknown keys {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
        return cls(cpu=data.get("cpu"), description=data.get("description") or "", mcpu=data.get("mcpu"))


def check_cpu_name(name: object, what: str) -> str:
    """`name` if it has the shape of an LLVM CPU name; else GradingMachineError naming `what`."""
    if not isinstance(name, str) or not _LLVM_CPU.fullmatch(name):
        shown = repr(name) if not isinstance(name, str) or len(name) <= 40 else repr(name[:37] + "...")
        raise GradingMachineError(f"{what}: {shown} is not an LLVM CPU name (lower-case letters, digits and . _ + -, "
                                  "at most 40, e.g. znver4, skylake-avx512, x86-64-v3, neoverse-v2)")
    return name


def check_known_to_llvm(machine: Machine) -> None:
    """That this machine's LLVM knows each CPU the machine names (a typo such as 'zen4' would
    name a machine nobody grades on)."""
    from tvm.target import codegen

    triple = codegen.llvm_get_system_triple()
    for what, name in (("cpu", machine.cpu), ("mcpu", machine.mcpu)):
        if name and not codegen.llvm_is_valid_cpu(name, triple):
            raise GradingMachineError(f"{what}: LLVM does not know a CPU named {name!r} for {triple} (examples: "
                                      f"znver4, skylake-avx512, haswell; this machine's is {this_cpu()})")


def this_cpu() -> str:
    """This machine's CPU as LLVM names it (what the grader compiles for without an mcpu)."""
    from tvm.target import codegen

    return str(codegen.llvm_get_system_cpu())


# --- the released file --------------------------------------------------------------------------


def write(path: str | Path, machine: Machine) -> Path:
    path = Path(path)
    path.write_text(json.dumps(machine.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read(path: str | Path = RELEASE_FILE) -> Machine | None:
    """The machine released beside the notebook; None where the release names none (no file);
    GradingMachineError saying what is wrong with a file that is there."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise GradingMachineError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise GradingMachineError(f"{path} is over {MAX_FILE_BYTES} bytes: not a grading machine")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise GradingMachineError(f"{path} is not JSON: {error}") from None
    try:
        return Machine.from_dict(parsed)
    except GradingMachineError as error:
        raise GradingMachineError(f"{path}: {error}") from None


# --- what the self-check says about its speed points --------------------------------------------


@dataclass(frozen=True)
class TimingNote:
    text: str
    estimate: bool  # the speed points were timed on another CPU than the grading machine's (or an unnamed one)


def timing_note(machine: Machine | None, host_cpu: str, compiled_for: str | None, problem=None) -> TimingNote:
    """What a self-check timed on `host_cpu` (compiling for `compiled_for`; None: nothing was
    compiled, so nothing timed) says of its speed points against `machine`."""
    named = f"Graded on: {machine.describe()}." if machine else (
        "Your instructor has not named the machine that grades (no grading-machine.json beside this notebook).")
    if compiled_for is None:
        return TimingNote(named, False)
    here = host_cpu if compiled_for == host_cpu else f"{host_cpu}, compiling for {compiled_for}"
    if machine is None:
        return TimingNote(f"{named} This check timed your schedule on this machine's CPU ({here}): its speed points "
                          "are this machine's, and the grade's are the grading machine's, which may differ. "
                          + _why(problem), True)
    if host_cpu == machine.cpu and compiled_for == machine.compiles_for:
        return TimingNote(f"{named} This check timed your schedule on the same CPU ({here}): its speed points are "
                          "the grader's, within timing noise.", False)
    advice = ""
    if compiled_for != machine.compiles_for:
        advice = (f" To compile the code the grader compiles (your core still times it), run "
                  f"`%env TVM_COURSE_MCPU={machine.compiles_for}` in a cell and check again, if this machine can run it.")
    return TimingNote(f"{named} This check timed your schedule on another CPU ({here}), so its speed points are an "
                      f"estimate: the grade's are timed on the grading machine. {_why(problem)} Correctness and "
                      f"fusion do not depend on the CPU.{advice}", True)


def _why(problem) -> str:
    """Why the speed depends on the core, from the problem's own calibration: the reference
    schedule whose speed against the yardstick differed most between two microarchitectures,
    each running its own code."""
    general = ("Speed is a ratio to the yardstick timed beside yours on the same core, and that ratio still "
               "depends on the core.")
    if problem is None:
        return general
    own = {}
    for measured in problem.measured:
        if measured.host == measured.cpu:
            own.setdefault(measured.schedule, {})[measured.host] = measured.median
    spreads = [(max(by.values()) / min(by.values()), schedule, by) for schedule, by in own.items() if len(by) > 1 and min(by.values()) > 0]
    if not spreads:
        return general
    _, schedule, by = max(spreads)
    high, low = max(by, key=by.get), min(by, key=by.get)
    return (f"{general} The course measured one of its reference schedules ({schedule}) at {by[high]:.2f}x the "
            f"yardstick on a {high} core and {by[low]:.2f}x on a {low} core.")
