"""The instructor's setting that names the grading machine, and the release step that writes it
beside each released notebook (grading_machine.py says what the machine is for).

In the course's nbgrader configuration:

    c.GradingMachine.cpu = "znver4"
    c.GradingMachine.description = "AMD EPYC 9654 (Zen 4), one core of the course's grading server"
    c.GenerateAssignment.preprocessors = [..., WriteGradingMachine]

A bad value fails `nbgrader generate_assignment` with a message naming the setting; no name at
all is a warning, and every self-check then says its speed points are the student's machine's.
"""
from __future__ import annotations

import os
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode
from traitlets.config import Configurable

from .grading_machine import MAX_DESCRIPTION, RELEASE_FILE, GradingMachineError, Machine, check_known_to_llvm, this_cpu, write



class GradingMachine(Configurable):
    """`c.GradingMachine.cpu` and `.description` in the course's nbgrader configuration: the
    machine that grades, which every released assignment names (grading-machine.json)."""

    cpu = Unicode(
        None, allow_none=True,
        help="The grading host's CPU as LLVM names it (znver4, skylake-avx512, ...: `python -c \"from tvm.target "
             "import codegen; print(codegen.llvm_get_system_cpu())\"` on that host prints it). None: not named, "
             "and every self-check says its speed points are this machine's",
    ).tag(config=True)
    description = Unicode("", help=f"The grading machine for people, one line of at most {MAX_DESCRIPTION} characters "
                                   "(e.g. 'AMD EPYC 9654 (Zen 4), one core of the course's grading server')").tag(config=True)

    def machine(self, mcpu: str | None) -> Machine | None:
        """The configured machine (None where `cpu` is unset), compiling for `mcpu`; checked."""
        if self.cpu is None:
            if self.description:
                raise GradingMachineError("c.GradingMachine.description is set but c.GradingMachine.cpu is not: "
                                          "name the grading host's CPU as LLVM names it too")
            return None
        try:
            machine = Machine(cpu=self.cpu, description=self.description.strip(), mcpu=mcpu or None)
            check_known_to_llvm(machine)
        except GradingMachineError as error:
            where = "c.TrustedGrader.settings['mcpu']" if str(error).startswith("mcpu") else "c.GradingMachine"
            raise GradingMachineError(f"{where}: {error}") from None
        return machine


class WriteGradingMachine(NbGraderPreprocessor):
    """At release (`nbgrader generate_assignment`): writes grading-machine.json beside the released
    notebook, naming the machine that grades (c.GradingMachine, and the class run's mcpu from
    c.TrustedGrader.settings); where none is named, removes an earlier release's file, which
    would name a machine no longer configured, and says what to set."""

    def preprocess(self, nb, resources):
        from .normalise import coursedir_of
        from .preprocessors import TrustedGrader

        coursedir = coursedir_of(self)
        release = coursedir.format_path(coursedir.release_directory, ".", resources["nbgrader"]["assignment"])
        os.makedirs(release, exist_ok=True)
        path = Path(release) / RELEASE_FILE
        mcpu = TrustedGrader(parent=self).settings.get("mcpu")
        machine = GradingMachine(parent=self).machine(mcpu)
        if machine is None:
            path.unlink(missing_ok=True)
            self.log.warning("No grading machine named: students' self-checks will say their speed points are their "
                             "own machine's. Set c.GradingMachine.cpu (this machine's CPU is %s) and "
                             "c.GradingMachine.description in nbgrader_config.py, then generate the assignment again",
                             this_cpu())
            return nb, resources
        write(path, machine)
        return nb, resources
