"""`nbgrader zip_collect` for Canvas and Moodle downloads: an extractor and a collector plugin.

course/nbgrader_config.py makes them nbgrader's ZipCollectApp plugins:

    SafeExtractor   reads each zip in downloaded/ASSIGNMENT/archive/ as untrusted input
                    (lms/download.py: names, traversal, links, sizes, zip bombs,
                    notebooks that are not notebooks, older uploads, students off the roster)
                    and writes only the submissions it accepts to extracted/, saying why it
                    refused each of the others; nbgrader's own extractor unpacks everything
                    (an entry named ../../x is skipped silently, a 10 GB one is inflated)
    LMSCollector    nbgrader's FileNameCollectorPlugin: Canvas names through its named_regexp
                    (c.FileNameCollectorPlugin.named_regexp, the Canvas pattern), Moodle's folder
                    per submission read by lms/download.py; the LMS id becomes the student id
                    (Canvas: the user id, or the student who has it as lms_user_id; Moodle: the
                    grading worksheet's email for the participant number), checked like every
                    student id (problems/variants.check_student_id)

Which LMS: c.LMSDownload.lms ("canvas", the default, or "moodle") and, for Moodle,
c.LMSDownload.worksheet; `tvm-course collect ASSIGNMENT --from canvas|moodle ZIP` sets both
and runs `nbgrader zip_collect`. Where the archives hold nothing to collect, the extractor
ends the run with nbgrader's own fail() (exit status 1, saying what it looked for), where
nbgrader would collect nothing and exit 0.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from nbgrader.utils import find_all_notebooks
from traitlets import Bool, Enum, Unicode
from traitlets.config import Configurable

from .download import _shown
from .download import (
    CANVAS_NAMED_REGEXP, LMS_FORMATS, DownloadError, DownloadPlan, NoStudent, NotASubmission, canonical_notebook, match_entry,
    plan_download, read_entry, read_worksheet, roster_from_gradebook, safe_destination, student_for,
)


class LMSDownload(Configurable):
    """Which LMS the download in downloaded/ASSIGNMENT/archive/ comes from."""

    lms = Enum(list(LMS_FORMATS), default_value="canvas", help="the LMS whose 'download all submissions' zip is collected").tag(config=True)
    worksheet = Unicode("", help="Moodle: the assignment's grading worksheet (CSV), which pairs participant numbers "
                                 "with students' email addresses").tag(config=True)
    enrol = Bool(False, help="collect (and so enrol) students who are not in the gradebook; off: their uploads are "
                             "refused, listed").tag(config=True)


def _context(plugin):
    """(coursedir, assignment, settings, worksheet, roster, Canvas pattern) for a ZipCollectApp's plugin."""
    app = plugin.parent
    settings = LMSDownload(parent=app)
    worksheet = read_worksheet(Path(settings.worksheet)) if settings.lms == "moodle" and settings.worksheet else None
    pattern = FileNameCollectorPlugin(parent=app).named_regexp or CANVAS_NAMED_REGEXP
    return app.coursedir, app.coursedir.assignment_id, settings, worksheet, roster_from_gradebook(app.coursedir), pattern


def plan_for(plugin, archive: Path) -> DownloadPlan:
    coursedir, assignment, settings, worksheet, roster, pattern = _context(plugin)
    released = coursedir.format_path(coursedir.release_directory, ".", assignment)
    notebooks = [os.path.basename(n) for n in find_all_notebooks(released)]
    return plan_download(archive, settings.lms, assignment, notebooks, worksheet=worksheet, roster=roster, canvas_regexp=pattern,
                         enrol=settings.enrol, enrol_command=_enrol_command(assignment, settings))


def _enrol_command(assignment: str, settings: LMSDownload) -> str:
    """This nbgrader command again (in the same folder), collecting the students who are not on the
    roster too: nbgrader's options for the LMSDownload settings (zip_collect has no --enrol)."""
    command = ["nbgrader", "zip_collect", assignment, "--force", "--LMSDownload.enrol=True"]
    if settings.lms != "canvas":
        command.append(f"--LMSDownload.lms={settings.lms}")
    if settings.worksheet:
        command.append(f"--LMSDownload.worksheet={Path(settings.worksheet).resolve()}")
    return shlex.join(command)


class SafeExtractor(ExtractorPlugin):
    """Writes the accepted submissions of each zip in the archive directory to
    extracted/ZIPNAME/, under their names in the zip; refuses the rest, saying why."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        archives = sorted(p for p in Path(archive_path).iterdir() if p.is_file())
        if not archives:
            self.log.warning("No files found in directory: %s", archive_path)
            return
        found, looked_for = 0, ""
        for archive in archives:
            if archive.suffix.lower() != ".zip":
                self.log.warning("Skipped %s: only the LMS's zip downloads are read here", archive.name)
                continue
            try:
                plan = plan_for(self, archive)
            except DownloadError as error:
                self.log.error("Skipped %s: %s", _shown(archive.name), error)
                continue
            into = Path(extracted_path) / archive.stem
            for accepted in plan.accepted:
                target = safe_destination(into, accepted.entry)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(read_entry(archive, accepted))
            for refused in plan.refused:
                self.log.warning("Not collected from %s: %s: %s", _shown(archive.name), refused.entry, refused.reason)
            self.log.info("%s: %d submission file(s) of %d student(s) accepted, %d refused",
                          _shown(archive.name), len(plan.accepted), len(plan.students), len(plan.refused))
            found, looked_for = found + len(plan.accepted), plan.looked_for()
        if not found:  # nbgrader would go on to collect nothing and exit 0
            self.parent.fail(f"found no submission in {archive_path}: looked for {looked_for or 'zip downloads'}; "
                             "see the reasons above (for Moodle, set LMSDownload.lms and LMSDownload.worksheet)")


class LMSCollector(FileNameCollectorPlugin):
    """The student and notebook of each extracted file: Canvas names through nbgrader's
    named_regexp, Moodle folders through lms/download.py; the LMS id mapped to a student id."""

    _context_cache = None

    def collect(self, submitted_file: str):
        if self._context_cache is None:
            self._context_cache = _context(self)
        coursedir, assignment, settings, worksheet, roster, pattern = self._context_cache
        if os.path.splitext(submitted_file)[1] not in self.valid_ext:
            return None
        extracted = Path(self.parent._format_collect_path(self.parent.extracted_directory)).resolve()
        try:
            entry = Path(submitted_file).resolve().relative_to(extracted)
        except ValueError:
            self.log.warning("Skipped %s: not under %s", submitted_file, extracted)
            return None
        inside = "/".join(entry.parts[1:])  # the name in the zip (extracted/ZIPNAME/...)
        try:  # Canvas: through c.FileNameCollectorPlugin.named_regexp
            lms_id, uploaded, _ = match_entry(inside, settings.lms, pattern)
        except NotASubmission as error:
            self.log.warning("Skipped %s: %s", _shown(inside), error)
            return None
        released = {canonical_notebook(n): n for n in self._released()}
        notebook = released.get(canonical_notebook(uploaded))  # "Tiling (1).ipynb" is tiling.ipynb
        if notebook is None:
            self.log.warning("Skipped %s: not a notebook of %s", _shown(inside), assignment)
            return None
        try:
            student = student_for(settings.lms, lms_id, worksheet, roster)
        except NoStudent as error:
            self.log.warning("Skipped %s: %s", _shown(inside), error)
            return None
        return {"student_id": student, "file_id": os.path.splitext(notebook)[0]}

    def _released(self) -> list[str]:
        coursedir = self.parent.coursedir
        released = coursedir.format_path(coursedir.release_directory, ".", coursedir.assignment_id)
        return [os.path.basename(n) for n in find_all_notebooks(released)]
