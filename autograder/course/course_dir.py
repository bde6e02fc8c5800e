"""Finding a course root and loading its nbgrader configuration, as nbgrader itself would.

nbgrader's Python API does not read nbgrader_config.py by itself: this loads the file with
traitlets, points CourseDirectory.root at the directory it was found in (so a copy of the
course grades itself, not the original), and layers the grading run's settings on top.
"""
from __future__ import annotations

import copy
import os
import shutil
import sys
from pathlib import Path

from traitlets.config import Config, PyFileConfigLoader

from ..errors import ExitCode, TvmCourseError

CONFIG_FILE = "nbgrader_config.py"


class CourseError(ValueError, TvmCourseError):
    """The course directory or assignment is not usable; the message says what to do."""

    exit_code = ExitCode.USAGE_ERROR


def find_course_root(given: str | Path | None = None) -> Path:
    """`given`, or the current directory, or ./course: the first that holds nbgrader_config.py."""
    candidates = [Path(given)] if given else [Path.cwd(), Path.cwd() / "course"]
    for candidate in candidates:
        if (candidate / CONFIG_FILE).is_file():
            return candidate.resolve()
    where = " or ".join(str(c) for c in candidates)
    raise CourseError(f"no nbgrader course root at {where} (a course root holds {CONFIG_FILE}); pass --course DIR. "
                      f"{INSTRUCTOR_ONLY}")


# What an instructor's command says where it finds no course: one line, for the student who tried it.
INSTRUCTOR_ONLY = ("This is an instructor's command: it works in the course's nbgrader folder (course/ in the course's "
                   "repository), which students do not get")


def put_environment_tools_on_path() -> None:
    """nbgrader creates a new gradebook by running the `alembic` command from PATH: make the one
    installed beside this Python findable when the environment is not activated."""
    if shutil.which("alembic") is None:
        os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])


def load_course_config(root: Path, *, cell_timeout: float | None = None, grader_settings: dict | None = None,
                       earlier: dict | None = None) -> Config:
    """The course's nbgrader Config, with the grading run's overrides applied (`earlier`: the
    speed of earlier gradings of the same submissions, nbgrader_ext/steady.py)."""
    put_environment_tools_on_path()
    try:
        config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    except Exception as error:  # the file is Python: anything can go wrong in it
        raise CourseError(f"cannot load {root / CONFIG_FILE}: {error.__class__.__name__}: {error}") from error
    config = copy.deepcopy(config)
    config.CourseDirectory.root = str(root)
    if cell_timeout is not None:
        config.Execute.timeout = int(cell_timeout)
    if grader_settings:
        settings = dict(config.TrustedGrader.get("settings", {}))
        settings.update(grader_settings)
        config.TrustedGrader.settings = settings
    if earlier:
        config.TrustedGrader.earlier = dict(earlier)
    return config


def course_directory(config: Config):
    from nbgrader.coursedir import CourseDirectory

    return CourseDirectory(config=config)


def require_trusted_steps(root: Path, config: Config) -> None:
    """Refuse a course whose configuration would have nbgrader grade as it stock does (each
    student's notebook run in a Jupyter kernel as the grading user, the test cells scored from
    what it printed), saying what is wrong and the lines that put it right
    (nbgrader_ext/trusted_steps.py)."""
    from ..nbgrader_ext import trusted_steps

    wrong = trusted_steps.missing(config)
    if not wrong:
        return
    found = "\n".join(f"  - {required.line.split(' = ')[0]}: {why}" for required, why in wrong)
    lines = "\n".join(f"    {line}" for line in trusted_steps.lines_to_add(wrong).splitlines())
    raise CourseError(
        f"{Path(root) / CONFIG_FILE} does not put the course's trusted grading in place, so nbgrader would grade this "
        "course as it stock does: each student's notebook run in a Jupyter kernel as the grading user, and the test "
        f"cells scored from what it printed. Not grading. What is wrong:\n{found}\n"
        f"Add these lines at the end of {CONFIG_FILE} (the course's own course/{CONFIG_FILE} says what each does):\n{lines}"
    )

