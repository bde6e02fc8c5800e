"""autograder/course/lms_download.py: Canvas and Moodle downloads, read as untrusted input.

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

from autograder.course.lms_download import (
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
    make_zip(tmp_path / "many.zip", {f"s_{i}_{i}_tiling.ipynb": NOTEBOOK for i in range(4)})
    with pytest.raises(DownloadError, match="holds 4 entries, over the 3"):
        plan(tmp_path / "many.zip", limits=small)
    with pytest.raises(DownloadError, match="over the 10 bytes a download may be"):
        plan(archive, limits=Limits(archive_bytes=10))


def test_two_files_for_one_students_notebook_are_both_refused(tmp_path):
    result = plan(make_zip(tmp_path / "dup.zip", {
        "lovelaceada_48213_900001_tiling.ipynb": NOTEBOOK,
        "lovelaceada_48213_900002_tiling-1.ipynb": NOTEBOOK,
        "babbageben_48214_900003_tiling.ipynb": NOTEBOOK,
    }))
    assert [a.student for a in result.accepted] == ["48214"]
    assert all("2 files for 48213's tiling.ipynb" in r and "keep one" in r for r in refused(result).values())


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


def test_an_entry_is_never_written_outside_where_it_is_extracted(tmp_path):
    assert safe_destination(tmp_path, "a/b.ipynb") == (tmp_path / "a" / "b.ipynb").resolve()
    with pytest.raises(DownloadError, match="outside"):
        safe_destination(tmp_path, "../x.ipynb")
