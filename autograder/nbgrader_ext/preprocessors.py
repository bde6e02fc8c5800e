"""nbgrader preprocessors that make the gradebook's points independent of the student's kernel.

course/nbgrader_config.py puts them into nbgrader's autograde pipeline, after the submission
has been rebuilt from the source notebook's cells (normalise.py, the first sanitising step):

    StartTrustedGrading   reads the grading plan from the instructor's source notebook and
                          starts grading the submitted answer cells' source (sandboxed), or,
                          for a file refused as no notebook, scores every test cell 0
    ResilientExecute      nbgrader's Execute, except that a kernel that dies or stops
                          answering ends the run of the notebook instead of the grading;
                          only with `c.TrustedGrader.execute_student_notebooks = True`: it
                          runs the student's whole notebook as the grading user
    SaveTrustedGrades     nbgrader's SaveAutoGrades, except that test cells named in the plan
                          get the trusted score (and its explanation as their output; a cost
                          model's part, its figure too: costmodel/feedback_plots.py), not
                          whatever the kernel printed

Test cells the plan does not name keep nbgrader's usual scoring from their output when the
notebook was run; when it was not (the default), they are left for manual grading, since an
empty output would otherwise earn full marks; in a refused file they score 0.

And two for `nbgrader generate_assignment`:

    StripInstructorMetadata  removes the grading plan's `tvm_course` metadata (with the tile
                             arithmetic's answer key) from the released notebook
    WriteVariantsTable       writes the students' variants (their own shapes) beside it
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from queue import Empty

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor, SaveAutoGrades
from traitlets import Bool, Dict, Enum, Float
from traitlets.config import Configurable

from ..costmodel.feedback_plots import figures
from ..engine.config import GraderConfig
from ..problems.variants import TABLE_FILE, VariantError, check_student_id, course_secret, variant_for, write_table
from .credit import GRADER_FAILED
from .normalise import SUBMISSION_KEY, coursedir_of, refusal_text, source_notebook_path, submission_record
from .plan import METADATA_KEY, GradingPlan, PlanError, load_plan
from .steady import Earlier
from .trusted import TrustedGrading, TrustedVerdicts

RESOURCE_KEY = "tvm_course_trusted_grading"
EXECUTED_KEY = "tvm_course_notebook_executed"  # set in the resources by ResilientExecute


class TrustedGrader(Configurable):
    """Settings of the trusted re-grade: `c.TrustedGrader.settings = {"timing_rounds": 15, ...}` (more rounds than the default 10)."""

    settings = Dict(
        {}, help="GraderConfig fields for the trusted re-grade (timing_rounds, rpc_tracker, rpc_key, ...)"
    ).tag(config=True)
    earlier = Dict(
        {}, help="Set by `tvm-course grade`, not by hand: student -> answer grade_id -> the speed of an earlier "
        "grading of the same submission, which a re-timing keeps unless it decides otherwise (nbgrader_ext/steady.py)",
    ).tag(config=True)
    cost_model_grid = Enum(
        ["full", "tiny"], "full",
        help="The cost-model assignment's candidate table: the student's shape and its 320 candidates (full), or "
        "24 candidates of one small shape (tiny: for tests of the class run, which then take seconds, not minutes)",
    ).tag(config=True)
    execute_student_notebooks = Bool(
        False,
        help="Run each student's whole notebook in a kernel during autograde, as the grading user, so that "
        "feedback shows the notebook's own outputs (course/nbgrader_config.py reads it to build the "
        "autograde pipeline). Only where grading runs in a disposable container or VM.",
    ).tag(config=True)

    def grader_config(self) -> GraderConfig:
        known = {f.name for f in dataclasses.fields(GraderConfig)}
        unknown = sorted(set(self.settings) - known)
        if unknown:
            raise ValueError(f"TrustedGrader.settings: unknown settings {unknown}; known: {sorted(known)}")
        return GraderConfig(**self.settings)


def load_source_plan(preprocessor, resources) -> GradingPlan:
    """The plan in the instructor's source notebook for the notebook being graded."""
    path = source_notebook_path(preprocessor, resources["nbgrader"])
    if not os.path.exists(path):
        raise PlanError(f"the trusted grader reads its plan from the source notebook, and {path} does not exist")
    return load_plan(path)


def start_grading(preprocessor, nb, resources) -> TrustedGrading | None:
    plan = load_source_plan(preprocessor, resources)
    if not plan:
        return None
    trusted = TrustedGrader(parent=preprocessor)
    config = trusted.grader_config()
    student = resources["nbgrader"]["student"]
    # The student's own workload, derived again from the secret: never read from the submission.
    secret = course_secret(coursedir_of(preprocessor).root)
    variant = variant_for(student, secret)
    earlier = trusted.earlier.get(student)
    earlier = {str(k): Earlier.from_dict(v) for k, v in earlier.items()} if isinstance(earlier, dict) else {}
    grading = TrustedGrading(plan, config, variant, student, earlier={k: v for k, v in earlier.items() if v is not None},
                             secret=secret, cost_model_grid=trusted.cost_model_grid)
    refused = submission_record(nb.metadata).get("refused")
    if refused is not None:
        preprocessor.log.warning("Not grading %s's notebook: %s", student, refused)
        return grading.refuse(refusal_text(refused))
    preprocessor.log.info("Trusted grading of %s started (answers: %s; variant: %s)", student, ", ".join(plan.answers), variant)
    return grading.start(nb)


class WriteVariantsTable(NbGraderPreprocessor):
    """At release (`nbgrader generate_assignment`): writes variants.json beside the released
    notebook, the variant of every student in the gradebook under a digest of their id
    (problems/variants.py), so a student's notebook can show their own shapes. Needs the course
    secret; students added later need the assignment generated and released again."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        coursedir = coursedir_of(self)
        assignment = resources["nbgrader"]["assignment"]
        secret = course_secret(coursedir.root)
        with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
            students = [s.id for s in gradebook.students]
        for student in list(students):
            try:
                check_student_id(student)
            except VariantError as error:
                students.remove(student)
                self.log.warning("No variant for a student in the gradebook: %s", error)
        if not students:
            self.log.warning("No students in the gradebook: %s lists no variants (add the class with `nbgrader db student "
                             "import`, then generate the assignment again)", TABLE_FILE)
        release = coursedir.format_path(coursedir.release_directory, ".", assignment)
        os.makedirs(release, exist_ok=True)
        write_table(os.path.join(release, TABLE_FILE), students, secret)
        return nb, resources


class StripInstructorMetadata(NbGraderPreprocessor):
    """Keeps the grading plan (and the answer key in it) out of the released notebook: the
    trusted grader reads the plan from the source notebook, so students need none of it."""

    def preprocess(self, nb, resources):
        nb.metadata.pop(METADATA_KEY, None)
        for cell in nb.cells:
            cell.get("metadata", {}).pop(METADATA_KEY, None)
        return nb, resources


class StartTrustedGrading(NbGraderPreprocessor):
    """Starts the trusted grading before the kernel runs, so that the two overlap."""

    def preprocess(self, nb, resources):
        resources[RESOURCE_KEY] = start_grading(self, nb, resources)
        return nb, resources


class ResilientExecute(Execute):
    """Runs the notebook; a dead or unresponsive kernel stops the run, not the grading."""

    responsive_timeout = Float(
        10.0, help="After a cell times out, seconds to wait for the interrupted kernel to answer again"
    ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._stopped: str | None = None
        if resources is not None:
            resources[EXECUTED_KEY] = True
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._stopped:
            cell.outputs = [_error_output("NotRun", self._stopped)]
            return cell, resources
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stopped = f"not run: the kernel died while running cell {index}"
            cell.outputs.append(_error_output("DeadKernelError", f"the kernel died while running this cell (cell {index})"))
            self.log.warning("The kernel died in cell %d; the remaining cells are not run", index)
            return cell, resources
        except CellTimeoutError:  # the interrupt went unanswered (nbclient gave up waiting for output)
            self._stopped = f"not run: the kernel stopped answering in cell {index}"
            cell.outputs.append(_error_output("CellTimeoutError", f"this cell ran past the time limit and the kernel stopped answering (cell {index})"))
            self.log.warning("The kernel stopped answering in cell %d; the remaining cells are not run", index)
            return cell, resources
        if any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])) and not run_sync(self._answers)():
            self._stopped = f"not run: the kernel stopped answering after cell {index} timed out"
            self.log.warning("The kernel does not answer after a timeout in cell %d; the remaining cells are not run", index)
        return cell, resources

    async def _answers(self) -> bool:
        """Whether the kernel replies to a kernel_info request within responsive_timeout."""
        msg_id = self.kc.kernel_info()
        deadline = time.monotonic() + self.responsive_timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except (Empty, asyncio.TimeoutError, TimeoutError):
                return False
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return True
        return False


class SaveTrustedGrades(SaveAutoGrades):
    """Saves trusted scores for the plan's test cells and writes their explanations as outputs."""

    def preprocess(self, nb, resources):
        grading = resources.get(RESOURCE_KEY) if RESOURCE_KEY in resources else start_grading(self, nb, resources)
        self.trusted: TrustedVerdicts | None = grading.finish() if grading else None
        self._saved: set[str] = set()
        submission = submission_record(nb.metadata)
        self.refused = submission.get("refused")
        if self.trusted is None:
            return super().preprocess(nb, resources)
        self.plan = grading.plan
        _write_outputs(nb, grading.plan, self.trusted)
        nb.metadata[METADATA_KEY] = {**self.trusted.to_metadata(), **({SUBMISSION_KEY: submission} if submission else {})}
        nb, resources = super().preprocess(nb, resources)
        missing = set(self.plan.scored) - self._saved
        if missing:  # deleted from the submission and not restored: the trusted score still counts
            with Gradebook(self.db_url) as gradebook:
                for grade_id in sorted(missing):
                    self._save(gradebook, grade_id)
        return nb, resources

    def _add_score(self, cell, resources):
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        if self.trusted is not None and grade_id in self.plan.scored:
            return self._save(self.gradebook, grade_id)
        if self.refused is not None:  # not a notebook: no cell earns anything, planned or not
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.auto_score = 0.0
            grade.needs_manual_grade = grade.manual_score is not None
            self.gradebook.db.commit()
            return
        if not resources.get(EXECUTED_KEY) and cell.cell_type == "code" and not cell.metadata["nbgrader"].get("solution"):
            # Not run, so no output: nbgrader's rule ("no error, full marks") would give the points.
            self.log.warning("Test cell %s is not in the grading plan and the notebook was not run: left for manual grading", grade_id)
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.auto_score, grade.needs_manual_grade = None, True
            self.gradebook.db.commit()
            return
        if self.trusted is not None:
            self.log.warning("Test cell %s is not in the grading plan: scored from the kernel's output (untrusted)", grade_id)
        return super()._add_score(cell, resources)

    def _save(self, gradebook, grade_id: str) -> None:
        grade = gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
        fraction = self.trusted.cells[grade_id].fraction
        grade.auto_score = None if fraction is None else round(fraction * float(grade.max_score), 2)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        gradebook.db.commit()
        self._saved.add(grade_id)


def _write_outputs(nb, plan: GradingPlan, trusted: TrustedVerdicts) -> None:
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or grade_id is None:
            continue
        if grade_id in plan.scored:
            verdict = trusted.cells[grade_id]
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=verdict.text + "\n")]
            if verdict.fraction is not None:
                points = round(verdict.fraction * float(cell.metadata["nbgrader"].get("points", 0)), 2)
                cell.outputs.append(
                    nbformat.v4.new_output("execute_result", data={"text/plain": repr(points)}, execution_count=cell.get("execution_count"))
                )
            cell.outputs.extend(_cost_model_figure(plan, trusted, grade_id))
        elif grade_id in plan.reports:
            result = trusted.results.get(plan.reports[grade_id])
            if result is not None and result.grader_fault:  # the student is told that much, no more
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{GRADER_FAILED}\n")]
            elif result is not None:
                cell.outputs = [
                    nbformat.v4.new_output("display_data", data={"text/plain": result.to_text(), "text/html": result._repr_html_()})
                ]
            else:
                marks = trusted.questions.get(plan.reports[grade_id], {})
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\n".join(marks.get("lines", [])) + "\n")]


def _cost_model_figure(plan: GradingPlan, trusted: TrustedVerdicts, grade_id: str) -> list:
    """A cost model's test cell's figure (costmodel/feedback_plots.py), drawn from the trusted
    verdict, never from the notebook: the feedback shows it under the part's score."""
    scored = plan.scored[grade_id]
    if plan.answers[scored.answer].kind != "cost-model":
        return []
    figure = figures(trusted.cost_models.get(scored.answer, {}).get("plot")).get(str(scored.part))
    if figure is None:  # the learner failed in this part, or nothing was graded: its lines say why
        return []
    return [nbformat.v4.new_output("display_data", data={"image/svg+xml": figure.svg, "text/plain": figure.text})]


def _error_output(name: str, message: str):
    return nbformat.v4.new_output("error", ename=name, evalue=message, traceback=[f"{name}: {message}"])
