"""A submission that holds no notebook under the released notebook's name.

nbgrader's autograde grades the files named as the gradebook's notebooks and skips the rest
("Skipping unknown notebook"): a notebook handed in as `Tiling Final.ipynb` or `tiling (1).ipynb`
fails the whole grading ("No notebooks found"), every run, with no feedback page. The class run's
workers autograde with `ReleasedNameAutograde` (through `ReleasedNamesAPI`) instead, which grades every released
notebook of the assignment, whatever the folder holds:

- where the folder has an entry of the released name, it is graded as always (a link, a
  directory or a file that is no notebook is refused there: normalise.py);
- where it has none, and exactly one released notebook is missing and exactly one other
  `*.ipynb` entry is there (hidden ones counted), that entry is graded under the released name
  (a browser's "tiling (1).ipynb", an LMS's or an editor's rename): read as any submitted file
  is, and said on the feedback page and in the CSV, and flagged for review;
- else it is refused like a file that is no notebook: each part 0, and a feedback page under the
  released name that says which notebook was expected and which files were found.

The folder's entry names are the student's: they are escaped (`quoted`) and cut wherever shown.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps.api import NbGraderAPI
from nbgrader.converters import Autograde

from ..engine.untrusted_text import visible

RELEASED_NAME_KEY = "tvm_course_released_name"  # resources: what this module decided for a released notebook
NBGRADER_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})  # what nbgrader's exchange puts beside a submission
MAX_LISTED = 10
MAX_NAME = 80


@dataclass(frozen=True)
class Misnamed:
    """A released notebook the submission's folder has no entry of that name for."""

    expected: str  # "tiling.ipynb"
    found: tuple[str, ...]  # the folder's entries, nbgrader's own files left out (untrusted names)
    stand_in: str | None  # the one other notebook graded under the expected name; None: refused

    def as_dict(self) -> dict:
        return asdict(self)


def notebook_entries(names) -> list[str]:
    """The entries among `names` that claim to be notebooks (`*.ipynb`, hidden ones too)."""
    return sorted(name for name in names if name.endswith(".ipynb"))


def misnamed(folder: str | os.PathLike, released: list[str]) -> dict[str, Misnamed]:
    """Released notebook (its name without .ipynb) -> Misnamed, for each that `folder` has no
    entry of that name for (a dangling link or a directory of that name is an entry: refused
    there, as the file handed in under that name)."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return {}
    present = set(entries)
    missing = [name for name in released if f"{name}.ipynb" not in present]
    if not missing:
        return {}
    others = [name for name in notebook_entries(entries) if name[:-len(".ipynb")] not in released]
    found = tuple(name for name in entries if name not in NBGRADER_FILES)
    stand_in = others[0] if len(missing) == 1 and len(others) == 1 else None
    return {name: Misnamed(f"{name}.ipynb", found, stand_in) for name in missing}


def quoted(name: str) -> str:
    """An entry's name as shown to anyone: escaped, on one line, cut, quoted."""
    text = visible(str(name)).replace("\n", "\\n").replace("\t", "\\t")
    return "'" + (text if len(text) <= MAX_NAME else text[:MAX_NAME - 1] + "…") + "'"


def listing(found) -> str:
    """What the folder held, in words: "'a.ipynb', 'b.txt'" ("nothing else" for nothing)."""
    found = list(found)
    if not found:
        return "nothing else"
    said = ", ".join(quoted(name) for name in found[:MAX_LISTED])
    return said + (f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else "")


def missing_cause(record: dict) -> str:
    """Why a released notebook was refused for want of a file of its name (the CSV's and the page's words)."""
    return f"no notebook named {record['expected']} was handed in (found: {listing(record['found'])})"


def stand_in_cause(record: dict, why: str) -> str:
    """Why the one other notebook, graded under the released name, was refused all the same."""
    return f"{quoted(record['stand_in'])}, handed in in place of {record['expected']}: {why}"


def stand_in_note(record: dict) -> str:
    """What the instructor's CSV says of a notebook graded from a file of another name."""
    return (f"{record['expected']} graded from {quoted(record['stand_in'])} (no {record['expected']} was handed in, "
            "and it was the only other notebook)")


def stand_in_feedback(record: dict) -> str:
    """What the student's page says of it."""
    return (f"You handed in {quoted(record['stand_in'])}, not {record['expected']}: as it was your only notebook, it was "
            f"graded as your {record['expected']}. Hand it in as {record['expected']}, the name it was released under, "
            "next time.")


class ReleasedNameAutograde(Autograde):
    """nbgrader's Autograde, grading every released notebook of the assignment (above)."""

    def init_notebooks(self) -> None:
        super().init_notebooks()
        self._misnamed: dict[str, Misnamed] = {}
        try:
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
                released = [n.name for n in gradebook.find_assignment(self.coursedir.assignment_id).notebooks]
        except MissingEntry:  # nbgrader says so, in init_assignment
            return
        for folder, notebooks in self.assignments.items():
            for name, found in misnamed(folder, released).items():
                path = os.path.join(folder, f"{name}.ipynb")
                notebooks.append(path)
                self._misnamed[path] = found

    def init_single_notebook_resources(self, notebook_filename: str) -> dict:
        resources = super().init_single_notebook_resources(notebook_filename)
        found = getattr(self, "_misnamed", {}).get(notebook_filename)
        if found is not None:
            resources[RELEASED_NAME_KEY] = found.as_dict()
        return resources


class ReleasedNamesAPI(NbGraderAPI):
    """NbGraderAPI whose autograde is ReleasedNameAutograde's (what the class run's workers use)."""

    def autograde(self, assignment_id, student_id, force=True, create=True):
        from nbgrader.utils import capture_log, temp_attrs

        with temp_attrs(self.coursedir, assignment_id=assignment_id, student_id=student_id):
            app = ReleasedNameAutograde(coursedir=self.coursedir, parent=self)
            app.force = force
            app.create_student = create
            return capture_log(app)
