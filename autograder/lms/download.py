"""An LMS's "download all submissions" archive: untrusted input, read before anything is written.

What each LMS writes (read in their source, which is what this relies on):

- Canvas, lib/content_zipper.rb (ContentZipper#get_filename and #add_upload_submission): one
  file per uploaded attachment, named
      <sortable name, lower-cased, non-word characters dropped>[_LATE]_<user id>_<attachment id>_<file name>
  e.g. doejane_LATE_48213_1937004_tiling.ipynb. The file name is the one Canvas shows, which
  becomes tiling-1.ipynb, tiling-2.ipynb, ... when a student uploads a file of the same name
  again. With anonymous grading the prefix is anon_<anonymous id>, which names no user: such
  files are refused. The user id is the student id (unless a student in the gradebook carries
  it as nbgrader's lms_user_id: then that student's id).
- Moodle, mod/assign/locallib.php (assign::download_submissions), with "Download submissions in
  folders" (the default since Moodle 3.1): one folder per submission and plugin,
      <full name>_<participant id>_assignsubmission_file_/<path in the submission>/<file name>
  (without folders: that prefix joined to the file name). The number is the assignment's
  participant identifier (its assign_user_mapping), not the user's id, and differs between
  assignments. The assignment's grading worksheet (Grading action > Download grading
  worksheet, from the "Offline grading worksheet" feedback type) pairs it, as
  "Participant <n>", with the student's identity fields: the email address by default. The
  student id is that email address (or the id of the gradebook's student with that email).

Nothing in an archive is trusted: names are checked (no absolute paths, no `..`, no drive
letters or backslashes, no control characters, bounded length and depth), links, encrypted
entries and archives inside the archive are refused, each notebook's size and compression
ratio are bounded (a zip bomb is refused before it is inflated) and its content must parse as
a notebook (nested at most 64 levels), and the whole is bounded in entries and bytes: every
limit per student as well as per archive, so that one student's upload, whatever it is, costs
only that student. Every entry is accounted for: collected, or refused with the reason, on one
line that names no other entry than the one collected in its place. Renamed uploads
("Tiling (1).ipynb", "tiling-2.ipynb") are the notebook they name; of one student's several
uploads of a notebook the newest is collected, the others refused as older. Students not on
the roster (unless enrol) and Canvas's Test Student are refused, and listed.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..problems.variants import VariantError, check_student_id
from ..errors import TvmCourseError

LMS_FORMATS = ("canvas", "moodle")

# The Canvas name, as nbgrader's FileNameCollectorPlugin applies it to the extracted file's
# whole path (course/nbgrader_config.py sets it as c.FileNameCollectorPlugin.named_regexp).
# file_id drops the "-1", "-2", ... Canvas appends to a file uploaded again.
CANVAS_NAMED_REGEXP = (
    r".*/(?P<sortable_name>[^/]*?)(?P<late>_(?:LATE|late))?_(?P<student_id>[0-9]{1,20})_(?P<attachment_id>[0-9]{1,20})_"
    r"(?P<file_id>[^/]+?)(?:-[0-9]{1,9})?\.ipynb$"
)
CANVAS_ANONYMOUS = re.compile(r"^(?:(?:LATE|late)_)?anon_[A-Za-z0-9]+_[0-9]+_")
CANVAS_SHAPE = "lastfirst_[LATE_]USERID_ATTACHMENTID_NAME.ipynb"
MOODLE_FOLDER = re.compile(r"^(?P<full_name>[^/_]*)_(?P<participant>[0-9]{1,20})_assignsubmission_file_?$")
MOODLE_FLAT = re.compile(r"^(?P<full_name>[^/_]*)_(?P<participant>[0-9]{1,20})_assignsubmission_file_(?P<file>[^/]+)$")
MOODLE_SHAPE = "FULL NAME_PARTICIPANT_assignsubmission_file_/NAME.ipynb"
IGNORED = re.compile(r"(^|/)(__MACOSX|\.DS_Store|Thumbs\.db|desktop\.ini)(/|$)")


@dataclass(frozen=True)
class Limits:
    """Every limit holds per student as well as per archive, the student's first: one student's
    upload, whatever it is, costs only that student."""

    archive_bytes: int = 2 << 30  # the zip file itself
    entries: int = 200_000  # names in the whole archive (what is held in memory to read it): ten times a large class's re-uploads
    student_entries: int = 100  # one student's files (of every notebook): the newest are looked at
    notebook_bytes: int = 20 << 20  # one notebook, uncompressed
    student_bytes: int = 60 << 20  # read for one student: the newest upload of each notebook, an older one where it is not a notebook
    fallbacks: int = 2  # older uploads read where the newest is not a notebook
    total_bytes: int = 1 << 30  # every notebook collected, uncompressed
    json_depth: int = 64  # nesting of a notebook's JSON (nbformat's own is under 10)
    ratio: int = 200  # uncompressed / compressed above this: a zip bomb, refused unread
    name_chars: int = 400
    depth: int = 8
    worksheet_bytes: int = 20 << 20


LIMITS = Limits()


class DownloadError(ValueError, TvmCourseError):
    """The archive (or worksheet) as a whole cannot be used; the message says why and what to do."""


class NoStudent(ValueError, TvmCourseError):
    """One upload names no student of the course (student_for): that upload is refused, the message says why."""


class NotASubmission(ValueError, TvmCourseError):
    """An entry of a download is not named as its LMS names submissions (match_entry): the message says why."""


class Entry(NamedTuple):
    """What an entry's name says, named as its LMS names submissions."""

    lms_id: str
    notebook: str  # the name the student uploaded it under
    late: bool


@dataclass(frozen=True)
class Accepted:
    entry: str  # the name in the archive
    student: str  # the nbgrader student id it is collected under
    notebook: str  # the released notebook it is, e.g. tiling.ipynb
    lms_id: str  # Canvas user id, or Moodle participant number
    late: bool  # Canvas marked it LATE
    size: int
    sha256: str


@dataclass(frozen=True)
class Refused:
    entry: str
    reason: str


@dataclass
class DownloadPlan:
    lms: str
    assignment: str
    notebooks: tuple[str, ...]
    accepted: list[Accepted] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # folders and OS metadata (__MACOSX, .DS_Store)
    strangers: list[str] = field(default_factory=list)  # not on the roster: refused (unless enrol)
    test_students: list[str] = field(default_factory=list)  # the LMS's test student (Canvas's Student View): refused
    notes: list[str] = field(default_factory=list)  # what was collected other than the newest upload, and why
    enrol_command: str = ""  # the command that collects this download again, enrolling the strangers

    @property
    def students(self) -> list[str]:
        return sorted({a.student for a in self.accepted})

    def looked_for(self) -> str:
        shape = CANVAS_SHAPE if self.lms == "canvas" else MOODLE_SHAPE
        return f"{self.lms} submissions named {shape}, NAME one of {', '.join(self.notebooks) or '(no released notebook)'}"


@dataclass(frozen=True)
class Roster:
    """Who is in the gradebook: to collect a submission under a student's own id."""

    by_lms_id: dict[str, str] = field(default_factory=dict)  # nbgrader lms_user_id -> student id
    by_email: dict[str, str] = field(default_factory=dict)  # email, lower-cased -> student id
    ids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class WorksheetEntry:
    participant: str
    identity: str  # the email address (or ID number, or username)
    full_name: str


def enrol_advice(command: str) -> str:
    """What to do about students who are not on the roster: the command that collects them too."""
    if command:
        return f"to collect them too (enrolling them in the gradebook), run: {command}"
    return "enrol them first (`tvm-course roster`), or collect again enrolling them (`tvm-course collect ... --enrol`)"


def plan_download(archive: Path, lms: str, assignment: str, notebooks: list[str] | tuple[str, ...], *,
                  worksheet: dict[str, WorksheetEntry] | None = None, roster: Roster = Roster(),
                  canvas_regexp: str = CANVAS_NAMED_REGEXP, limits: Limits = LIMITS, enrol: bool = False,
                  enrol_command: str = "") -> DownloadPlan:
    """What collecting `archive` would do: each entry accepted (with its student) or refused (with why).

    `enrol_command`: the command, as the caller was run, that collects the download again with
    the students who are not on the roster (and enrols them); a stranger's refusal names it.

    Two passes, so that no student's files cost another student anything: the first reads only
    the archive's directory (names, sizes) and sorts each student's uploads, newest first; the
    second reads, per student and notebook, the newest upload (an older one only where the
    newest is not a notebook), smallest first across the class, so that the archive's total is
    spent on the honest submissions before on anyone's giant one."""
    if lms not in LMS_FORMATS:
        raise DownloadError(f"unknown LMS {lms!r}: one of {', '.join(LMS_FORMATS)}")
    if lms == "moodle" and worksheet is None:
        raise DownloadError(
            "a Moodle download names each submission by the assignment's participant number, not by student: pass "
            "the assignment's grading worksheet too (--worksheet FILE.csv; in Moodle, Grading action > Download "
            "grading worksheet, which needs the assignment's 'Offline grading worksheet' feedback type)"
        )
    plan = DownloadPlan(lms, assignment, tuple(sorted(notebooks)), enrol_command=enrol_command)
    released = {canonical_notebook(n): n for n in plan.notebooks}
    with _open_archive(archive, limits) as zf:
        uploads: dict[str, dict[str, list[_Upload]]] = {}  # student -> notebook -> uploads
        strangers, test_students = set(), set()
        for info in zf.infolist():
            name = info.filename
            if name.endswith("/") or IGNORED.search(name):
                plan.ignored.append(_shown(name))
                continue
            why = _unsafe(info, limits)
            if why:
                plan.refused.append(Refused(_shown(name), why))
                continue
            try:
                lms_id, uploaded, late = match_entry(name, lms, canvas_regexp)
            except NotASubmission as error:
                plan.refused.append(Refused(_shown(name), str(error)))
                continue
            notebook = released.get(canonical_notebook(uploaded))
            if notebook is None:
                plan.refused.append(Refused(_shown(name), f"{_shown(uploaded)} is not a notebook of {assignment} "
                                                            f"(its notebooks: {', '.join(plan.notebooks)})"))
                continue
            if lms == "canvas" and _canvas_test_student(name, canvas_regexp):
                test_students.add(lms_id)
                plan.refused.append(Refused(_shown(name), f"Canvas's Test Student (user {lms_id}, the course's Student View): "
                                                           "not a student of the class, never collected"))
                continue
            try:
                student = student_for(lms, lms_id, worksheet, roster)
            except NoStudent as error:
                plan.refused.append(Refused(_shown(name), str(error)))
                continue
            if student not in roster.ids and not enrol:
                strangers.add(student)
                plan.refused.append(Refused(_shown(name), f"{student} is not on the course's roster: not collected; "
                                                           + enrol_advice(plan.enrol_command)))
                continue
            uploads.setdefault(student, {}).setdefault(notebook, []).append(
                _Upload(info, name, lms_id, late, _newness(lms, info, name, uploaded, canvas_regexp)))
        plan.strangers = sorted(strangers)
        plan.test_students = sorted(test_students)
        first, fallback = _choose(plan, uploads, limits)
        first.sort(key=lambda u: (u[2].info.file_size, u[0], u[1]))  # the total goes to the small (honest) ones first
        total = 0
        spent: dict[str, int] = {}
        chosen: dict[tuple[str, str], Accepted] = {}
        for round_ in (first, fallback):
            for student, notebook, upload, newest in round_:
                if (student, notebook) in chosen:
                    plan.refused.append(Refused(_shown(upload.name), _superseded(chosen[student, notebook].entry, notebook)))
                    continue
                size = upload.info.file_size
                if spent.get(student, 0) + size > limits.student_bytes:
                    plan.refused.append(Refused(_shown(upload.name), f"not read: {student}'s uploads in this download already "
                                                                      f"came to {_size(limits.student_bytes)}, all one student may have read"))
                    continue
                if total + size > limits.total_bytes:
                    plan.refused.append(Refused(_shown(upload.name), f"the download holds more than {_size(limits.total_bytes)} of "
                                                                      "notebooks: collect it in parts"))
                    continue
                spent[student] = spent.get(student, 0) + size
                try:
                    content = _read_bounded(zf, upload.info, limits)
                except (DownloadError, zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
                    plan.refused.append(Refused(_shown(upload.name), f"cannot be read from the archive: {_line(error)}"))
                    continue
                problem = _not_a_notebook(content, limits)
                if problem:
                    plan.refused.append(Refused(_shown(upload.name), problem))
                    continue
                total += len(content)
                accepted = Accepted(upload.name, student, notebook, upload.lms_id, upload.late, len(content),
                                    hashlib.sha256(content).hexdigest())
                chosen[student, notebook] = accepted
                if not newest:
                    plan.notes.append(f"{student}: the newest upload of {notebook} is not a notebook (said above): "
                                      f"collected the one before it, {_shown(upload.name)}")
        plan.accepted = sorted(chosen.values(), key=lambda a: (a.student, a.notebook))
    return plan


@dataclass(frozen=True)
class _Upload:
    info: zipfile.ZipInfo
    name: str
    lms_id: str
    late: bool
    newness: tuple  # larger: newer


def _choose(plan: DownloadPlan, uploads: dict, limits: Limits):
    """(the newest upload of each student's notebook, the older ones to read where the newest
    is refused); the rest of a student's uploads are refused here, each with one line."""
    first, fallback = [], []
    for student, by_notebook in sorted(uploads.items()):
        every = sorted(((u, n) for n, found in by_notebook.items() for u in found), key=lambda p: p[0].newness, reverse=True)
        kept = every[:limits.student_entries]
        for upload, _ in every[limits.student_entries:]:
            plan.refused.append(Refused(_shown(upload.name), f"one of {len(every)} files of {student} in this download: "
                                                              f"only the newest {limits.student_entries} are looked at"))
        for notebook in sorted(by_notebook):
            mine = [u for u, n in kept if n == notebook]
            if not mine:
                continue
            first.append((student, notebook, mine[0], True))
            for index, older in enumerate(mine[1:]):
                if index < limits.fallbacks:
                    fallback.append((student, notebook, older, False))
                else:
                    plan.refused.append(Refused(_shown(older.name), _superseded(mine[0].name, notebook)))
    return first, fallback


def _superseded(newer: str, notebook: str) -> str:
    return f"an older upload of {notebook}: {_shown(newer)} is newer and is the one collected"


def _newness(lms: str, info: zipfile.ZipInfo, name: str, uploaded: str, canvas_regexp: str) -> tuple:
    """Orders one student's uploads of a notebook: Canvas's attachment ids grow with each upload;
    Moodle's folder keeps each file's time (the zip entry's), and a browser's " (2)" or Canvas's
    "-2" numbers the copies."""
    attachment = 0
    if lms == "canvas":
        found = re.match(canvas_regexp, "/" + name)
        if found and found.groupdict().get("attachment_id"):
            attachment = int(found.group("attachment_id"))
    copy = re.search(r"(?:\s*\((\d{1,9})\)|[-_ ](\d{1,9}))\s*(?:\.ipynb)?$", uploaded, re.IGNORECASE)
    number = int(copy.group(1) or copy.group(2)) if copy else 0
    return (attachment, tuple(info.date_time), number, name)


def canonical_notebook(name: str) -> str:
    """A notebook's name as a student's upload may have it renamed: Canvas's and Moodle's "-1"
    (numbered on past 9999 by a student who uploads that often: up to nine digits),
    a browser's " (1)", any case, spaces for dashes: "Tiling (1).ipynb", "tiling-2.ipynb" and
    "TILING.ipynb" are all tiling.ipynb."""
    stem = re.sub(r"\.ipynb$", "", name.strip(), flags=re.IGNORECASE)
    stem = re.sub(r"(?:\s*\(\d{1,9}\)|-\d{1,9})+$", "", stem.strip())
    return re.sub(r"[\s_-]+", "-", stem.strip().lower())


def _canvas_test_student(name: str, canvas_regexp: str) -> bool:
    """Canvas names its Test Student ("Student, Test") studenttest in its downloads."""
    found = re.match(canvas_regexp, "/" + name)
    return found is not None and (found.groupdict().get("sortable_name") or "").lower() == "studenttest"


def read_entry(archive: Path, accepted: Accepted, limits: Limits = LIMITS) -> bytes:
    """The accepted entry's content, checked against the plan (size and sha256)."""
    with _open_archive(archive, limits) as zf:
        info = zf.getinfo(accepted.entry)
        content = _read_bounded(zf, info, limits)
    if len(content) != accepted.size or hashlib.sha256(content).hexdigest() != accepted.sha256:
        raise DownloadError(f"{archive} changed while it was being collected: collect it again")
    return content


def safe_destination(root: Path, entry: str) -> Path:
    """Where an accepted entry is written under `root`: its own (already checked) path, and never outside."""
    parts = PurePosixPath(entry).parts
    target = Path(root).joinpath(*parts).resolve()
    if not target.is_relative_to(Path(root).resolve()) or not parts:
        raise DownloadError(f"refusing to write {entry!r} outside {root}")
    return target


def read_worksheet(path: Path, limits: Limits = LIMITS) -> dict[str, WorksheetEntry]:
    """participant number -> the student's identity, from a Moodle grading worksheet (CSV)."""
    try:
        raw = Path(path).read_bytes() if Path(path).stat().st_size <= limits.worksheet_bytes else None
    except OSError as error:
        raise DownloadError(f"cannot read the worksheet {path}: {error.strerror or error}") from None
    if raw is None:
        raise DownloadError(f"the worksheet {path} is larger than {_size(limits.worksheet_bytes)}: is it the grading worksheet?")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DownloadError(f"the worksheet {path} is not UTF-8 text: download it again as CSV (UTF-8)") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise DownloadError(f"the worksheet {path} is empty")
    header = [h.strip() for h in rows[0]]
    identity_column = next((c for c in ("Email address", "ID number", "Username") if c in header), None)
    if "Identifier" not in header or identity_column is None:
        raise DownloadError(
            f"{path} is not a Moodle grading worksheet: its header names no 'Identifier' and no 'Email address' "
            f"(or 'ID number', 'Username') column (it names: {', '.join(h for h in header[:12] if h) or 'nothing'})"
        )
    at, who = header.index("Identifier"), header.index(identity_column)
    named = header.index("Full name") if "Full name" in header else None
    entries: dict[str, WorksheetEntry] = {}
    for row in rows[1:]:
        if len(row) <= max(at, who):
            continue
        found = re.fullmatch(r"\s*\D*?([0-9]{1,20})\s*", row[at])  # "Participant 123456", in any language
        identity = row[who].strip()
        if found and identity:
            entries[found.group(1)] = WorksheetEntry(found.group(1), identity, row[named].strip() if named is not None and len(row) > named else "")
    if not entries:
        raise DownloadError(f"the worksheet {path} lists no participant with an {identity_column.lower()}")
    return entries


def roster_from_gradebook(coursedir) -> Roster:
    from nbgrader.api import Gradebook

    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return Roster()
    by_lms, by_email, ids = {}, {}, set()
    with Gradebook(url, coursedir.course_id) as gradebook:
        for student in gradebook.students:
            ids.add(student.id)
            if student.lms_user_id:
                by_lms[str(student.lms_user_id)] = student.id
            if student.email:
                by_email[student.email.strip().lower()] = student.id
    return Roster(by_lms, by_email, frozenset(ids))


# --- one entry ---------------------------------------------------------------------------------


def _open_archive(archive: Path, limits: Limits) -> zipfile.ZipFile:
    path = Path(archive)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DownloadError(f"cannot read {archive}: {error.strerror or error}") from None
    if size > limits.archive_bytes:
        raise DownloadError(f"{archive} is {_size(size)}, over the {_size(limits.archive_bytes)} a download may be")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise DownloadError(f"{archive} is not a zip archive ({error}): download the submissions again") from None
    if len(zf.infolist()) > limits.entries:
        zf.close()
        raise DownloadError(f"{archive} holds {len(zf.infolist())} entries, over the {limits.entries} a download may hold")
    return zf


def _unsafe(info: zipfile.ZipInfo, limits: Limits) -> str | None:
    name = info.filename
    if len(name) > limits.name_chars:
        return f"a name of {len(name)} characters (at most {limits.name_chars})"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a name with control characters"
    if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "an absolute or Windows-style path: it would be written outside the download"
    parts = PurePosixPath(name).parts
    if ".." in parts:
        return "a path with '..': it would be written outside the download"
    if len(parts) > limits.depth:
        return f"nested {len(parts)} folders deep (at most {limits.depth})"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if mode and not stat.S_ISREG(mode) and stat.S_IFMT(mode):
        return "not a regular file"
    if info.flag_bits & 0x1:
        return "encrypted"
    if PurePosixPath(name).suffix.lower() in (".zip", ".gz", ".tgz", ".tar", ".7z", ".rar", ".bz2", ".xz"):
        return "an archive inside the download (collected files are notebooks: ask for the notebook itself)"
    if PurePosixPath(name).suffix != ".ipynb":
        return "not a notebook (.ipynb)"
    if info.file_size > limits.notebook_bytes:
        return f"{_size(info.file_size)}, larger than a notebook may be ({_size(limits.notebook_bytes)})"
    if info.compress_size and info.file_size / info.compress_size > limits.ratio:
        return f"compressed {info.file_size // max(1, info.compress_size)}:1, a zip bomb? (refused unread)"
    return None


def match_entry(name: str, lms: str, canvas_regexp: str) -> Entry:
    """What an entry named as the LMS names submissions says; NotASubmission, saying why, for another."""
    base = PurePosixPath(name).name
    if lms == "canvas":
        if CANVAS_ANONYMOUS.match(base):
            raise NotASubmission("anonymous grading: Canvas names no user in it; turn anonymous grading off to collect under student ids")
        found = re.match(canvas_regexp, "/" + name)
        if not found or not found.groupdict().get("student_id") or not found.groupdict().get("file_id"):
            raise NotASubmission(f"not named as Canvas names submissions ({CANVAS_SHAPE})")
        return Entry(found.group("student_id"), found.group("file_id") + ".ipynb", bool(found.groupdict().get("late")))
    parts = PurePosixPath(name).parts
    for part in parts[:-1]:
        folder = MOODLE_FOLDER.match(part)
        if folder:
            return Entry(folder.group("participant"), parts[-1], False)
    flat = MOODLE_FLAT.match(base)
    if flat:
        return Entry(flat.group("participant"), flat.group("file"), False)
    raise NotASubmission(f"not in a folder named as Moodle names submissions ({MOODLE_SHAPE})")


def student_for(lms: str, lms_id: str, worksheet: dict[str, WorksheetEntry] | None, roster: Roster) -> str:
    """The student id for an LMS id; NoStudent, saying why, when there is none."""
    if lms == "canvas":
        student = roster.by_lms_id.get(lms_id, lms_id)
    else:
        entry = (worksheet or {}).get(lms_id)
        if entry is None:
            raise NoStudent(f"participant {lms_id} is not in the grading worksheet (download both from the same assignment, the same day)")
        identity = entry.identity.strip()
        student = roster.by_email.get(identity.lower()) or (identity if identity in roster.ids else identity.lower())
    try:
        return check_student_id(student)
    except VariantError as error:
        raise NoStudent(f"no usable student id for {lms} id {lms_id}: {error}") from None


def _read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits) -> bytes:
    with zf.open(info) as handle:
        content = handle.read(limits.notebook_bytes + 1)
    if len(content) > limits.notebook_bytes:
        raise DownloadError(f"{_shown(info.filename)} inflates past its declared size: the archive is damaged or hostile")
    return content


def _not_a_notebook(content: bytes, limits: Limits = LIMITS) -> str | None:
    try:
        notebook = json.loads(content.decode("utf-8"))
    except RecursionError:  # the decoder nests one call per level: thousands of levels exhaust the stack
        return f"not a notebook: its JSON nests deeper than Python reads (a notebook nests under {limits.json_depth} levels)"
    except (UnicodeDecodeError, ValueError) as error:
        return f"not a notebook: its content is not JSON ({_line(error)[:80]})"
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list) or notebook.get("nbformat") != 4:
        return "not a notebook: no nbformat 4 cells"
    depth = _depth(notebook, limits.json_depth)
    if depth > limits.json_depth:
        return f"not a notebook: its JSON nests more than {limits.json_depth} levels deep (every later step would have to recurse through it)"
    return None


def _depth(value, limit: int) -> int:
    """How deep `value` nests, counted without recursion and no further than limit + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > limit:
                return level
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _shown(name: str) -> str:
    """A name from the archive as reports print it: on one line (a newline in it would print a
    forged report line), control characters escaped, at most 120 characters."""
    return _line(name if len(name) <= 120 else name[:117] + "...")


def _line(text) -> str:
    from ..engine.untrusted_text import visible

    return visible(str(text)).replace("\n", "\\n").replace("\t", "\\t")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
