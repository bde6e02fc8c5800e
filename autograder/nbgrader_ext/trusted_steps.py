"""The steps a course's nbgrader configuration must put in place before a class run may grade it.

One place for them: course/nbgrader_config.py sets each of these settings with the very line
`Required.line` names (so the shipped course takes its steps from here), and `tvm-course grade`
checks the course's configuration against the same table before it grades anyone (`missing`).
Without them nbgrader grades as it stock does: it runs each student's notebook in a Jupyter
kernel as the grading user and scores the test cells from what that kernel printed, which the
student's own code decides.

What each step is for:
- autograde reads the submitted file with `SubmissionExporter` (any encoding or nbformat; a
  file that holds no notebook is refused, scored 0, not a failed run);
- `NormaliseSubmission`, the first sanitising step, rebuilds the submission from the source
  notebook's cells and takes only the text of the student's answer cells;
- `StartTrustedGrading` (first) and `SaveTrustedGrades` grade those answers in the sandbox and
  put the trusted scores into the gradebook; nothing runs the notebook in a kernel, unless the
  course opts in with `c.TrustedGrader.execute_student_notebooks = True` (then `ResilientExecute`
  only);
- the feedback says "pending" for what nobody has scored (`GetGradesWithPending`), keeps of
  the notebook only what the page shows (`SanitizeFeedback`, last) and renders it with the
  course's template, whose every piece of a notebook's HTML goes through `clean_html`.

The check reads the values as nbgrader's objects would take them from the configuration (a
converter's settings may come from a parent section, `BaseConverter`; an exporter's from
`HTMLExporter`; a step may be switched off with `enabled = False`), not the lines as written.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, ExecutePreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from .feedback import FEEDBACK_TEMPLATE, FeedbackExporter, GetGradesWithPending, feedback_template_dirs
from .feedback_html import SanitizeFeedback, clean_html
from .normalise import NormaliseSubmission, SubmissionExporter
from .preprocessors import ResilientExecute, SaveTrustedGrades, StartTrustedGrading

IMPORT_LINE = "from autograder.nbgrader_ext import trusted_steps"


# ---------------------------------------------------------------- the values (what the course's lines set)

def autograde_exporter() -> type:
    return SubmissionExporter


def sanitize_preprocessors() -> list:
    """nbgrader's sanitising steps, after the submission is rebuilt from the source's cells."""
    from nbgrader.converters import Autograde

    return [NormaliseSubmission, *Autograde.class_traits()["sanitize_preprocessors"].default()]


def autograde_preprocessors(c: Config) -> list:
    """nbgrader's autograde steps with the trusted grading in place of the kernel's scores; the
    notebook is run (ResilientExecute) only where `c.TrustedGrader.execute_student_notebooks`."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor

    execute = [ResilientExecute] if _executes(c) else []
    return [StartTrustedGrading, *execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveTrustedGrades,
            AssignLatePenalties, CheckCellMetadata]


def feedback_preprocessors() -> list:
    return [GetGradesWithPending, ClearHiddenTests, CSSHTMLHeaderPreprocessor, SanitizeFeedback]


def feedback_exporter() -> type:
    return FeedbackExporter


def feedback_filters() -> dict:
    return {"clean_html": clean_html}


def _executes(config: Config) -> bool:
    return bool(config.TrustedGrader.get("execute_student_notebooks", False))


# ---------------------------------------------------------------- the check

@dataclass(frozen=True)
class Required:
    line: str  # the line of nbgrader_config.py that puts it in place (after IMPORT_LINE)
    wrong: Callable[[Config], str | None]  # what is wrong with the course's setting, or None


def _steps(values) -> list[type]:
    """A preprocessor list as nbconvert registers it: classes, instances, or import strings."""
    steps = []
    for value in values:
        if isinstance(value, str):
            try:
                value = import_item(value)
            except Exception:  # noqa: BLE001 - nbgrader would fail on it too
                raise ValueError(f"the step {value!r} cannot be imported") from None
        elif not isinstance(value, type) and getattr(value, "enabled", True) is False:
            raise ValueError(f"the step {type(value).__name__} is given switched off (enabled=False)")
        steps.append(value if isinstance(value, type) else type(value))
    return steps


def _names(steps: list[type]) -> str:
    return "[" + ", ".join(step.__name__ for step in steps) + "]"


def _converter(config: Config, name: str):
    from nbgrader import converters
    from nbgrader.coursedir import CourseDirectory

    return getattr(converters, name)(coursedir=CourseDirectory(config=config), config=config)


def _switched_off(config: Config, steps: list[type]) -> list[str]:
    """The steps the configuration disables (`c.STEP.enabled = False`, or a parent's)."""
    off = []
    for step in steps:
        try:
            if not step(config=config).enabled:
                off.append(step.__name__)
        except Exception:  # noqa: BLE001 - not a preprocessor: the list's own check says so
            continue
    return off


def _exporter_wrong(config: Config) -> str | None:
    exporter = _converter(config, "Autograde").exporter_class
    if not issubclass(exporter, SubmissionExporter):
        return f"autograde reads submissions with {exporter.__name__}, not the course's SubmissionExporter"
    return None


def _sanitize_wrong(config: Config) -> str | None:
    steps = _steps(_converter(config, "Autograde").sanitize_preprocessors)
    kernel = _kernel_wrong(config, steps)
    if not steps or not issubclass(steps[0], NormaliseSubmission):
        return "; ".join(filter(None, [f"the sanitising steps are {_names(steps)}: NormaliseSubmission must come first", kernel]))
    return kernel or _off_wrong(config, steps[:1])


def _autograde_wrong(config: Config) -> str | None:
    steps = _steps(_converter(config, "Autograde").autograde_preprocessors)
    starts = [i for i, step in enumerate(steps) if issubclass(step, StartTrustedGrading)]
    saves = [i for i, step in enumerate(steps) if issubclass(step, SaveTrustedGrades)]
    stock = [step.__name__ for step in steps if issubclass(step, SaveAutoGrades) and not issubclass(step, SaveTrustedGrades)]
    kernel = _kernel_wrong(config, steps)
    if starts[:1] != [0] or not saves or stock:
        return "; ".join(filter(None, [
            f"the autograde steps are {_names(steps)}: StartTrustedGrading must come first and SaveTrustedGrades "
            "score the test cells" + (f" ({', '.join(stock)} scores them from the kernel's outputs)" if stock else ""),
            kernel]))
    return kernel or _off_wrong(config, [steps[0], steps[saves[0]]])


def _kernel_wrong(config: Config, steps: list[type]) -> str | None:
    """A step that runs the student's notebook in a kernel, where the course has not opted in
    (and then, only the course's own ResilientExecute)."""
    runs = [step for step in steps if issubclass(step, ExecutePreprocessor)]
    allowed = ResilientExecute if _executes(config) else None
    stray = [step.__name__ for step in runs if allowed is None or not issubclass(step, allowed)]
    if stray:
        return (f"{', '.join(stray)} would run the student's notebook in a Jupyter kernel as the grading user"
                + ("" if _executes(config) else " (c.TrustedGrader.execute_student_notebooks is False)"))
    return None


def _off_wrong(config: Config, steps: list[type]) -> str | None:
    off = _switched_off(config, steps)
    return f"{', '.join(off)} is switched off (enabled = False): remove that setting" if off else None


def _feedback_wrong(config: Config) -> str | None:
    steps = _steps(_converter(config, "GenerateFeedback").preprocessors)
    if not any(issubclass(step, GetGradesWithPending) for step in steps) or not steps or not issubclass(steps[-1], SanitizeFeedback):
        return (f"the feedback steps are {_names(steps)}: GetGradesWithPending must read the grades and "
                "SanitizeFeedback come last")
    return _off_wrong(config, [steps[-1]])


def _feedback_exporter_setting(config: Config, trait: str):
    """A setting of the feedback's exporter as traitlets gives it (the most derived section that
    sets it wins: c.FeedbackExporter over c.HTMLExporter), read without building the exporter (it
    fails to build without its template's folder); where the exporter is not the course's, the
    course's (the exporter's own line puts that right)."""
    exporter = _converter(config, "GenerateFeedback").exporter_class
    exporter = exporter if issubclass(exporter, FeedbackExporter) else FeedbackExporter
    value = None
    for section in reversed(exporter.__mro__):
        if section.__name__ in config and trait in config[section.__name__]:
            value = config[section.__name__][trait]
    return value


def _feedback_exporter_wrong(config: Config) -> str | None:
    exporter = _converter(config, "GenerateFeedback").exporter_class
    if not issubclass(exporter, FeedbackExporter):
        return f"feedback is written with {exporter.__name__}, not the course's FeedbackExporter"
    return None


def _template_wrong(config: Config) -> str | None:
    name = _feedback_exporter_setting(config, "template_name")
    if name != FEEDBACK_TEMPLATE:
        return f"the feedback template is {name!r}, not the course's {FEEDBACK_TEMPLATE!r}"
    return None


def _template_dirs_wrong(config: Config) -> str | None:
    folders = _feedback_exporter_setting(config, "extra_template_basedirs") or []
    if not set(map(str, feedback_template_dirs())) <= set(map(str, folders)):
        return "the feedback template's folders are not among the exporter's extra_template_basedirs"
    return None


def _filters_wrong(config: Config) -> str | None:
    if (_feedback_exporter_setting(config, "filters") or {}).get("clean_html") is not clean_html:
        return "the feedback template's clean_html filter is not the course's"
    return None


def _sanitize_html_wrong(config: Config) -> str | None:
    if _feedback_exporter_setting(config, "sanitize_html") is not True:
        return "the exporter's sanitize_html is not on"
    return None


REQUIRED: tuple[Required, ...] = (
    Required("c.Autograde.exporter_class = trusted_steps.autograde_exporter()", _exporter_wrong),
    Required("c.Autograde.sanitize_preprocessors = trusted_steps.sanitize_preprocessors()", _sanitize_wrong),
    Required("c.Autograde.autograde_preprocessors = trusted_steps.autograde_preprocessors(c)", _autograde_wrong),
    Required("c.GenerateFeedback.preprocessors = trusted_steps.feedback_preprocessors()", _feedback_wrong),
    Required("c.GenerateFeedback.exporter_class = trusted_steps.feedback_exporter()", _feedback_exporter_wrong),
    Required("c.HTMLExporter.template_name = trusted_steps.FEEDBACK_TEMPLATE", _template_wrong),
    Required("c.HTMLExporter.extra_template_basedirs = trusted_steps.feedback_template_dirs()", _template_dirs_wrong),
    Required("c.HTMLExporter.filters = trusted_steps.feedback_filters()", _filters_wrong),
    Required("c.HTMLExporter.sanitize_html = True", _sanitize_html_wrong),
)


def missing(config: Config) -> list[tuple[Required, str]]:
    """Each required setting the configuration lacks or gets wrong, with what is wrong."""
    found = []
    for required in REQUIRED:
        try:
            why = required.wrong(config)
        except ValueError as error:  # a step that cannot be used (said by _steps)
            why = str(error)[:300]
        except Exception as error:  # noqa: BLE001 - a value nbgrader itself would refuse
            why = f"{error.__class__.__name__}: {str(error)[:200]}"
        if why:
            found.append((required, why))
    return found


def lines_to_add(wrong: list[tuple[Required, str]]) -> str:
    """The lines that put `wrong` right, to go at the end of nbgrader_config.py."""
    return "\n".join([IMPORT_LINE, *(required.line for required, _ in wrong)])
