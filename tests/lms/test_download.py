"""lms/download.py: an LMS download (Canvas, Moodle) read without trusting its names, sizes or links.

Real zip files, built here the way each LMS builds them (the names of lib/content_zipper.rb and
of mod/assign's download_submissions), plus the hostile and broken ones an instructor may be
handed: every entry is accepted with its student, or refused with a reason, and nothing is
written anywhere by reading.
"""
from __future__ import annotations

import stat
import zipfile

import nbformat
import pytest

from autograder.lms.download import (
    CANVAS_NAMED_REGEXP, DownloadError, Limits, Roster, match_entry, plan_download, read_entry, read_worksheet, safe_destination,
)

NOTEBOOK = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def schedule(sch):\n    pass")]))
WORKSHEET = ("\ufeffIdentifier,\"Full name\",\"Email address\",Status,Grade,\"Maximum grade\",\"Grade can be changed\","
             "\"Last modified (submission)\",\"Last modified (grade)\",\"Feedback comments\"\n"
             "\"Participant 5001\",\"Ada Lovelace\",ada@uni.example,\"Submitted for grading\",,14.00,Yes,-,-,\n"
             "\"Participant 5002\",\"Ben Babbage\",Ben.Babbage@uni.example,\"Submitted for grading\",,14.00,Yes,-,-,\n"
             "\"Participant 5003\",\"Quote O'Neil\",o'neil@uni.example,\"Submitted for grading\",,14.00,Yes,-,-,\n")


def make_zip(path, entries, *, symlinks=(), encrypted=()):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, content)
    data = bytearray(path.read_bytes())
    for name in encrypted:  # Python's zipfile writes no encrypted entries: set the flag in the central directory
        record = data.index(b"PK\x01\x02")
        while not data[record + 46: record + 46 + len(name)] == name.encode():
            record = data.index(b"PK\x01\x02", record + 4)
        data[record + 8] |= 0x1
    path.write_bytes(bytes(data))
    return path


def plan(path, lms="canvas", notebooks=("tiling.ipynb",), **kwargs):
    kwargs.setdefault("enrol", True)  # the roster's part has tests of its own below
    return plan_download(path, lms, "tiling", notebooks, **kwargs)


def refused(result):
    return {r.entry: r.reason for r in result.refused}


def test_canvas_names_give_the_user_id_late_flags_and_the_notebook(tmp_path):
    result = plan(make_zip(tmp_path / "submissions.zip", {
        "lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "babbageben_LATE_48214_900002_tiling-1.ipynb": NOTEBOOK,  # uploaded twice: Canvas's "-1"
        "o_neilquote_48215_900003_tiling.ipynb": NOTEBOOK,  # sortable names keep underscores
        "__MACOSX/._lovelaceada_48213_900001_tiling.ipynb": "junk",
    }))
    got = {(a.student, a.notebook, a.late) for a in result.accepted}
    assert got == {("48213", "tiling.ipynb", False), ("48214", "tiling.ipynb", True), ("48215", "tiling.ipynb", False)}
    assert result.refused == [] and result.ignored == ["__MACOSX/._lovelaceada_48213_900001_tiling.ipynb"]
    assert read_entry(tmp_path / "submissions.zip", result.accepted[0]).decode() == NOTEBOOK


def test_a_roster_maps_a_canvas_user_id_to_the_students_own_id(tmp_path):
    archive = make_zip(tmp_path / "s.zip", {"lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK})
    (accepted,) = plan(archive, roster=Roster(by_lms_id={"48213": "alovelace"})).accepted
    assert accepted.student == "alovelace" and accepted.lms_id == "48213"
    (accepted,) = plan(archive, roster=Roster(by_lms_id={"48213": "bad id!"})).refused
    assert "no usable student id for canvas id 48213" in accepted.reason


def test_hostile_and_broken_entries_are_refused_each_with_its_reason(tmp_path):
    bomb = "{" + " " * 5_000_000 + "}"  # 5 MB that deflates to a few KB
    archive = make_zip(tmp_path / "hostile.zip", {
        "../../lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "/etc/lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "C:/lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "dir\\lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "link_48216_900004_tiling.ipynb": "/etc/passwd",
        "locked_48217_900005_tiling.ipynb": NOTEBOOK,
        "evil\x1b[2J_48218_900006_tiling.ipynb": NOTEBOOK,
        "inner_48219_900007_tiling.zip": "PK",
        "essay_48220_900008_answers.pdf": "%PDF",
        "bomb_48221_900009_tiling.ipynb": bomb,
        "notjson_48222_900010_tiling.ipynb": "this is not json",
        "oldformat_48223_900011_tiling.ipynb": '{"cells": [], "nbformat": 3}',
        "other_48224_900012_homework.ipynb": NOTEBOOK,
        "random-junk.ipynb": NOTEBOOK,
        "anon_x7Kd2_900013_tiling.ipynb": NOTEBOOK,
        "a/b/c/d/e/f/g/h/i/deep_48225_900014_tiling.ipynb": NOTEBOOK,
        "x" * 500 + ".ipynb": NOTEBOOK,
        "fine_48226_900015_tiling.ipynb": NOTEBOOK,
    }, symlinks={"link_48216_900004_tiling.ipynb"}, encrypted={"locked_48217_900005_tiling.ipynb"})
    result = plan(archive)
    assert [a.student for a in result.accepted] == ["48226"]
    why = refused(result)
    assert "'..'" in why["../../lovelaceada_48213_900001_tiling.ipynb"]
    for name in ("/etc/lovelaceada_48213_900001_tiling.ipynb", "C:/lovelaceada_48213_900001_tiling.ipynb",
                 "dir\\lovelaceada_48213_900001_tiling.ipynb"):
        assert "outside the download" in why[name], name
    assert why["link_48216_900004_tiling.ipynb"] == "a symbolic link"
    assert why["locked_48217_900005_tiling.ipynb"] == "encrypted"
    assert "control characters" in next(r for e, r in why.items() if e.startswith("evil"))
    assert "\x1b" not in "".join(why)  # names are shown escaped
    assert "an archive inside the download" in why["inner_48219_900007_tiling.zip"]
    assert why["essay_48220_900008_answers.pdf"] == "not a notebook (.ipynb)"
    assert "zip bomb" in why["bomb_48221_900009_tiling.ipynb"]
    assert "not JSON" in why["notjson_48222_900010_tiling.ipynb"]
    assert "nbformat 4" in why["oldformat_48223_900011_tiling.ipynb"]
    assert "homework.ipynb is not a notebook of tiling" in why["other_48224_900012_homework.ipynb"]
    assert "not named as Canvas names submissions" in why["random-junk.ipynb"]
    assert "anonymous grading" in why["anon_x7Kd2_900013_tiling.ipynb"]
    assert "folders deep" in why["a/b/c/d/e/f/g/h/i/deep_48225_900014_tiling.ipynb"]
    assert "characters (at most 400)" in next(r for e, r in why.items() if e.startswith("xxx"))
    assert len(result.refused) + len(result.accepted) == 18  # every entry accounted for


def test_sizes_are_bounded_before_anything_is_inflated(tmp_path):
    small = Limits(notebook_bytes=len(NOTEBOOK) + 10, entries=3, total_bytes=2 * len(NOTEBOOK) + 5)
    archive = make_zip(tmp_path / "big.zip", {
        "a_1_1_tiling.ipynb": NOTEBOOK, "b_2_2_tiling.ipynb": NOTEBOOK, "c_3_3_tiling.ipynb": NOTEBOOK + " " * 100,
    })
    result = plan(archive, limits=small)
    assert "larger than a notebook may be" in refused(result)["c_3_3_tiling.ipynb"]
    assert len(result.accepted) == 2
    result = plan(archive, limits=Limits(total_bytes=len(NOTEBOOK) + 5))
    assert len(result.accepted) == 1 and any("collect it in parts" in r for r in refused(result).values())
    make_zip(tmp_path / "many.zip", {f"s_{i}_{i}_tiling.ipynb": NOTEBOOK for i in range(4)})  # the archive's names
    with pytest.raises(DownloadError, match="holds 4 entries, over the 3"):
        plan(tmp_path / "many.zip", limits=small)
    with pytest.raises(DownloadError, match="over the 10 bytes a download may be"):
        plan(archive, limits=Limits(archive_bytes=10))


def test_renamed_and_resubmitted_uploads_collect_the_newest_and_report_the_others(tmp_path):
    """Canvas numbers a file uploaded again (tiling-1), browsers add " (1)", students retype the
    name: all are the tiling notebook, and of one student's uploads the newest is collected
    (Canvas: the larger attachment id; Moodle: the later file time)."""
    result = plan(make_zip(tmp_path / "canvas.zip", {
        "babbagecharles_1002_9021_Tiling.ipynb": NOTEBOOK,
        "babbagecharles_1002_9035_tiling (1).ipynb": NOTEBOOK + " ",
        "babbagecharles_1002_9030_tiling-1.ipynb": NOTEBOOK + "  ",
        "hoppergrace_late_1003_9040_TILING.ipynb": NOTEBOOK,  # lower-case _late_ is late too
    }))
    got = {(a.student, a.entry, a.late) for a in result.accepted}
    assert got == {("1002", "babbagecharles_1002_9035_tiling (1).ipynb", False), ("1003", "hoppergrace_late_1003_9040_TILING.ipynb", True)}
    why = refused(result)
    assert set(why) == {"babbagecharles_1002_9021_Tiling.ipynb", "babbagecharles_1002_9030_tiling-1.ipynb"}
    assert all("an older upload of tiling.ipynb" in r and "9035_tiling (1).ipynb is newer" in r for r in why.values())

    (tmp_path / "worksheet.csv").write_text(WORKSHEET, encoding="utf-8")
    older, newer = zipfile.ZipInfo("Ada Lovelace_5001_assignsubmission_file_/tiling.ipynb", (2026, 3, 1, 9, 0, 0)), \
        zipfile.ZipInfo("Ada Lovelace_5001_assignsubmission_file_/Tiling (1).ipynb", (2026, 3, 2, 9, 0, 0))
    with zipfile.ZipFile(tmp_path / "moodle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(newer, NOTEBOOK + " ")
        archive.writestr(older, NOTEBOOK)
    result = plan(tmp_path / "moodle.zip", "moodle", worksheet=read_worksheet(tmp_path / "worksheet.csv"))
    (accepted,) = result.accepted
    assert accepted.student == "ada@uni.example" and accepted.entry == newer.filename and accepted.notebook == "tiling.ipynb"
    assert "an older upload of tiling.ipynb" in refused(result)[older.filename]


def test_where_the_newest_upload_is_not_a_notebook_the_one_before_it_is_collected_and_said(tmp_path):
    result = plan(make_zip(tmp_path / "s.zip", {
        "lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "lovelaceada_48213_900002_tiling-1.ipynb": "saved as text by mistake",
    }))
    (accepted,) = result.accepted
    assert accepted.entry == "lovelaceada_48213_900001_tiling.ipynb"
    assert "not JSON" in refused(result)["lovelaceada_48213_900002_tiling-1.ipynb"]
    assert result.notes == ["48213: the newest upload of tiling.ipynb is not a notebook (said above): collected the one "
                            "before it, lovelaceada_48213_900001_tiling.ipynb"]


def test_strangers_and_the_canvas_test_student_are_refused_with_a_list_unless_enrolled(tmp_path):
    archive = make_zip(tmp_path / "s.zip", {
        "lovelaceada_1001_900001_tiling.ipynb": NOTEBOOK,
        "studenttest_1999_900002_tiling.ipynb": NOTEBOOK,  # Canvas's Student View: "Student, Test"
        "strangersam_9999_900003_tiling.ipynb": NOTEBOOK,
    })
    roster = Roster(ids=frozenset({"1001"}))
    result = plan(archive, roster=roster, enrol=False)
    assert [a.student for a in result.accepted] == ["1001"]
    assert result.strangers == ["9999"] and result.test_students == ["1999"]
    why = refused(result)
    assert "9999 is not on the course's roster" in why["strangersam_9999_900003_tiling.ipynb"] and "--enrol" in why["strangersam_9999_900003_tiling.ipynb"]
    assert "Canvas's Test Student" in why["studenttest_1999_900002_tiling.ipynb"]
    enrolled = plan(archive, roster=roster, enrol=True)
    assert [a.student for a in enrolled.accepted] == ["1001", "9999"] and enrolled.test_students == ["1999"]


def _cost_of(result) -> int:
    return sum(len(r.entry) + len(r.reason) for r in result.refused)


def test_no_upload_stops_the_collect_or_costs_anyone_but_its_student(tmp_path):
    """The hostile downloads of issue 23: a notebook nested 5,000 levels deep, thousands of
    re-uploads by one student, a student's duplicates as large as a notebook may be, a name with
    a newline. Each costs its own student only; every report line is one line, of bounded length."""
    deep = '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    entries = {
        "honestada_1001_1_tiling.ipynb": NOTEBOOK,
        "honestben_1002_2_tiling.ipynb": NOTEBOOK,
        "deepdan_1003_3_tiling.ipynb": deep,
        "evil\nhonestada: tiling.ipynb collected_1004_4_tiling.ipynb": NOTEBOOK,
    }
    entries.update({f"manymo_1005_{100 + i}_tiling-{i}.ipynb": NOTEBOOK for i in range(4000)})
    result = plan(make_zip(tmp_path / "hostile.zip", entries))
    assert {a.student: a.entry for a in result.accepted} == {
        "1001": "honestada_1001_1_tiling.ipynb", "1002": "honestben_1002_2_tiling.ipynb", "1005": "manymo_1005_4099_tiling-3999.ipynb"}
    why = refused(result)
    assert "nests deeper than Python reads" in why["deepdan_1003_3_tiling.ipynb"]
    assert all("\n" not in r.entry + r.reason for r in result.refused)  # a name cannot print a line of its own
    assert "a name with control characters" in why["evil\\nhonestada: tiling.ipynb collected_1004_4_tiling.ipynb"]
    assert len(result.refused) == 4000 + 1  # each refusal once: the 3,999 older uploads and the deep one
    assert _cost_of(result) < 400 * len(result.refused)  # linear: no refusal names the student's other entries

    # per student: entries, bytes read; the archive's total goes to the small (honest) notebooks first
    big = NOTEBOOK + " " * 5000
    entries = {"honestada_1001_1_tiling.ipynb": NOTEBOOK, "honestben_1002_2_tiling.ipynb": NOTEBOOK}
    entries.update({f"hogharry_1003_{10 + i}_tiling-{i}.ipynb": "x" + big for i in range(53)})  # none is a notebook
    entries.update({f"bigbella_1004_{100 + i}_tiling-{i}.ipynb": big for i in range(3)})
    limits = Limits(student_entries=20, student_bytes=2 * len(big) + 10, total_bytes=2 * len(NOTEBOOK) + 2 * len(big) + 10,
                    ratio=10_000)
    result = plan(make_zip(tmp_path / "greedy.zip", entries), limits=limits)
    assert sorted(a.student for a in result.accepted) == ["1001", "1002", "1004"]
    why = refused(result)
    assert sum("only the newest 20 are looked at" in r for r in why.values()) == 33
    assert sum("not a notebook" in r for r in why.values()) == 2  # harry's newest and the one before it
    assert sum("all one student may have read" in r for r in why.values()) == 1  # then harry's bytes are spent
    assert sum("an older upload" in r for r in why.values()) == 17 + 2
    # the archive's total: bella's third big notebook would pass it, and only bella's is refused
    result = plan(make_zip(tmp_path / "greedy.zip", entries), limits=Limits(total_bytes=2 * len(NOTEBOOK) + 10, ratio=10_000))
    assert sorted(a.student for a in result.accepted) == ["1001", "1002"]
    assert "collect it in parts" in refused(result)["bigbella_1004_102_tiling-2.ipynb"]


def test_one_students_twenty_thousand_files_refuse_only_theirs(tmp_path):
    entries = {"honestada_1001_1_tiling.ipynb": NOTEBOOK}
    entries.update({f"floodfay_1002_{10 + i}_tiling-{i}.ipynb": "{}" for i in range(20_001)})
    result = plan(make_zip(tmp_path / "flood.zip", entries))
    assert sorted(a.student for a in result.accepted) == ["1001"]
    assert len(result.refused) == 20_001 and _cost_of(result) < 300 * 20_001
    with pytest.raises(DownloadError, match="over the 1000 a download may hold"):
        plan(tmp_path / "flood.zip", limits=Limits(entries=1000))  # the archive's own limit is the archive's


def test_what_is_not_a_zip_is_an_error_that_says_so(tmp_path):
    (tmp_path / "notes.zip").write_text("not a zip")
    with pytest.raises(DownloadError, match="is not a zip archive"):
        plan(tmp_path / "notes.zip")
    with pytest.raises(DownloadError, match="cannot read"):
        plan(tmp_path / "missing.zip")
    with pytest.raises(DownloadError, match="unknown LMS 'blackboard'"):
        plan(tmp_path / "notes.zip", lms="blackboard")


def test_moodle_folders_map_participants_to_students_through_the_worksheet(tmp_path):
    (tmp_path / "worksheet.csv").write_text(WORKSHEET, encoding="utf-8")
    sheet = read_worksheet(tmp_path / "worksheet.csv")
    assert sheet["5002"].identity == "Ben.Babbage@uni.example" and sheet["5001"].full_name == "Ada Lovelace"
    archive = make_zip(tmp_path / "moodle.zip", {
        "Ada Lovelace_5001_assignsubmission_file_/tiling.ipynb": NOTEBOOK,
        "Ben Babbage_5002_assignsubmission_file_tiling.ipynb": NOTEBOOK,  # without folders
        "Ben Babbage_5002_assignsubmission_onlinetext_/onlinetext.html": "<p>see the notebook</p>",
        "Cleo Nobody_5999_assignsubmission_file_/tiling.ipynb": NOTEBOOK,
        "Quote O'Neil_5003_assignsubmission_file_/tiling.ipynb": NOTEBOOK,
        "tiling.ipynb": NOTEBOOK,
    })
    result = plan(archive, "moodle", worksheet=sheet, roster=Roster(by_email={"ada@uni.example": "alovelace"}))
    assert {(a.student, a.lms_id) for a in result.accepted} == {("alovelace", "5001"), ("ben.babbage@uni.example", "5002")}
    why = refused(result)
    assert why["Ben Babbage_5002_assignsubmission_onlinetext_/onlinetext.html"] == "not a notebook (.ipynb)"
    assert "participant 5999 is not in the grading worksheet" in why["Cleo Nobody_5999_assignsubmission_file_/tiling.ipynb"]
    assert "is not a student id" in why["Quote O'Neil_5003_assignsubmission_file_/tiling.ipynb"]
    assert "not in a folder named as Moodle names submissions" in why["tiling.ipynb"]
    with pytest.raises(DownloadError, match="pass the assignment's grading worksheet"):
        plan(archive, "moodle")


def test_a_worksheet_must_be_one(tmp_path):
    (tmp_path / "grades.csv").write_text("First name,Surname,Email address\nAda,Lovelace,ada@uni.example\n")
    with pytest.raises(DownloadError, match="not a Moodle grading worksheet"):
        read_worksheet(tmp_path / "grades.csv")
    (tmp_path / "latin1.csv").write_bytes("Identifier,Email address\nParticipant 1,zoë@x\n".encode("latin-1"))
    with pytest.raises(DownloadError, match="not UTF-8"):
        read_worksheet(tmp_path / "latin1.csv")
    with pytest.raises(DownloadError, match="larger than"):
        read_worksheet(tmp_path / "grades.csv", Limits(worksheet_bytes=10))


def test_nbgraders_collector_sees_the_same_canvas_names():
    import re

    found = re.match(CANVAS_NAMED_REGEXP, "/course/downloaded/tiling/extracted/s/babbageben_LATE_48214_900002_tiling-1.ipynb")
    assert found.group("student_id") == "48214" and found.group("file_id") == "tiling" and found.group("late")
    assert match_entry("folder/lovelaceada_48213_900001_tiling.ipynb", "canvas", CANVAS_NAMED_REGEXP) == ("48213", "tiling.ipynb", False)


def test_an_entry_or_an_lms_id_that_names_no_submission_raises_saying_why():
    """One return type each: what the name says, or an error whose message the refusal quotes."""
    from autograder.lms.download import NoStudent, NotASubmission, student_for

    assert match_entry("Ada Lovelace_7_assignsubmission_file_/tiling.ipynb", "moodle", CANVAS_NAMED_REGEXP).lms_id == "7"
    with pytest.raises(NotASubmission, match="not named as Canvas names submissions"):
        match_entry("Tiling Final.ipynb", "canvas", CANVAS_NAMED_REGEXP)
    with pytest.raises(NotASubmission, match="not in a folder named as Moodle names submissions"):
        match_entry("tiling.ipynb", "moodle", CANVAS_NAMED_REGEXP)
    assert student_for("canvas", "48213", None, Roster(by_lms_id={"48213": "alovelace"})) == "alovelace"
    with pytest.raises(NoStudent, match="no usable student id for canvas id 48213"):
        student_for("canvas", "48213", None, Roster(by_lms_id={"48213": "bad id!"}))
    with pytest.raises(NoStudent, match="participant 7 is not in the grading worksheet"):
        student_for("moodle", "7", {}, Roster())


def test_an_entry_is_never_written_outside_where_it_is_extracted(tmp_path):
    assert safe_destination(tmp_path, "a/b.ipynb") == (tmp_path / "a" / "b.ipynb").resolve()
    with pytest.raises(DownloadError, match="outside"):
        safe_destination(tmp_path, "../x.ipynb")


def test_an_upload_numbered_past_9999_is_still_the_notebook_and_the_newest_is_taken(tmp_path):
    """A student who uploads very often gets Canvas's tiling-10000: still the tiling notebook,
    and the newest upload (the largest attachment id) is the one collected."""
    result = plan(make_zip(tmp_path / "canvas.zip", {
        "babbagecharles_1002_9998_tiling-9999.ipynb": NOTEBOOK,
        "babbagecharles_1002_9999_tiling-10000.ipynb": NOTEBOOK + " ",
    }))
    (accepted,) = result.accepted
    assert accepted.entry == "babbagecharles_1002_9999_tiling-10000.ipynb" and accepted.notebook == "tiling.ipynb"
    assert "an older upload of tiling.ipynb" in refused(result)["babbagecharles_1002_9998_tiling-9999.ipynb"]
