"""nbgrader configuration for the tvm-course course root: the directory this file is in.

Works from a fresh clone once the package is installed (`make demo` or `make test` builds the
virtual environment): run nbgrader from this directory, or `tvm-course grade ASSIGNMENT`.

What it changes from nbgrader's defaults, and why:
- Autograde does not run the student's notebook: it scores the test cells from the trusted
  re-grade of the answer cells' source (autograder/nbgrader_ext/preprocessors.py), in the
  sandbox, and writes each verdict into its test cell for the feedback. See
  execute_student_notebooks below to run the notebooks as well.
- A notebook that is run (with that switch, or by `nbgrader validate`) runs in the kernel named
  "python3" (the one `make` installs), whatever kernel its metadata names, each cell for at most
  60 s.
- Feedback leaves out the code of hidden tests.
- Each released assignment names the machine that grades (c.GradingMachine below): the
  notebook shows it, and a self-check timed on another CPU says its speed points are an estimate.
- The released notebooks leave out the grading plan's metadata, which holds the answer key of
  the tile arithmetic (generate_assignment strips it).
- Every student has their own workload (autograder/problems/variants.py), derived from their
  student id and the course secret ($TVM_COURSE_SECRET, or the file `variant-secret` beside this
  one: `tvm-course variants init` creates it; never commit or release it). generate_assignment
  writes variants.json beside each released notebook for the students in the gradebook, so
  enrol the class first (`tvm-course roster --from canvas|moodle FILE` from the LMS's export,
  or `nbgrader db student import roster.csv`).
- A submission is graded from the source notebook's cells, whatever was done to it: autograde
  reads any notebook file an editor writes (a BOM, UTF-16, odd metadata, any nbformat) and
  takes from it only the text of its answer cells (autograder/nbgrader_ext/normalise.py), so
  added, removed, retyped or re-flagged cells change no grade, and every grade is recorded. A
  file that holds no notebook scores 0 and says why; `tvm-course grade` flags it for review.
- Feedback pages cannot run or restyle anything a student wrote, printed or tagged
  (autograder/nbgrader_ext/feedback_html.py).
- `nbgrader zip_collect ASSIGNMENT` reads Canvas and Moodle "download all submissions" zips
  (autograder/lms/nbgrader_collector.py) as untrusted input, with the student id taken from
  the LMS: Canvas's file names through FileNameCollectorPlugin.named_regexp below, Moodle's
  folder per submission with the assignment's grading worksheet. `tvm-course collect
  ASSIGNMENT --from canvas|moodle ZIP` runs it and fails when nothing was collected.
- `nbgrader release_feedback ASSIGNMENT` (and the formgrader's Release Feedback) releases only
  finished feedback: it refuses, naming each student and what to run, while a submission is not
  graded yet, changed since, without feedback, or a grading run is under way or was interrupted;
  it never reports success for nothing released (autograder/course/feedback_release.py).
- Grades nobody has scored yet (a GPU part graded without a GPU, a grader fault) are pending,
  not 0: the feedback says "pending" and `nbgrader export` leaves the score empty
  (autograder/nbgrader_ext/feedback.py).
"""
import os

from nbgrader.converters import GenerateAssignment

from autograder.course.feedback_release import CourseReleaseFeedback
from autograder.lms.download import CANVAS_NAMED_REGEXP
from autograder.nbgrader_ext.feedback import PendingAwareCsvExport
from autograder.lms.nbgrader_collector import LMSCollector, SafeExtractor
from autograder.nbgrader_ext.grading_machine_release import WriteGradingMachine
from autograder.nbgrader_ext.preprocessors import StripInstructorMetadata, WriteVariantsTable
# The steps a class run grades with: `tvm-course grade` refuses a course whose configuration
# lacks any of the lines below that use it (autograder/nbgrader_ext/trusted_steps.py)
from autograder.nbgrader_ext import trusted_steps

c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "tvm-course"

c.Execute.kernel_name = "python3"
c.Execute.timeout = 60  # seconds per cell, where notebooks are run; no cell grades a schedule in the kernel
c.Execute.startup_timeout = 120
c.ResilientExecute.responsive_timeout = 10

c.OverwriteCells.add_missing_cells = True

# nbgrader's own steps, then the answer key and the rest of the grading plan go
c.GenerateAssignment.preprocessors = [
    *GenerateAssignment.class_traits()["preprocessors"].default(), StripInstructorMetadata, WriteVariantsTable,
    WriteGradingMachine,
]

# The machine that grades, which every released assignment names (grading-machine.json beside the
# notebook): its first cell prints it, and the self-check says whether it timed on the same CPU or
# gives an estimate (autograder/nbgrader_ext/grading_machine.py). The CPU as LLVM names it on the
# host that runs `tvm-course grade`, which there prints it:
#   .venv/bin/python -c "from tvm.target import codegen; print(codegen.llvm_get_system_cpu())"
# (None: not named; a release then warns, and every self-check says its speed points are the
# student's machine's). Where the grader compiles for another CPU, say so in
# c.TrustedGrader.settings["mcpu"] below: the release copies it.
#   c.GradingMachine.cpu = "znver4"
#   c.GradingMachine.description = "AMD EPYC 9654 (Zen 4), one core of the course's grading server"
c.GradingMachine.cpu = None

# Running the student's notebook (ResilientExecute) is off: it would run arbitrary student code
# in a Jupyter kernel as the grading user (root in CI and grading containers), which could
# rewrite the gradebook, read other submissions and the solutions, or tamper with gradings
# running beside it. The points do not need it: they come from the sandboxed re-grade, and the
# tile arithmetic is read, not run. All it adds is the notebook's own outputs in the feedback.
# To have those, set this to True, here in this file (it builds the list below), and only in a
# disposable container or VM: even there a notebook can read and change whatever that machine
# holds (its gradebook, the solutions, the other submissions).
c.TrustedGrader.execute_student_notebooks = False

# A submission is graded from the source notebook's cells: autograde reads the file robustly
# (any encoding, any nbformat, salvaged where nbformat would refuse it) and rebuilds it from the
# source and the gradebook before nbgrader's own sanitising steps, taking only the text of the
# answer cells from it (autograder/nbgrader_ext/normalise.py). A file that holds no notebook
# scores 0, with its cause in the feedback and the CSV, instead of failing every run.
c.Autograde.exporter_class = trusted_steps.autograde_exporter()  # SubmissionExporter
c.Autograde.sanitize_preprocessors = trusted_steps.sanitize_preprocessors()  # NormaliseSubmission, then nbgrader's

# The trusted grading: StartTrustedGrading first, SaveTrustedGrades scores the test cells, and
# ResilientExecute runs the notebook only where execute_student_notebooks (above) says so
c.Autograde.autograde_preprocessors = trusted_steps.autograde_preprocessors(c)

# Settings of the trusted re-grade (autograder.engine.config.GraderConfig fields), e.g. for a GPU
# assignment graded from a machine without one:
#   c.TrustedGrader.settings = {"rpc_tracker": "gpu-host:9190", "rpc_key": "h100"}
c.TrustedGrader.settings = {}

# nbgrader's feedback, except that a grade nobody has scored reads "pending", not "0.0 / 4.0",
# and that nothing a student wrote, printed or tagged can run in the page or restyle it
# (autograder/nbgrader_ext/feedback_html.py): SanitizeFeedback keeps only what the page shows,
# and every piece of HTML from a notebook goes through a strict clean_html.
c.GenerateFeedback.preprocessors = trusted_steps.feedback_preprocessors()  # GetGradesWithPending, ..., SanitizeFeedback
c.GenerateFeedback.exporter_class = trusted_steps.feedback_exporter()  # HTMLExporter, its compiled templates kept between submissions
c.HTMLExporter.template_name = trusted_steps.FEEDBACK_TEMPLATE
c.HTMLExporter.extra_template_basedirs = trusted_steps.feedback_template_dirs()
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.filters = trusted_steps.feedback_filters()

# `nbgrader export`: nbgrader's CSV, except that a submission with pending grades gets an empty
# score (and the pending points in a column of their own), never the sum of the rest
c.ExportApp.plugin_class = PendingAwareCsvExport

# `nbgrader release_feedback ASSIGNMENT` and the formgrader's Release Feedback (NbGraderAPI.release_feedback):
# nothing is released, and the command fails saying why and what to run, until every collected
# submission is graded (unchanged since) with its feedback written and no grading run is under way;
# --CourseReleaseFeedback.partial=True releases the finished ones and lists the rest.
c.ExchangeFactory.release_feedback = CourseReleaseFeedback

# `nbgrader zip_collect ASSIGNMENT`: the LMS's "download all submissions" zip, put in
# downloaded/ASSIGNMENT/archive/ (`tvm-course collect` does that, and fails when nothing
# was collected, where nbgrader exits 0). Canvas names each file
# lastfirst[_LATE]_USERID_ATTACHMENTID_NAME.ipynb: its user id is the student id.
# Moodle: c.LMSDownload.lms = "moodle" and c.LMSDownload.worksheet = the grading worksheet.
c.ZipCollectApp.extractor_plugin = SafeExtractor
c.ZipCollectApp.collector_plugin = LMSCollector
c.FileNameCollectorPlugin.named_regexp = CANVAS_NAMED_REGEXP
c.LMSDownload.lms = "canvas"

# What grading writes holds every student's work and grades: readable by its owner only
# (nbgrader's defaults, 444 and 644, let every user of the machine read it). `tvm-course grade`
# also creates its folders, the CSV and the gradebook owner-only.
c.Autograde.permissions = 600
c.GenerateFeedback.permissions = 600
