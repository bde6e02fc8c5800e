"""`nbgrader release_feedback` (and the formgrader's Release Feedback) that releases only finished
feedback, and says what it released, or refuses with what to do.

nbgrader's own ExchangeReleaseFeedback copies whatever HTML lies in feedback/*/ASSIGNMENT/: before
any grading it copies nothing, exits 0 and prints nothing, and the formgrader (which calls
NbGraderAPI.release_feedback, i.e. this class's start()) says it succeeded. Here, before anything
is copied, every collected submission (or the one of --student) is checked:

- a grading run of the assignment is under way (its marker, `grading_marker`): wait for it;
- the last grading run was interrupted: run `tvm-course grade` again;
- a submission not graded yet, or changed since it was graded (`submissions.grading_decision`):
  grade it first;
- a graded submission without feedback HTML for each of its notebooks: generate it.

Any of these refuses the whole release (ExchangeError: exit status 1, and the formgrader shows
the error with these lines), naming each student and the command to run, unless
`--CourseReleaseFeedback.partial=True`, which releases the students whose feedback is finished
and lists the rest. A student dropped from the class (`nbgrader db student remove`) is never
released to. What was released is said, student by student, and in a last line with the count;
releasing nothing is a failure, never a success. The released pages are made readable by the
students they are for (`readable`).

A refusal is written to be read in the formgrader's error dialog (nbgrader's createLogModal: a
"Log Output" box of 80 columns that cuts longer lines, which a reader must scroll sideways, then
the traceback): each command on a line of its own, prose wrapped (`refusal`), and the exception,
which the dialog's traceback ends with, says only its first line (`refuse`).
"""
from __future__ import annotations

import glob
import os
import textwrap
from pathlib import Path

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import temp_attrs
from traitlets import Bool

from . import grading_marker
from .submissions import find_submissions, grading_decision, recorded_submissions


class CourseReleaseFeedback(ExchangeReleaseFeedback):
    partial = Bool(
        False,
        help="Release the students whose feedback is finished even where others' is not (they are listed); "
             "by default the release is refused until every collected submission's feedback is finished.",
    ).tag(config=True)

    def __init__(self, *args, authentictor=None, **kwargs):
        # NbGraderAPI.release_feedback (the formgrader's button) misspells the keyword (nbgrader 0.9.6)
        if authentictor is not None and "authenticator" not in kwargs:
            kwargs["authenticator"] = authentictor
        super().__init__(*args, **kwargs)

    def copy_files(self):
        assignment = self.coursedir.assignment_id
        only = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        ready, waiting = feedback_readiness(self.coursedir, assignment, only)
        running = grading_marker.read(Path(self.coursedir.root), assignment)
        if running is not None and running.alive:
            self.refuse(f"Nothing released: a grading run of {assignment} is under way ({running.describe()}).",
                        "Release feedback once it has finished:", Verbatim(f"nbgrader release_feedback {assignment}"))
        if running is not None:
            self.refuse(f"Nothing released: the last grading run of {assignment} was interrupted ({running.describe()}): "
                        "feedback may be missing or stale. Run it to the end, then release again:",
                        Verbatim(f"tvm-course grade {assignment}"))
        if waiting and not (self.partial and ready):
            self.refuse(
                f"Nothing released: feedback on {assignment} unfinished for {len(waiting)} student(s):",
                *[line for student, (why, action) in sorted(waiting.items()) for line in (Item(f"{student}: {why}"), action)],
                *([f"Grade first (tvm-course grade {assignment} writes the feedback), then release again."]
                  if any(str(action).startswith("tvm-course grade") for _, action in waiting.values()) else []),
                *([f"To release only the {len(ready)} finished one(s) now:",
                   Verbatim(f"nbgrader release_feedback {assignment} --CourseReleaseFeedback.partial=True")] if ready else []),
            )
        if not ready:
            who = f"student {only}" if only else "anyone"
            self.refuse(f"Nothing released: there is no feedback on {assignment} to release. No submission from {who} "
                        "has been collected and graded. Collect (or tvm-course collect, from an LMS download):",
                        Verbatim(f"nbgrader collect {assignment}"), "then grade:", Verbatim(f"tvm-course grade {assignment}"))
        everyone = {Path(p).parent.parent.name for p in glob.glob(self.coursedir.format_path(self.coursedir.feedback_directory, "*", assignment))}
        exclude = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        before = set(os.listdir(self.dest_path))
        with temp_attrs(self.coursedir, student_id_exclude=",".join(sorted(exclude | (everyone - set(ready))))):
            super().copy_files()
        readable(self.dest_path, before)
        for student, (why, action) in sorted(waiting.items()):
            self.log.warning("Not released to %s: %s; %s", student, why, action)
        self.log.info("Released feedback on %s to %d student(s): %s", assignment, len(ready), ", ".join(sorted(ready)))

    def refuse(self, *lines) -> None:
        """Logs the refusal (`refusal`) and raises ExchangeError with its first line: the formgrader's
        dialog shows the log, then the traceback, which ends with the exception's message."""
        self.log.critical(refusal(*lines))
        raise ExchangeError(refusal(lines[0]))


class Verbatim(str):
    """A command to run or a folder: on a line of its own, indented, never wrapped."""


class Item(str):
    """One student's line of a refusal: indented, wrapped under itself."""


WIDTH = 68  # prose columns: the first line also carries the log's "[CRITICAL] ", inside the dialog's 80


def refusal(*lines) -> str:
    """Prose wrapped to WIDTH, items indented two, commands and folders (Verbatim) indented six and left whole."""
    out = []
    for line in lines:
        if isinstance(line, Verbatim):
            out.append(f"      {line}")
        elif isinstance(line, Item):
            out.extend(textwrap.wrap(line, WIDTH, initial_indent="  ", subsequent_indent="    ",
                                     break_long_words=False, break_on_hyphens=False))
        else:
            out.extend(textwrap.wrap(line, WIDTH, break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


def readable(folder: str, before: set[str]) -> None:
    """nbgrader copies each feedback page with its mode, and the course writes feedback owner-only
    (c.GenerateFeedback.permissions = 600), so students (other users, on a hub) could not read what
    was released to them: their Fetch Feedback found nothing. The released pages are made readable
    (644), in the feedback folder nobody may list (711), under names only the submitter can compute
    (a hash of their submission's secret), as nbgrader intends."""
    for name in (set(os.listdir(folder)) - before) | {n for n in before if n.endswith(".html")}:
        path = os.path.join(folder, name)
        if name.endswith(".html") and os.path.isfile(path) and not os.path.islink(path):
            os.chmod(path, 0o644)


def feedback_readiness(coursedir, assignment: str, only: str | None = None) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """(students whose feedback is finished, {student: (why theirs is not, what to do: a command or
    a folder, Verbatim)}) over the collected submissions of `assignment` (only `only`'s, when given).
    Dropped students are in neither."""
    submissions = [s for s in find_submissions(coursedir, assignment) if only is None or s.student == only]
    if only is not None and not submissions:
        return [], {only: (f"no collected submission of {assignment}", Verbatim(f"nbgrader collect {assignment} --student {only}"))}
    recorded = recorded_submissions(coursedir, assignment)
    ready, waiting = [], {}
    for submission in submissions:
        decision = grading_decision(coursedir, assignment, submission, recorded)
        if decision.reason == "not-in-class":
            continue
        if decision.grade:
            waiting[submission.student] = (decision.detail, Verbatim(f"tvm-course grade {assignment} --student {submission.student}"))
            continue
        feedback = Path(coursedir.format_path(coursedir.feedback_directory, submission.student, assignment))
        held = recorded.get(submission.student)  # the released notebooks' pages, whatever the files handed in were named
        missing = [f"{name}.html" for name in (held.notebooks if held is not None and held.notebooks else submission.notebooks)
                   if not (feedback / f"{name}.html").is_file()]
        if missing:
            waiting[submission.student] = (f"graded, but its feedback ({', '.join(missing)}) is missing",
                                           Verbatim(f"nbgrader generate_feedback {assignment} --student {submission.student}"))
            continue
        if not (feedback / "submission_secret.txt").is_file() or not (feedback / "timestamp.txt").is_file():
            waiting[submission.student] = ("not submitted through the exchange (no submission_secret.txt, which `nbgrader submit` "
                                           "writes and `nbgrader fetch_feedback` needs): hand its feedback back through the LMS",
                                           Verbatim(f"{feedback}/"))
            continue
        ready.append(submission.student)
    return ready, waiting

