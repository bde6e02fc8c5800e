"""autograder/nbgrader_ext/normalise.py: a submission rebuilt from the source notebook's cells.

The real course's tiling assignment, released by nbgrader into a scratch course with a real
gradebook; submissions built here (each the released notebook with something done to it) go
through SubmissionExporter's reader and NormaliseSubmission as autograde runs them, with no
grading: what comes out must be the same notebook as the honest submission's, but for the
text of the answer cells the student wrote.
"""
from __future__ import annotations

import copy
import json
import sys

import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator

from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.nbgrader_ext.normalise import (
    REFUSED_KEY, NormaliseSubmission, missing_text, read_submission, submission_record, submitted_answers,
)
from autograder.nbgrader_ext.notebook_file import NotANotebook
from autograder.nbgrader_ext.plan import METADATA_KEY

from bundled_course import COURSE, source_notebook

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

ANSWERS = {"schedule": "def schedule(sch):\n    pass  # mine", "tile-arithmetic": "TILES_PER_CHANNEL = 196"}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = copy_course(COURSE, tmp_path_factory.mktemp("normalise") / "course")
    release = release_assignment(root, "tiling", students=[])
    config = load_course_config(root)
    return root, release, config, course_directory(config).db_url


def answered(release) -> dict:
    """The released notebook with ANSWERS in its answer cells, as plain JSON."""
    notebook = json.loads((release / "tiling.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in ANSWERS:
            cell["source"] = ANSWERS[grade_id]
    return notebook


def by_id(notebook) -> dict:
    return {c["metadata"].get("nbgrader", {}).get("grade_id") or c.get("id"): c for c in notebook["cells"]}


def normalise(course, tmp_path, raw, refused: str | None = None):
    """`raw` (bytes, or JSON) handed in, read and normalised as autograde's first step does."""
    root, _, config, db_url = course
    path = tmp_path / "tiling.ipynb"
    path.write_bytes(raw if isinstance(raw, bytes) else json.dumps(raw).encode("utf-8"))
    resources = {"nbgrader": {"notebook": "tiling", "assignment": "tiling", "student": "ann", "db_url": db_url}}
    try:
        submitted = read_submission(path)
    except NotANotebook as why:
        submitted, resources[REFUSED_KEY] = nbformat.v4.new_notebook(), str(why)
    clean, _ = NormaliseSubmission(config=config).preprocess(submitted, resources)
    return clean


def structure(notebook) -> list:
    """What nbgrader grades by: each cell's type, id, nbgrader marks and (but for answers) text."""
    return [(c.cell_type, c.get("id"), c.metadata.get("nbgrader"),
             None if c.metadata.get("nbgrader", {}).get("solution") else c.source) for c in notebook.cells]


def answers_of(notebook) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")}


@pytest.fixture(scope="module")
def honest(course, tmp_path_factory):
    return normalise(course, tmp_path_factory.mktemp("honest"), answered(course[1]))


def test_an_honest_submission_becomes_the_source_cells_with_its_answers(course, honest):
    source = nbformat.read(source_notebook("tiling"), as_version=4)
    released = by_id(nbformat.read(course[1] / "tiling.ipynb", as_version=4))
    assert [c.get("id") for c in honest.cells] == [c.get("id") for c in source.cells]
    assert answers_of(honest) == ANSWERS
    for grade_id, cell in by_id(honest).items():  # what students were given, and the hidden tests
        if cell.metadata.get("nbgrader", {}).get("locked"):
            assert cell.source.replace("### BEGIN HIDDEN TESTS", "").split("### END HIDDEN TESTS")[-1] in released[grade_id].source
        elif grade_id not in ANSWERS:
            assert cell.source == released[grade_id].source, grade_id
    assert "question_points" in by_id(honest)["tile-arithmetic-marks"].source  # the hidden test is back in
    assert "BEGIN SOLUTION" not in json.dumps(honest)  # the source's solutions are not
    assert METADATA_KEY not in honest.metadata and not any(METADATA_KEY in c.metadata for c in honest.cells)  # nor its plan
    nbformat.validate(honest)
    MetadataValidator().validate_nb(honest)


def test_added_removed_retyped_and_reflagged_cells_change_nothing_but_the_answers(course, honest, tmp_path):
    notebook = answered(course[1])
    cells = by_id(notebook)
    schedule = cells["schedule"]["metadata"]["nbgrader"]
    schedule.update(grade=True, points=50, locked=True)  # the answer made a grade cell worth 50
    cells["tile-arithmetic"]["cell_type"] = "markdown"  # retyped, flags turned off
    cells["tile-arithmetic"]["metadata"]["nbgrader"].update(solution=False, schema_version=99)
    del cells["tile-arithmetic"]["outputs"], cells["tile-arithmetic"]["execution_count"]
    cells["speed"]["metadata"]["nbgrader"].update(points=300, grade_id="speedy")  # a test cell renamed
    notebook["cells"].remove(cells["fusion"])
    cells["self-check"]["source"] = "print('PASSED')"
    cells["tiling-0"]["source"] = "<script>alert(1)</script>"  # a cell nbgrader does not mark
    cells["tiling-0"]["metadata"]["tags"] = ["x navbar-fixed-top"]
    notebook["cells"].insert(0, nbformat.v4.new_code_cell("1", metadata={"nbgrader": {
        "grade": True, "grade_id": "bonus", "locked": False, "points": 100, "schema_version": 3, "solution": False}}))
    notebook["cells"].append(copy.deepcopy(cells["schedule"]) | {"source": "def schedule(sch):\n    pass  # a second copy"})
    clean = normalise(course, tmp_path, json.loads(json.dumps(notebook)))
    assert structure(clean) == structure(honest)
    assert answers_of(clean) == ANSWERS  # the first cell that carries an answer's grade_id
    assert "alert" not in json.dumps(clean) and "navbar" not in json.dumps(clean)


def test_a_missing_answer_is_graded_as_released_and_recorded(course, honest, tmp_path):
    notebook = answered(course[1])
    notebook["cells"].remove(by_id(notebook)["schedule"])
    by_id(notebook)["tile-arithmetic"]["metadata"]["nbgrader"]["grade_id"] = "mine"
    clean = normalise(course, tmp_path, notebook)
    assert structure(clean) == structure(honest)
    released = by_id(json.loads((course[1] / "tiling.ipynb").read_text(encoding="utf-8")))
    assert answers_of(clean) == {g: "".join(released[g]["source"]) for g in ANSWERS}
    assert submission_record(clean.metadata) == {"missing": ["schedule", "tile-arithmetic"]}


def stripped(notebook, *, ids: bool = False, only=None) -> dict:
    """`notebook` with every cell's metadata gone (only `only`'s, when given), as Colab or
    `nbstripout`-like tools leave it; with `ids`, the cell ids too (saved as nbformat 4.4)."""
    for cell in notebook["cells"]:
        if only is None or cell["metadata"].get("nbgrader", {}).get("grade_id") in only:
            cell["metadata"] = {}
        if ids:
            cell.pop("id", None)
    if ids:
        notebook["nbformat_minor"] = 4
    return notebook


@pytest.mark.parametrize("how, found", [
    ("metadata", "by its cell id"),
    ("metadata-and-ids", "by its place in the notebook"),
    ("answers-only", "by its cell id"),
])
def test_answer_cells_that_lost_their_metadata_are_found_and_said(course, honest, tmp_path, how, found):
    notebook = stripped(answered(course[1]), ids=how == "metadata-and-ids", only=set(ANSWERS) if how == "answers-only" else None)
    clean = normalise(course, tmp_path, notebook)
    assert structure(clean) == structure(honest)
    assert answers_of(clean) == ANSWERS
    record = submission_record(clean.metadata)
    assert sorted(record["recovered"]) == sorted(ANSWERS) and "missing" not in record, record
    assert all(found in said and "lost its nbgrader metadata" in said for said in record["recovered"].values()), record


def test_a_stripped_answer_found_by_what_it_defines_among_scratch_cells(course, honest, tmp_path):
    notebook = stripped(answered(course[1]), ids=True)
    at = next(i for i, c in enumerate(notebook["cells"]) if c["source"] == ANSWERS["schedule"])
    notebook["cells"].insert(at + 1, nbformat.v4.new_code_cell("print(sch.trace)"))  # a scratch cell beside it
    clean = normalise(course, tmp_path, json.loads(json.dumps(notebook)))
    assert answers_of(clean) == ANSWERS
    assert "by its content (the only such cell that defines schedule)" in submission_record(clean.metadata)["recovered"]["schedule"]


def test_a_stripped_answer_nothing_identifies_is_refused_by_name(course, honest, tmp_path):
    notebook = stripped(answered(course[1]), ids=True)
    at = next(i for i, c in enumerate(notebook["cells"]) if c["source"] == ANSWERS["schedule"])
    notebook["cells"].insert(at + 1, nbformat.v4.new_code_cell("def schedule(sch):\n    pass  # another try"))
    clean = normalise(course, tmp_path, json.loads(json.dumps(notebook)))
    record = submission_record(clean.metadata)
    assert record["missing"] == ["schedule"] and list(record["recovered"]) == ["tile-arithmetic"], record
    said = record["unidentified"]["schedule"]
    assert "the answer cell 'schedule' has lost its nbgrader metadata" in said and "which of 2 unmarked cells" in said
    assert missing_text("schedule", record) == said


@pytest.mark.parametrize("tamper", [
    "bom", "utf-16", "utf-32", "surrogate", "surrogate-bytes", "deep", "minor-5.99", "nbformat-5", "unknown-cell-type", "invalid-cell-id",
    "nbgrader-wrong-types", "future-schema", "no-metadata", "source-list", "duplicate-ids", "junk-cells",
])
def test_odd_files_are_graded_from_their_answers(course, honest, tmp_path, tamper):
    notebook = answered(course[1])
    cells = by_id(notebook)
    encoding, expected = "utf-8", dict(ANSWERS)
    if tamper == "bom":
        encoding = "utf-8-sig"
    elif tamper in ("utf-16", "utf-32"):
        encoding = tamper
    elif tamper == "surrogate":  # escaped in the JSON, as json.dumps writes one
        cells["schedule"]["source"] = "def schedule(sch):\n    pass  # \ud800"
        expected["schedule"] = "def schedule(sch):\n    pass  # \ufffd"
    elif tamper == "surrogate-bytes":  # encoded as if it were a character: not UTF-8
        cells["schedule"]["source"] = "def schedule(sch):\n    pass  # \ud800"
        expected["schedule"] = "def schedule(sch):\n    pass  # \ufffd\ufffd\ufffd"
    elif tamper == "deep":
        deep = {}
        for _ in range(950):
            deep = {"d": deep}
        notebook["metadata"]["deep"] = deep
        cells["schedule"]["metadata"]["deep"] = deep
    elif tamper == "minor-5.99":
        notebook["nbformat_minor"] = 5.99
    elif tamper == "nbformat-5":
        notebook["nbformat"] = 5
    elif tamper == "unknown-cell-type":
        notebook["cells"].append({"cell_type": "widget", "source": "x", "metadata": {}})
        cells["tile-arithmetic"]["cell_type"] = "answer"
    elif tamper == "invalid-cell-id":
        cells["schedule"]["id"] = "not a valid id!"
        cells["tiling-0"]["id"] = 7
    elif tamper == "nbgrader-wrong-types":
        cells["schedule"]["metadata"]["nbgrader"].update(points="lots", grade="yes", locked=[1])
        cells["speed"]["metadata"]["nbgrader"] = "graded"
        cells["tile-arithmetic-marks"]["metadata"]["nbgrader"]["grade_id"] = {"id": 1}
    elif tamper == "future-schema":
        for cell in notebook["cells"]:
            if "nbgrader" in cell["metadata"]:
                cell["metadata"]["nbgrader"]["schema_version"] = 9
    elif tamper == "no-metadata":
        del notebook["metadata"], cells["tiling-1"]["metadata"]
    elif tamper == "source-list":
        cells["schedule"]["source"] = ANSWERS["schedule"].splitlines(keepends=True)
        cells["self-check"]["source"] = {"lines": 3}
    elif tamper == "duplicate-ids":
        cells["tiling-0"]["id"] = cells["schedule"]["id"] = cells["speed"]["id"] = "same"
        cells["tiling-1"]["id"] = ""
    elif tamper == "junk-cells":
        notebook["cells"] += [7, None, "cell", [1], {"cell_type": "code"}]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))  # "deep" nests near the limit; a pytest-xdist worker starts deeper
    try:
        raw = json.dumps(notebook, ensure_ascii=tamper == "surrogate").encode(encoding, "surrogatepass")
    finally:
        sys.setrecursionlimit(limit)
    clean = normalise(course, tmp_path, raw)
    assert structure(clean) == structure(honest)
    assert answers_of(clean) == expected
    nbformat.validate(clean)
    json.dumps(clean, ensure_ascii=False).encode("utf-8")  # writable


@pytest.mark.parametrize("raw, cause", [
    (b"[1, 2, 3]", "not a notebook: the file is a JSON list"),
    (b'{"cells": "all of them"}', "not a notebook: it has no list of cells"),
    (b"\x00\x01\x02garbage", "not a notebook: not JSON (line 1)"),
])
def test_a_file_that_is_no_notebook_is_the_notebook_unanswered_and_refused(course, honest, tmp_path, raw, cause):
    clean = normalise(course, tmp_path, raw)
    assert structure(clean) == structure(honest)
    released = by_id(json.loads((course[1] / "tiling.ipynb").read_text(encoding="utf-8")))
    assert answers_of(clean) == {g: "".join(released[g]["source"]) for g in ANSWERS}
    assert submission_record(clean.metadata) == {"refused": cause}


def test_only_the_text_of_answer_cells_is_taken(course):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("mine", metadata={"nbgrader": {"grade_id": "schedule"}}),
        nbformat.v4.new_code_cell("not an answer", metadata={"nbgrader": {"grade_id": "speed"}}),
        nbformat.v4.new_code_cell(metadata={"nbgrader": {"grade_id": ["tile-arithmetic"]}}),
    ])
    notebook.cells[0].source = ["not", "text", 3]
    assert submitted_answers(notebook, {"schedule", "tile-arithmetic"}) == {}
    notebook.cells[0].source = ["mi", "ne"]
    assert submitted_answers(notebook, {"schedule", "tile-arithmetic"}) == {"schedule": "mine"}


def test_the_record_read_back_is_only_what_normalising_writes():
    assert submission_record({METADATA_KEY: {"submission": {"refused": 3, "missing": ["a", ["b"]], "other": 1}}}) == {"missing": ["a"]}
    assert submission_record({METADATA_KEY: "x"}) == {} == submission_record([])

