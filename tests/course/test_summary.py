"""autograder/course/summary.py: the table and the CSV of a grading run."""
from __future__ import annotations

import csv

from autograder.course.summary import Row, format_table, write_csv


def rows():
    return [
        Row("ada", 14.0, 14.0, "passed", 2.71, {"correctness": 4.0, "speed": 3.0}),
        Row("eli", 4.0, 14.0, "crashed", None, {"correctness": 0.0, "speed": 0.0}, note="killed by SIGSEGV"),
        Row("gus", 3.0, 13.0, "needs-gpu", None, {"correctness": None, "speed": None}, needs_manual_grade=True),
        Row("hal", status="grading-failed", note="nbgrader autograde failed"),
    ]


def test_table_has_a_line_per_student_with_score_status_and_speedup():
    table = format_table(rows()).splitlines()
    assert table[0].split() == ["student", "score", "status", "speedup", "notes"]
    ada, eli, gus, hal = table[2:]
    assert ada.split()[:6] == ["ada", "14", "/", "14", "passed", "2.71x"]
    assert "crashed" in eli and "SIGSEGV" in eli
    assert "+ pending" in gus and "needs manual grading" in gus
    assert hal.split()[:3] == ["hal", "-", "grading-failed"]


def test_csv_has_every_part_and_leaves_pending_blank(tmp_path):
    write_csv(rows(), tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert [line["student"] for line in lines] == ["ada", "eli", "gus", "hal"]
    assert lines[0]["speedup"] == "2.71" and lines[0]["speed"] == "3"
    assert lines[2]["correctness"] == "" and lines[2]["needs_manual_grade"] == "1"
    assert lines[3]["score"] == "" and lines[3]["status"] == "grading-failed"
