"""nbgrader configuration for the tvm-course course root: the directory this file is in.

Works from a fresh clone once the package is installed (`make demo` or `make test` builds the
virtual environment): run nbgrader from this directory, or `tvm-course grade ASSIGNMENT`.

What it changes from nbgrader's defaults, and why:
- Notebooks run in the kernel named "python3" (the one `make` installs), whatever kernel a
  notebook's metadata names, and each cell may run for at most 60 s.
- Autograde scores the test cells from the trusted re-grade of the answer cells' source
  (autograder/nbgrader_ext/preprocessors.py), not from what the student's kernel printed.
- Feedback leaves out the code of hidden tests.
- The released notebooks leave out the grading plan's metadata, which holds the answer key of
  the tile arithmetic (generate_assignment strips it).
- Grade cells a student deleted are put back, so every grade is recorded.
"""
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    GetGrades,
    IgnorePattern,
    LimitOutput,
)

from nbgrader.converters import GenerateAssignment

from autograder.nbgrader_ext.preprocessors import (
    ResilientExecute,
    SaveTrustedGrades,
    StartTrustedGrading,
    StripInstructorMetadata,
)

c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "tvm-course"

c.Execute.kernel_name = "python3"
c.Execute.timeout = 60  # seconds per cell; during autograde no cell grades a schedule in the kernel
c.Execute.startup_timeout = 120
c.ResilientExecute.responsive_timeout = 10

c.OverwriteCells.add_missing_cells = True

# nbgrader's own steps, then the answer key and the rest of the grading plan go
c.GenerateAssignment.preprocessors = [*GenerateAssignment.class_traits()["preprocessors"].default(), StripInstructorMetadata]

c.Autograde.autograde_preprocessors = [
    StartTrustedGrading,
    ResilientExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveTrustedGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# Settings of the trusted re-grade (autograder.config.GraderConfig fields), e.g. for a GPU
# assignment graded from a machine without one:
#   c.TrustedGrader.settings = {"rpc_tracker": "gpu-host:9190", "rpc_key": "h100"}
c.TrustedGrader.settings = {}

c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
