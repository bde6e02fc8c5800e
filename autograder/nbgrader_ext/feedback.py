"""Pending grades as pending, never as 0: in the feedback and in `nbgrader export`.

A grade cell neither the grader nor an instructor has scored (no GPU was there to run the
schedule, or the grader itself failed) has no automatic and no manual score. nbgrader counts
such a grade as 0: its feedback page reads "Score: 0.0 / 4.0" and `nbgrader export` adds
nothing for it, so a submission at 3 points with 10 pending exports as a plain 3.0, which
reads as a real 3. course/nbgrader_config.py puts these in instead:

    GetGradesWithPending   nbgrader's GetGrades, which also marks each unscored grade cell
                           `pending` and sums their points (resources: pending_points), and
                           says why a notebook refused as not a notebook scored 0 (not_graded),
                           and gives the page for it (refusal: why, each part's 0, what to do)
    templates/feedback/    nbgrader's feedback page, except that pending cells read
                           "pending / 4" and the total says how many points are pending, and a
                           refused notebook's page is that refusal, in place of the released
                           notebook unanswered (which is what was scored, and reads as if the
                           student's answers had been blank)
    FeedbackExporter       nbgrader's HTML exporter, except that its compiled templates are
                           kept for the life of the process: nbgrader makes a new exporter for
                           every submission, and compiling the page's templates again each time
                           was about 40% of writing feedback (cProfile, 7 submissions)
    PendingAwareCsvExport  nbgrader's CSV export, except that a submission with pending
                           grades has empty raw_score and score and says so in `pending`
                           (and fields are quoted, so a name with a comma stays one field)
"""
from __future__ import annotations

import csv
import os

import jinja2
from nbconvert.exporters import HTMLExporter
from nbgrader.api import MissingEntry
from nbgrader.plugins.export import CsvExportPlugin
from nbgrader.preprocessors import GetGrades

from .normalise import refusal_page, refusal_text, submission_record
from .released_names import stand_in_feedback

# Named as nbgrader's own feedback template, which it shadows: NbGraderAPI.generate_feedback
# (what `tvm-course grade` and the formgrader call) insists on template_name = "feedback".
FEEDBACK_TEMPLATE = "feedback"
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


def feedback_template_dirs() -> list[str]:
    """Where templates are looked for: ours first (our feedback/ shadows nbgrader's), then nbgrader's."""
    import nbgrader

    nbgrader_templates = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")
    return [TEMPLATES, nbgrader_templates]


class _CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates, in memory. Jinja keys each by the template's name and checks
    its source's checksum on load, so an edited template is compiled afresh."""

    def __init__(self) -> None:
        self._compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self._compiled:
            bucket.bytecode_from_string(self._compiled[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self._compiled[bucket.key] = bucket.bytecode_to_string()

    def clear(self) -> None:
        self._compiled.clear()


COMPILED_TEMPLATES = _CompiledTemplates()


class FeedbackExporter(HTMLExporter):
    """HTMLExporter whose Jinja environment shares one cache of compiled templates per process."""

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = COMPILED_TEMPLATES
        return environment


def is_pending(grade) -> bool:
    return grade.auto_score is None and grade.manual_score is None


class GetGradesWithPending(GetGrades):
    """GetGrades, and each grade cell nobody has scored is marked `pending` (its score is not 0)."""

    def preprocess(self, nb, resources):
        self._pending_points = 0.0
        nb, resources = super().preprocess(nb, resources)
        resources["nbgrader"]["pending_points"] = self._pending_points
        record = submission_record(nb.metadata)
        refused = record.get("refused")  # the page says why it scored 0, and what to do
        named = record.get("released_name")  # no file of the notebook's name was handed in (released_names.py)
        notebook = resources["nbgrader"]["notebook"]
        resources["nbgrader"]["not_graded"] = None if refused is None else f"{notebook}.ipynb {refusal_text(refused)}"
        resources["nbgrader"]["refusal"] = None if refused is None else refusal_page(notebook, refused, [
            (str(cell.metadata.nbgrader["grade_id"]), float(cell.metadata.nbgrader.get("score") or 0),
             float(cell.metadata.nbgrader.get("points") or 0))
            for cell in nb.cells if cell.get("metadata", {}).get("nbgrader", {}).get("grade")],
            misnamed=named is not None and named["stand_in"] is None)
        resources["nbgrader"]["recovered"] = [  # a notebook graded from a file of another name; answer cells found
            *([stand_in_feedback(named)] if named is not None and named["stand_in"] is not None and refused is None else []),
            *(f"Your answer cell '{grade_id}' was graded: {how}. Fetch the assignment again, or keep the cells' metadata, "
              "so that it is found by its marks next time." for grade_id, how in sorted(record.get("recovered", {}).items())),
            *(f"Not graded: {why}." for _, why in sorted(record.get("unidentified", {}).items())),
        ]
        return nb, resources

    def _get_score(self, cell, resources) -> None:
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id, self.student_id)
        cell.metadata.nbgrader["pending"] = is_pending(grade)
        if is_pending(grade):
            self._pending_points += float(grade.max_score)


class PendingAwareCsvExport(CsvExportPlugin):
    """`nbgrader export`: one row per student and assignment, as nbgrader's CsvExportPlugin
    writes, plus `pending` (the points not scored yet); where any are pending, raw_score and
    score are left empty rather than written as the sum of the rest."""

    KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
            "late_submission_penalty", "score", "max_score", "pending"]

    def export(self, gradebook) -> None:
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        self.log.info("Exporting grades to %s (pending grades left empty)", dest)
        with open(dest, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.KEYS)
            writer.writeheader()
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    writer.writerow(self._row(gradebook, assignment, student))

    @staticmethod
    def _row(gradebook, assignment, student) -> dict:
        row = {"assignment": assignment.name, "duedate": assignment.duedate or "", "student_id": student.id,
               "last_name": student.last_name or "", "first_name": student.first_name or "", "email": student.email or "",
               "max_score": assignment.max_score, "timestamp": "", "pending": 0}
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:  # nothing submitted: nbgrader's 0
            return {**row, "raw_score": 0.0, "late_submission_penalty": 0.0, "score": 0.0}
        pending = sum(float(g.max_score) for n in submission.notebooks for g in n.grades if is_pending(g))
        penalty = submission.late_submission_penalty or 0.0
        row.update(timestamp=submission.timestamp or "", late_submission_penalty=penalty, pending=f"{pending:g}")
        if pending:
            return {**row, "raw_score": "", "score": ""}
        return {**row, "raw_score": submission.score, "score": max(0.0, submission.score - penalty)}
