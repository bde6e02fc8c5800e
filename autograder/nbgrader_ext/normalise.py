"""A submitted notebook rebuilt from the instructor's cells before nbgrader grades it.

nbgrader's autograde repairs a submission cell by cell and trusts the rest of it: OverwriteCells
looks up each cell by the grade_id the submission gives it, believes its `grade` flag, and
fails on every run when a student adds a cell that claims to be graded or sets `grade: true` on
an answer cell (a grade cell the gradebook does not have); a file nbformat's reader rejects (a
byte order mark, UTF-16, a list instead of an object) fails before any step runs. Either way the
submission stays "grading failed", never a grade. So course/nbgrader_config.py puts two steps in
front of nbgrader's own:

    SubmissionExporter    autograde's reader. The file is decoded robustly (notebook_file.py);
                          a notebook nbformat accepts is read as nbformat reads it, any other
                          is salvaged: each cell's type, text, id and grade_id, where they are
                          of the right type, nothing else. A file that holds no notebook at all
                          is refused: its cause goes into the resources.
    NormaliseSubmission   the first sanitising step. A new notebook of the source notebook's
                          cells, in its order: the cells nbgrader grades as the gradebook holds
                          them (type, flags, points, text: hidden tests in, solutions out), the
                          others as the source has them. The submission gives only the text of
                          its answer cells, matched by grade_id (the first cell that carries
                          one), whatever type or flags the student gave that cell. A refused
                          file gives the notebook unanswered, marked refused: it scores 0 and
                          the feedback and the instructor's CSV say why.

So added, removed, retyped or re-flagged cells, changed grade_ids or points change nothing but
what the student wrote in their answer cells; tampering.py still tells the instructor what was
done. The same exporter reads the autograded copy for nbgrader's second step: a notebook written
here, which nbformat accepts as it is.
"""
from __future__ import annotations

import datetime
import os
import re
import warnings

import nbformat
import nbformat.reader
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat import v4
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Unicode

from .notebook_file import NotANotebook, read_json_file
from .plan import METADATA_KEY
from .released_names import RELEASED_NAME_KEY, missing_cause, stand_in_cause

REFUSED_KEY = "tvm_course_refused"  # resources: why the submitted file is not a notebook
SUBMISSION_KEY = "submission"  # under the notebook's METADATA_KEY: what normalising found
CELL_TYPES = ("code", "markdown", "raw")
CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # nbformat 4.5's pattern for a cell id


class SubmissionExporter(NotebookExporter):
    """NotebookExporter, reading the file as described in this module's docstring. A released
    notebook the submission has no file of that name for (released_names.py) is read from the
    one other notebook handed in, or refused, saying which was expected and what was found."""

    # Absolute path -> why the file there is refused: set only by a cluster worker, for a file the
    # instructor's machine read and refused (a link, over the size limit) and sent as an empty
    # stand-in, so that the worker's verdict is the local one (course/cluster.py)
    refused_files = Dict(key_trait=Unicode(), value_trait=Unicode()).tag(config=True)

    def from_filename(self, filename, resources=None, **kw):
        resources = ResourcesDict() if resources is None else resources
        if not resources.get("metadata"):
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        try:
            modified = datetime.datetime.fromtimestamp(os.lstat(filename).st_mtime, tz=datetime.timezone.utc)
            resources["metadata"]["modified_date"] = modified.strftime("%B %d, %Y")
        except OSError:
            pass
        misnamed = resources.get(RELEASED_NAME_KEY)
        try:
            if misnamed is not None and misnamed.get("stand_in") is None:
                raise NotANotebook(missing_cause(misnamed))
            notebook = self._read(os.path.join(path, misnamed["stand_in"]) if misnamed is not None else filename)
        except NotANotebook as why:
            cause = stand_in_cause(misnamed, str(why)) if misnamed is not None and misnamed.get("stand_in") else str(why)
            self.log.warning("%s is refused: %s", filename, cause)
            resources[REFUSED_KEY] = cause
            notebook = v4.new_notebook()
        return self.from_notebook_node(notebook, resources, **kw)

    def _read(self, filename) -> nbformat.NotebookNode:
        refused = self.refused_files.get(os.path.abspath(filename))
        if refused is not None:
            raise NotANotebook(refused)
        return read_submission(filename, self.log)


def read_submission(path, log=None) -> nbformat.NotebookNode:
    """The notebook at `path`: as nbformat reads it where nbformat accepts it, else salvaged."""
    raw = read_json_file(path)
    notebook = _as_nbformat(raw)
    if notebook is not None:
        return notebook
    if log is not None:  # expected of a submission; of an autograded copy (written here) it would be a bug
        log.warning("%s is not a notebook nbformat accepts: only its cells' types, text, ids and grade ids are read", path)
    return salvage(raw)


def _as_nbformat(raw: dict) -> nbformat.NotebookNode | None:
    """`raw` as a valid nbformat 4 notebook, upgraded from an older format; None if it is not one."""
    try:
        with warnings.catch_warnings():  # nbformat warns about what it repairs (duplicate ids): we only ask
            warnings.simplefilter("ignore")
            major, minor = nbformat.reader.get_version(raw)
            if major not in nbformat.versions:
                return None
            # what nbformat.reads does after parsing: lines joined, transient fields dropped, upgraded
            notebook = nbformat.convert(nbformat.versions[major].to_notebook_json(raw, minor=minor), 4)
            if notebook.get("nbformat") != 4 or type(notebook.get("nbformat_minor")) is not int:
                return None
            nbformat.validate(notebook)
    except Exception:  # noqa: BLE001 - nbformat raises all kinds on what it does not expect
        return None
    return notebook


def salvage(raw: dict) -> nbformat.NotebookNode:
    """A valid notebook of what `raw` holds that normalising can use: per cell, its type (an
    unknown one becomes raw), its text, its id and grade_id where they are of the right type."""
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise NotANotebook("not a notebook: it has no list of cells")
    salvaged, ids = [], set()
    for found in cells:
        if not isinstance(found, dict):
            continue
        cell_type = found.get("cell_type") if found.get("cell_type") in CELL_TYPES else "raw"
        cell = _new_cell(cell_type, _text(found.get("source")))
        if isinstance(found.get("id"), str) and CELL_ID.match(found["id"]) and found["id"] not in ids:
            cell.id = found["id"]
        ids.add(cell.id)
        metadata = found.get("metadata")
        marks = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if isinstance(marks, dict) and isinstance(marks.get("grade_id"), str):
            cell.metadata["nbgrader"] = {"grade_id": marks["grade_id"]}
        salvaged.append(cell)
    return v4.new_notebook(cells=salvaged)


class NormaliseSubmission(NbGraderPreprocessor):
    """The submission as the source notebook's cells with the student's answers in them."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        refused = resources.get(REFUSED_KEY)
        source = _source_notebook(self, info)
        with Gradebook(info["db_url"]) as gradebook:
            cells = _graded_cells(gradebook.find_notebook(info["notebook"], info["assignment"]))
        answer_ids = {name for name, cell in cells.items() if cell["marks"].get("solution")}
        answers = {} if refused else submitted_answers(nb, answer_ids)
        recovered, unidentified = ({}, {}) if refused else recover_answers(nb, source, answer_ids - set(answers), answers)
        clean = _rebuild(source, cells, answers, self.log)
        record = {"refused": refused} if refused else {}
        misnamed = resources.get(RELEASED_NAME_KEY)
        if misnamed is not None:  # no file of the released name: what was found, and what was graded in its place
            record["released_name"] = {"expected": misnamed["expected"], "found": list(misnamed["found"]),
                                       "stand_in": misnamed.get("stand_in")}
        missing = sorted(answer_ids - set(answers)) if not refused else []
        if recovered:
            record["recovered"] = recovered
            self.log.warning("Answer cells without their nbgrader metadata, found and graded: %s",
                             "; ".join(f"{name} ({how})" for name, how in sorted(recovered.items())))
        if unidentified:
            record["unidentified"] = unidentified
        if missing:
            record["missing"] = missing
            self.log.warning("Answer cells missing from the submission (graded as released): %s",
                             "; ".join(f"{name}" + (f" ({unidentified[name]})" if name in unidentified else "") for name in missing))
        if record:
            clean.metadata[METADATA_KEY] = {SUBMISSION_KEY: record}
        return clean, resources


def submitted_answers(nb, answer_ids: set[str]) -> dict[str, str]:
    """grade_id -> the text of the first cell of `nb` that carries that answer cell's grade_id."""
    answers: dict[str, str] = {}
    for cell in nb.get("cells", []):
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        marks = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        grade_id = marks.get("grade_id") if isinstance(marks, dict) else None
        if isinstance(grade_id, str) and grade_id in answer_ids and grade_id not in answers:
            text = _text(cell.get("source"), None)
            if text is not None:
                answers[grade_id] = text
    return answers


def recover_answers(nb, source, wanted: set[str], answers: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Answer cells that lost their nbgrader metadata (Colab, an editor or a metadata-stripping
    tool drops `metadata.nbgrader` and keeps the text), found by what survives, in this order:

    1. its nbformat cell id (the release keeps the source's; most tools keep ids);
    2. its place: the only cell of its type, unmarked and not one of the released cells, between
       the released cells that stand before and after it (matched by grade_id or by their text);
    3. its content: of the unmarked cells there (or, with no cell there, anywhere), the only one
       that defines what the source's answer defines (`def schedule`, `TILES_PER_CHANNEL =`).

    `wanted`: the answer cells' grade_ids no cell carries; each one found is added to `answers`.
    Returns ({grade_id: how it was found}, {grade_id: why it could not be}), the latter naming
    the cell and what to do."""
    recovered: dict[str, str] = {}
    unidentified: dict[str, str] = {}
    if not wanted:
        return recovered, unidentified
    cells = [cell for cell in nb.get("cells", []) if isinstance(cell, dict)]
    marked = [_grade_id_of(cell) for cell in cells]
    texts = [_text(cell.get("source"), None) for cell in cells]
    used: set[int] = set()
    anchors = _anchors(source.cells, cells, marked, texts)
    for position, released in enumerate(source.cells):
        grade_id = _grade_id_of(released)
        if grade_id not in wanted or grade_id in answers:
            continue
        free = [i for i, cell in enumerate(cells)
                if marked[i] is None and i not in used and i not in anchors.values() and texts[i] is not None
                and cell.get("cell_type") == released.cell_type]
        found, how = None, None
        by_id = [i for i in free if released.get("id") and cells[i].get("id") == released.get("id")]
        if len(by_id) == 1:
            found, how = by_id[0], f"by its cell id '{released.get('id')}'"
        if found is None:
            before = max((anchors[p] for p in anchors if p < position), default=-1)
            after = min((anchors[p] for p in anchors if p > position and anchors[p] > before), default=len(cells))
            between = [i for i in free if before < i < after]
            defines = _definitions(released.source)
            if len(between) == 1:
                found, how = between[0], "by its place in the notebook, between the released cells around it"
            elif defines:
                pool = between or free
                defining = [i for i in pool if defines & _definitions(texts[i])]
                if len(defining) == 1:
                    names = ", ".join(sorted(defines & _definitions(texts[defining[0]])))
                    found, how = defining[0], f"by its content (the only such cell that defines {names})"
            if found is None:
                if between or free:  # else no cell is left that could be it: missing, as before
                    unidentified[grade_id] = (
                        f"the answer cell '{grade_id}' has lost its nbgrader metadata, and neither its cell id, its place nor "
                        f"its content tells which of {len(between or free)} unmarked cells it is: copy your answer into the "
                        "released cell (fetch the assignment again) and submit again")
                continue
        answers[grade_id] = texts[found]
        used.add(found)
        recovered[grade_id] = f"it had lost its nbgrader metadata; found {how}, cell {found + 1} of the submission"
    return recovered, unidentified


def _grade_id_of(cell) -> str | None:
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    marks = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = marks.get("grade_id") if isinstance(marks, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def _anchors(released_cells, cells, marked, texts) -> dict[int, int]:
    """Source position -> submission position of the released cells the submission still has,
    in order: by grade_id, else by identical text (text that occurs once in each), kept increasing."""
    by_grade_id = {grade_id: i for i, grade_id in reversed(list(enumerate(marked))) if grade_id is not None}
    submitted = [_as_released(text) if grade_id is None else None for text, grade_id in zip(texts, marked)]
    counts: dict[str, int] = {}
    for text in submitted:
        if text:
            counts[text] = counts.get(text, 0) + 1
    released = [_as_released(cell.source) for cell in released_cells]
    source_counts: dict[str, int] = {}
    for text in released:
        source_counts[text] = source_counts.get(text, 0) + 1
    pairs = []
    for position, cell in enumerate(released_cells):
        grade_id, text = _grade_id_of(cell), released[position]
        if grade_id is not None and grade_id in by_grade_id:
            pairs.append((position, by_grade_id[grade_id]))
        elif text and not (cell.get("metadata", {}).get("nbgrader") or {}).get("solution") \
                and counts.get(text) == 1 and source_counts[text] == 1:
            pairs.append((position, submitted.index(text)))
    kept, last = {}, -1
    for position, index in pairs:  # a moved cell is no landmark
        if index > last:
            kept[position], last = index, index
    return kept


_HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*$", re.MULTILINE | re.DOTALL)


def _as_released(text) -> str | None:
    """A cell's text as the release has it (hidden tests out, as nbgrader's ClearHiddenTests does),
    whitespace collapsed: what a submission's copy of a locked or unmarked cell is compared by."""
    if not isinstance(text, str):
        return None
    return " ".join(_HIDDEN_TESTS.sub("", text).split())


_DEFINITION = re.compile(r"^(?:def\s+([A-Za-z_]\w*)|class\s+([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=))", re.MULTILINE)


def _definitions(text) -> set[str]:
    """The names a cell's text defines at its top level (functions, classes, plain assignments)."""
    if not isinstance(text, str):
        return set()
    return {next(name for name in match.groups() if name) for match in _DEFINITION.finditer(text)}


def submission_record(notebook_metadata) -> dict:
    """What normalising recorded in a graded notebook's metadata ({} for nothing): "refused" (why
    the file was not a notebook), "missing" (answer cells the submission did not have),
    "recovered" (answer cells found without their metadata: grade_id -> how), "unidentified"
    (answer cells that lost it and could not be found: grade_id -> why) and "released_name" (no
    file of the notebook's name was handed in: {"expected", "found", "stand_in"}, released_names.py)."""
    entry = notebook_metadata.get(METADATA_KEY) if isinstance(notebook_metadata, dict) else None
    record = entry.get(SUBMISSION_KEY) if isinstance(entry, dict) else None
    if not isinstance(record, dict):
        return {}
    found = {}
    if isinstance(record.get("refused"), str):
        found["refused"] = record["refused"]
    if isinstance(record.get("missing"), list):
        found["missing"] = [name for name in record["missing"] if isinstance(name, str)]
    for key in ("recovered", "unidentified"):
        if isinstance(record.get(key), dict):
            found[key] = {str(k): str(v) for k, v in record[key].items() if isinstance(v, str)}
    named = record.get("released_name")
    if isinstance(named, dict) and isinstance(named.get("expected"), str) and isinstance(named.get("found"), list):
        found["released_name"] = {"expected": named["expected"], "found": [str(n) for n in named["found"]],
                                  "stand_in": named["stand_in"] if isinstance(named.get("stand_in"), str) else None}
    return found


def missing_text(grade_id: str, record: dict) -> str:
    """Why an answer cell was graded as released (normalising found no answer in it)."""
    return record.get("unidentified", {}).get(grade_id) or f"the answer cell '{grade_id}' is missing from the submission"


def refusal_text(cause: str) -> str:
    """What the student and the instructor are told about a refused file."""
    return f"not graded, 0 points: {cause}"


def refusal_page(notebook: str, cause: str, parts: list[tuple[str, float, float]], misnamed: bool = False) -> dict[str, str]:
    """The student's feedback page for a refused file, in their terms: why nothing in it was
    graded, the score of each part (0, unless an instructor has since given points by hand), and
    what to do. `notebook`: its name without .ipynb; `cause`: the grader's own words
    (notebook_file.py), never the file's content; `parts`: each grade cell's name, score and
    points. `misnamed`: no file of the notebook's name was handed in (`cause` says what was found).
    Plain text: the feedback template escapes every line."""
    scores = ", ".join(f"{name} {score:g} / {points:g}" for name, score, points in parts)
    zero = not any(score for _, score, _ in parts)
    score = (f"Score: 0 for every part ({scores})." if zero else f"Score, given by hand since: {scores}.") if scores else "Score: 0."
    if misnamed:
        why = (f"Why: {cause}, and the grader could not tell which file is your {notebook}.ipynb, so none of your "
               "answers was looked at.")
        what = (f"What to do: hand in your notebook as {notebook}.ipynb, the name it was released under (in Jupyter: "
                "File > Rename), and no other copy of it.")
    else:
        why = (f"Why: the grader could not read the file you handed in as a Jupyter notebook ({cause}), so none of "
               "your answers was looked at.")
        what = (f"What to do: open {notebook}.ipynb in Jupyter, check that your answers are in it, save it there "
                "(File > Save), and hand in that file as Jupyter saved it, under the same name: not a copy that "
                "another program exported, converted, renamed, zipped or edited.")
    return {
        "title": f"Your {notebook}.ipynb was not graded" + (": 0 points" if zero else ""),
        "why": why,
        "score": score,
        "what": what + (" Resubmit before the deadline and the next grading replaces this page with your feedback; "
                        "after it, ask your instructor."),
    }


def _graded_cells(stored) -> dict[str, dict]:
    """grade_id -> what the gradebook holds of each cell nbgrader grades: its type, text and marks."""
    points = {cell.name: float(cell.max_score) for cell in stored.grade_cells}
    solutions = {cell.name for cell in stored.solution_cells}
    tasks = {cell.name: float(cell.max_score) for cell in stored.task_cells}
    cells = {}
    for cell in stored.source_cells:
        marks = {"grade": cell.name in points, "grade_id": cell.name, "locked": bool(cell.locked), "schema_version": 3,
                 "solution": cell.name in solutions}
        if cell.name in points:
            marks["points"] = points[cell.name]
        if cell.name in tasks:
            marks.update(task=True, points=tasks[cell.name])
        cells[cell.name] = {"cell_type": cell.cell_type, "source": cell.source or "", "marks": marks}
    return cells


def _rebuild(source, cells: dict[str, dict], answers: dict[str, str], log) -> nbformat.NotebookNode:
    rebuilt, placed = [], set()
    for cell in source.cells:
        marks = cell.get("metadata", {}).get("nbgrader") or {}
        grade_id = marks.get("grade_id")
        tags = cell.get("metadata", {}).get("tags")
        if grade_id in cells and grade_id not in placed:
            stored = cells[grade_id]
            rebuilt.append(_new_cell(stored["cell_type"], answers.get(grade_id, stored["source"]), cell.get("id"),
                                     {"nbgrader": dict(stored["marks"])}, tags))
            placed.add(grade_id)
        elif any(marks.get(flag) for flag in ("grade", "solution", "locked", "task")):
            # marked in the source but not in the gradebook (changed since the release): not
            # graded by nbgrader, and its text could hold a solution
            log.warning("Source cell %r is not in the gradebook: left out (generate the assignment again to grade it)", grade_id)
        else:
            rebuilt.append(_new_cell(cell.cell_type, cell.source, cell.get("id"), {}, tags))
    for grade_id, stored in cells.items():
        if grade_id not in placed:  # in the gradebook, gone from the source notebook: graded all the same
            rebuilt.append(_new_cell(stored["cell_type"], answers.get(grade_id, stored["source"]), None,
                                     {"nbgrader": dict(stored["marks"])}))
    metadata = {key: source.metadata[key] for key in ("kernelspec", "language_info") if key in source.metadata}
    return v4.new_notebook(cells=rebuilt, metadata=metadata)


def coursedir_of(preprocessor) -> CourseDirectory:
    """The course directory of the nbgrader app a preprocessor runs in (else one from its config)."""
    node = preprocessor.parent
    while node is not None:
        if getattr(node, "coursedir", None) is not None:
            return node.coursedir
        node = getattr(node, "parent", None)
    return CourseDirectory(config=preprocessor.config)


def source_notebook_path(preprocessor, info) -> str:
    """The instructor's source notebook of the notebook being graded (`info`: the resources' "nbgrader")."""
    coursedir = coursedir_of(preprocessor)
    return os.path.join(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]), info["notebook"] + ".ipynb")


def _source_notebook(preprocessor, info) -> nbformat.NotebookNode:
    return nbformat.read(source_notebook_path(preprocessor, info), as_version=4)


def _new_cell(cell_type: str, source: str, cell_id=None, metadata=None, tags=None):
    make = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell}.get(cell_type, v4.new_raw_cell)
    cell = make(source, metadata=dict(metadata or {}))
    if isinstance(cell_id, str) and CELL_ID.match(cell_id):
        cell.id = cell_id
    if isinstance(tags, list) and all(isinstance(tag, str) for tag in tags) and tags:
        cell.metadata["tags"] = list(tags)
    return cell


def _text(source, otherwise=""):
    """A cell's source as one string (nbformat allows a list of lines); `otherwise` if it is neither."""
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return otherwise
