"""autograder/problems/variants.py: a workload per student, derived from their id and the course secret."""
from __future__ import annotations

import json
import stat

import pytest

from autograder import examples
from autograder.cli import main
from autograder.nbgrader_ext.kernel_side import my_variant
from autograder.problems.variants import (
    JOURNAL,
    SECRET_ENV,
    STUDENT_ENV,
    TABLE_FILE,
    VARIANTS,
    VariantError,
    check_student_id,
    course_secret,
    create_secret,
    current_student,
    student_variant,
    table_key,
    variant_for,
    variant_table,
    write_table,
)

SECRET = b"a course secret for the tests, long enough"


def test_every_variant_keeps_the_lessons_story_true():
    assert len(VARIANTS) == len(set(VARIANTS)) >= 100 and JOURNAL not in VARIANTS
    journal_work = JOURNAL.shape.flops
    for variant in VARIANTS:
        shape = variant.shape
        assert shape.output_shape == (1, variant.out_channels, variant.height, variant.width)  # padding keeps the size
        assert variant.height % 32 == 0 and variant.width % 32 == 0  # 16x16 tiles, 1x16 vectors, every asked tile
        assert variant.height % variant.tile_rows == 0 and variant.width % variant.tile_cols == 0
        assert variant.out_channels % 4 == 0  # 4-channel register blocking divides
        assert (variant.in_channels, variant.kernel, shape.padding) == (3, 3, 1)
        assert variant.height % 7 and variant.width % 7 and variant.tile_rows * variant.tile_cols != 256
        assert 0.25 <= shape.flops / journal_work <= 2.0


def test_a_variant_is_fixed_by_the_id_and_the_secret_and_spread_over_all():
    assert variant_for("ada", SECRET) == variant_for("ada", SECRET)
    ids = [f"student{i}" for i in range(1500)]
    drawn = [variant_for(s, SECRET) for s in ids]
    assert len(set(drawn)) == len(VARIANTS)  # every variant is used
    other = [variant_for(s, SECRET + b"!") for s in ids]
    assert sum(a != b for a, b in zip(drawn, other)) > 0.9 * len(ids)  # another secret: other variants
    assert sum(a == b for a, b in zip(drawn, drawn[1:])) < 0.05 * len(ids)  # neighbours' ids: unrelated


@pytest.mark.parametrize("bad", ["", " ", None, 7, "a/b", "../ada", " ada", "ada\n", "-rf", "x" * 101, "ådå"])
def test_a_malformed_student_id_is_refused_not_given_a_default(bad):
    with pytest.raises(VariantError):
        check_student_id(bad)
    with pytest.raises(VariantError):
        variant_for(bad, SECRET)


def test_good_ids_pass():
    for good in ("ada", "s1234567", "ada.lovelace@uni.edu", "ben_2", "x" * 100):
        assert check_student_id(good) == good


def test_the_secret_comes_from_the_environment_or_the_course_root(tmp_path):
    with pytest.raises(VariantError, match=f"tvm-course variants init.*{SECRET_ENV}"):
        course_secret(tmp_path, environ={})
    path = create_secret(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(course_secret(tmp_path, environ={})) == 64
    assert course_secret(tmp_path, environ={SECRET_ENV: "x" * 20}) == b"x" * 20  # the environment wins
    with pytest.raises(VariantError, match="too short"):
        course_secret(None, environ={SECRET_ENV: "short"})
    with pytest.raises(VariantError, match="exists"):
        create_secret(tmp_path)  # a new secret would give every student a new variant


def test_a_student_finds_their_variant_in_the_released_table(tmp_path):
    table = write_table(tmp_path / TABLE_FILE, ["ada", "ben"], SECRET)
    assert "ada" not in json.loads(table.read_text())["variants"]  # digests, not names
    assert student_variant("ada", table, environ={}) == ("ada", variant_for("ada", SECRET))
    assert student_variant(None, table, environ={STUDENT_ENV: "ben"})[1] == variant_for("ben", SECRET)
    assert student_variant(None, table, environ={"JUPYTERHUB_USER": "ben"})[0] == "ben"
    with pytest.raises(VariantError, match=f"%env {STUDENT_ENV}=your-id"):
        student_variant(None, table, environ={})
    with pytest.raises(VariantError, match="no variant for student 'cleo'"):
        student_variant("cleo", table, environ={})
    with pytest.raises(VariantError, match="is missing"):
        student_variant("ada", tmp_path / "nowhere.json", environ={})


@pytest.mark.parametrize(
    "entry",
    [
        {"height": 7, "width": 7, "out_channels": 1, "tile_rows": 1, "tile_cols": 1, "in_channels": 3, "kernel": 3},
        {**JOURNAL.to_dict(), "height": True},
        {**JOURNAL.to_dict(), "extra": 1},
        "224x224",
    ],
)
def test_an_edited_table_gives_a_clear_error_never_an_odd_workload(tmp_path, entry):
    path = tmp_path / TABLE_FILE
    path.write_text(json.dumps({"format": "tvm-course-variants/1", "variants": {table_key("ada"): entry}}))
    with pytest.raises(VariantError, match="not"):
        student_variant("ada", path, environ={})


def test_a_table_in_another_format_is_refused(tmp_path):
    path = tmp_path / TABLE_FILE
    path.write_text(json.dumps(variant_table(["ada"], SECRET)["variants"]))
    with pytest.raises(VariantError, match="not a variants table"):
        student_variant("ada", path, environ={})


def test_the_notebook_cell_prints_the_students_own_shapes(tmp_path, monkeypatch, capsys):
    write_table(tmp_path / TABLE_FILE, ["ada"], SECRET)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(STUDENT_ENV, "ada")
    assert my_variant() == variant_for("ada", SECRET)
    assert capsys.readouterr().out.startswith("Student ada: input 1x3x")
    monkeypatch.delenv(STUDENT_ENV)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    with pytest.raises(VariantError, match="needs your student id"):
        my_variant()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # the grader derives it itself
    assert my_variant() == JOURNAL


def test_current_student_prefers_the_explicit_id():
    assert current_student({STUDENT_ENV: "ada", "JUPYTERHUB_USER": "jh-ada"}) == "ada"
    assert current_student({}) is None


def test_variants_show_needs_the_secret_and_prints_the_variant(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    (tmp_path / "nbgrader_config.py").write_text("")
    assert main(["variants", "show", "ada", "--course", str(tmp_path)]) == 2
    assert "tvm-course variants init" in capsys.readouterr().err
    assert main(["variants", "init", "--course", str(tmp_path)]) == 0
    assert main(["variants", "show", "ada", "--course", str(tmp_path)]) == 0
    secret = (tmp_path / "variant-secret").read_text().strip().encode()
    assert capsys.readouterr().out.splitlines()[-1] == f"ada: {variant_for('ada', secret).describe()}"


def test_grade_schedule_for_a_student_grades_their_variant(tmp_path, capsys, monkeypatch):
    source = tmp_path / "journal.py"
    source.write_text(examples.source("journal"))
    monkeypatch.setenv(SECRET_ENV, SECRET.decode())
    monkeypatch.chdir(tmp_path)  # no course root here: the secret comes from the environment
    assert main(["grade-schedule", "tile-fused-conv", str(source), "--student", "ada", "--json", "--no-measure-speed"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["variant"] == {"student": "ada", **variant_for("ada", SECRET).to_dict()}
    assert main(["grade-schedule", "tile-fused-conv", str(source), "--json", "--no-measure-speed"]) == 0
    assert json.loads(capsys.readouterr().out)["variant"] == {"student": None, **JOURNAL.to_dict()}
    assert main(["grade-schedule", "tile-fused-conv", str(source), "--student", "../ada"]) == 2
    assert "not a student id" in capsys.readouterr().err
    monkeypatch.delenv(SECRET_ENV)
    assert main(["grade-schedule", "tile-fused-conv", str(source), "--student", "ada"]) == 2
    assert "no course secret" in capsys.readouterr().err


def test_a_moodle_student_finds_their_variant_by_their_email_in_any_case(tmp_path):
    table = write_table(tmp_path / TABLE_FILE, ["grace.hopper@uni.example"], SECRET)  # roster --from moodle lower-cases it
    found, variant = student_variant("Grace.Hopper@Uni.example", table, environ={})
    assert found == "grace.hopper@uni.example" and variant == variant_for("grace.hopper@uni.example", SECRET)
    with pytest.raises(VariantError, match=r"no variant for student 'ada'.*Canvas user id.*api/v1/users/self.*email address"):
        student_variant("ada", table, environ={})
    with pytest.raises(VariantError, match="needs your student id.*Canvas user id"):
        student_variant(None, table, environ={})
