"""The candidate table: measured in a child with the engine's timer, kept private, audited."""
from __future__ import annotations

import json
import stat

import numpy as np
import pytest

from autograder.costmodel import space, table
from autograder.edition.build import find_leaks

pytestmark = pytest.mark.slow


def test_the_tiny_table_times_every_candidate_and_is_kept_owner_only(tiny_table, tables_folder):
    rows = space.candidates(space.TINY_SHAPE, space.TINY)
    assert len(rows) == 24 and np.array_equal(tiny_table.rows, rows)
    assert np.all(tiny_table.seconds > 0) and np.all(np.isfinite(tiny_table.seconds))
    assert tiny_table.seconds.max() > tiny_table.seconds.min()  # the decisions matter
    assert tiny_table.key["shape"] == space.TINY_SHAPE.to_dict() and tiny_table.key["grid"] == "tiny"
    assert tiny_table.key["host_cpu"] and tiny_table.key["target_cpu"] and tiny_table.key["tvm"]
    assert stat.S_IMODE(tables_folder.stat().st_mode) == 0o700
    cached = tables_folder / table.cache_name(tiny_table.key)
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert json.loads(cached.read_text())["format"] == table.TABLE_FORMAT


def test_a_cached_table_is_read_back_and_audited(tiny_table, tables_folder):
    again = table.measure(space.TINY_SHAPE, "tiny", folder=tables_folder)
    assert np.array_equal(again.rows, tiny_table.rows)
    if not again.notes:  # read from the cache: the same times (a loaded machine may have re-measured)
        assert np.array_equal(again.seconds, tiny_table.seconds)


def test_a_table_whose_order_moved_is_measured_again_and_said(tiny_table, tmp_path):
    forged = table.Table(dict(tiny_table.key), tiny_table.rows.copy(), tiny_table.seconds[::-1].copy())
    table.write_cached(table.private_folder(tmp_path / "tables"), forged)  # fastest and slowest swapped
    measured = table.measure(space.TINY_SHAPE, "tiny", folder=tmp_path / "tables")
    assert measured.notes and "drifted" in measured.notes[0] and "measured again" in measured.notes[0]
    assert not np.array_equal(measured.seconds, forged.seconds)


def test_a_damaged_cache_file_is_measured_again(tiny_table, tmp_path):
    folder = table.private_folder(tmp_path / "tables")
    (folder / table.cache_name(tiny_table.key)).write_text('{"format": "tvm-course-cost-table/1", "rows": [')
    assert table.read_cached(folder, tiny_table.key) is None
    measured = table.measure(space.TINY_SHAPE, "tiny", folder=folder)
    assert len(measured.seconds) == 24 and table.read_cached(folder, tiny_table.key) is not None


def test_drift_is_a_change_of_the_times_against_each_other_not_of_the_machines_speed():
    cached = np.array([1.0, 2.0, 4.0, 8.0])
    assert table.drifted(cached, cached * 1.7) == []  # uniformly slower today: no ranking moved
    assert table.drifted(cached, np.array([1.0, 2.0, 4.0, 16.0])) == [3]
    assert table.audit_rows(np.array([5.0, 1.0, 3.0, 2.0, 4.0]), count=3) == [0, 1, 2]  # fastest, middle, slowest


def test_the_student_edition_refuses_a_table(tiny_table, tmp_path):
    edition = tmp_path / "edition"
    edition.mkdir()
    (edition / "stray.json").write_text(json.dumps(tiny_table.to_json()))
    assert any("cost-model table" in leak for leak in find_leaks(edition))
