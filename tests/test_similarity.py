"""similarity.py and `tvm-course similar`: identical and near schedules, shared material apart.

The pairing is tested on synthetic outlines; the command end to end on a scratch course graded
with a few bundled samples and two of ada's schedule disguised (one copy, one near copy).
"""
from __future__ import annotations

import contextlib
import io
import random

import pytest

from autograder.similarity import (
    NEAR,
    Outlined,
    _outline_of,
    edit_distance,
    find_hints,
    format_hints,
)


def lines(tag: str, n: int) -> tuple[str, ...]:
    return tuple(f"{tag}{i}(x)" for i in range(n))


def changed(outline: tuple[str, ...], *positions: int) -> tuple[str, ...]:
    return tuple(f"other{i}" if i in positions else line for i, line in enumerate(outline))


def entries(*pairs, cell: str = "tiling/schedule", problem: str = "tile-fused-conv") -> list[Outlined]:
    return [Outlined(student, cell, problem, outline) for student, outline in pairs]


A, B, C = lines("a", 10), lines("b", 10), lines("c", 10)


def test_identical_outlines_form_groups_largest_first():
    [cell] = find_hints(entries(("s3", A), ("s1", A), ("s2", A), ("t2", B), ("t1", B), ("u", C)))
    assert [g.students for g in cell.groups] == [["s1", "s2", "s3"], ["t1", "t2"]]
    assert cell.compared == 6 and cell.near == []


def test_near_means_at_most_one_instruction_in_five_differs():
    two, three = changed(A, 1, 7), changed(A, 1, 4, 7)
    [cell] = find_hints(entries(("a", A), ("b", two), ("c", three)))
    # a~c differ in 3 of 10: not near; the nearest pair first
    assert [(p.first.students, p.second.students, p.distance, p.length) for p in cell.near] == [
        (["b"], ["c"], 1, 10), (["a"], ["b"], 2, 10),
    ]
    # an inserted or deleted instruction counts one
    [cell] = find_hints(entries(("a", A), ("b", A[:4] + ("extra",) + A[4:])))
    assert [(p.distance, p.length) for p in cell.near] == [(1, 11)]
    # below five instructions one difference is already more than a fifth: never near
    [cell] = find_hints(entries(("a", A[:4]), ("b", changed(A[:4], 0))))
    assert cell.near == []
    assert NEAR == 0.2


def test_shared_material_is_listed_apart():
    journal, lesson = lines("journal", 6), lines("lesson", 8)
    shared = {journal: "the journal's tiling, shown in the lessons", lesson: "a lesson's schedule"}
    [cell] = find_hints(
        entries(("j1", journal), ("j2", journal), ("k", journal + ("vectorize(T_add)",)), ("x", A), ("y", A), ("z", changed(A, 3))),
        shared,
    )
    groups, pairs = cell.suspicious
    assert [g.students for g in groups] == [["x", "y"]]
    assert [(p.first.students, p.second.students) for p in pairs] == [(["x", "y"], ["z"])]
    assert [(g.students, g.shared) for g in cell.groups if g.shared] == [(["j1", "j2"], "the journal's tiling, shown in the lessons")]
    [near_journal] = [p for p in cell.near if p.shared]
    assert (near_journal.first.students, near_journal.second.students) == (["j1", "j2"], ["k"])
    text = format_hints("tiling", [cell])
    assert "never a verdict" in text
    assert text.index("x, y: 10 loop-nest lines") < text.index("x, y ~ z: 1 of 10 loop-nest lines differ") < text.index("shared material")
    assert "j1, j2: identical; matches the journal's tiling, shown in the lessons" in text
    assert "j1, j2 ~ k: 1 of 7 loop-nest lines differ; both at or near the journal's tiling" in text
    assert "shared material" not in format_hints("tiling", [cell], shared_too=False)


def test_cells_and_problems_are_compared_apart():
    hints = find_hints(entries(("a", A), ("b", A)) + entries(("c", A), cell="tiling/other") + entries(("d", A), problem="gpu-fused-conv"))
    assert [(h.cell, h.problem, len(h.groups)) for h in hints] == [
        ("tiling/other", "tile-fused-conv", 0), ("tiling/schedule", "gpu-fused-conv", 0), ("tiling/schedule", "tile-fused-conv", 1),
    ]


def test_the_text_is_bounded_and_sorted():
    pairs = [(f"s{i:02}{twin}", lines(f"g{i}", 10)) for i in range(30) for twin in "ab"]
    crowd = [(f"c{i:02}", B) for i in range(40)]
    [cell] = find_hints(entries(*pairs, *crowd))
    text = format_hints("tiling", [cell], limit=20)
    listed = [line for line in text.splitlines() if line.startswith("    ")]
    assert len(listed) == 21 and listed[-1] == "    ... and 11 more (--limit N lists more)"
    assert listed[0].startswith("    c00, c01,") and "and 28 more: 10 loop-nest lines" in listed[0]  # the cluster of 40 first


def test_edit_distance_is_levenshtein_within_its_limit():
    rng = random.Random(7)

    def levenshtein(a, b):
        row = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            row, previous = [i], row
            for j, y in enumerate(b, 1):
                row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y)))
        return row[-1]

    for _ in range(300):
        a = tuple(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        b = tuple(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        limit = rng.randint(0, 5)
        true = levenshtein(a, b)
        assert edit_distance(a, b, limit) == (true if true <= limit else None), (a, b, limit)


def test_a_record_that_is_not_an_outline_is_ignored():
    assert _outline_of({"trace_outline": ["split(x)"]}) == ("split(x)",)
    for bad in (None, "x", {"trace_outline": None}, {"trace_outline": "split"}, {"trace_outline": [1]},
                {"trace_outline": ["x" * 10_000]}, {"trace_outline": ["x"] * 1000}):
        assert _outline_of(bad) is None


# ---- what a schedule does, not how many instructions say it -------------------------------

# Instructions that change nothing, of every kind a padding could use: after each, the loop nest
# is what it was. Applied to ada's schedule (the reference solution) once it is done.
NO_OPS = """\
    c = sch.get_sblock("conv2d_nchw_update")
    sch.fuse(sch.get_loops(c)[3])                                  # a fuse of one loop
    sch.reorder(sch.get_loops(c)[2])                               # a reorder of one loop
    sch.split(sch.get_loops(c)[4], factors=[None, 1])              # a split by 1
    sch.split(sch.get_loops(c)[1], factors=[1, None])              # ... and the other way round
    sch.add_unit_loop(sch.get_sblock("T_add"))                     # a unit loop over a block
    sch.add_unit_loop(sch.get_loops(c)[5])                         # ... and over a loop
    sch.parallel(sch.add_unit_loop(sch.get_sblock("compute")))     # a mark on a loop of one iteration
    loop = sch.get_loops(c)[3]
    sch.annotate(loop, "pragma_auto_unroll_max_step", 16)          # annotate, then unannotate
    sch.unannotate(loop, "pragma_auto_unroll_max_step")
    sch.annotate(c, "meta_schedule.random_compute_producer", 1)    # a hint only MetaSchedule reads
    sch.set_scope(sch.get_sblock("T_add"), 0, "global")            # the scope it already has
    sch.reorder_block_iter_var(sch.get_sblock("compute"), [3, 2, 1, 0])
    sch.storage_align(sch.get_sblock("T_add"), 0, 2, 1, 0)         # an alignment to 1
    sch.sample_perfect_tile(sch.get_loops(c)[2], n=2)              # a sampled tiling nothing uses
"""


def _with(schedule_source: str, extra: str = ""):
    namespace: dict = {}
    exec(schedule_source + extra, namespace)
    return namespace["schedule"]


def test_instructions_that_change_nothing_leave_the_outline_as_it_was():
    from autograder.similarity import outlines_of_schedule

    import solutions

    ada = solutions.source("blocked_vectorized")
    (nest, trace), (padded_nest, padded_trace) = (outlines_of_schedule(_with(ada, extra)) for extra in ("", NO_OPS))
    assert padded_nest == nest and len(padded_trace) > len(trace) + 10  # the instructions differ; what they do does not
    [cell] = find_hints(entries(("ada", nest), ("copy", padded_nest)))
    assert [g.students for g in cell.groups] == [["ada", "copy"]]
    # A real change still shows: one unroll fewer is two lines (the loop of the update and of the init)
    less = outlines_of_schedule(_with(ada.replace("    sch.unroll(ff_inner)\n", "")))[0]
    [cell] = find_hints(entries(("ada", nest), ("other", less)))
    assert cell.groups == [] and [(p.distance, p.length) for p in cell.near] == [(2, len(nest))]


def test_grades_kept_before_loop_nests_are_compared_among_themselves():
    mixed = [Outlined("old1", "tiling/schedule", "tile-fused-conv", A, "instructions"),
             Outlined("old2", "tiling/schedule", "tile-fused-conv", A, "instructions"),
             Outlined("new", "tiling/schedule", "tile-fused-conv", A)]
    older, newer = find_hints(mixed)
    assert [g.students for g in older.groups] == [["old1", "old2"]] and newer.groups == [] and newer.near == []
    text = format_hints("tiling", [older, newer])
    assert "old1, old2: 10 instructions" in text and "compared by their instructions" in text


# ---- end to end ----------------------------------------------------------------------------

ADA_DISGUISED = """\
def schedule(sch):
    add, relu = sch.get_sblock("T_add"), sch.get_sblock("compute")
    c = sch.get_sblock("conv2d_nchw")
    b, k, h, w, ci, kh, kw = sch.get_loops(c)
    k0, k1 = sch.split(k, factors=[int(sch.get(k).extent) // 4, 4])  # adapted to the variant
    w0, w1 = sch.split(w, factors=[None, 16])
    sch.reorder(b, k0, h, w0, ci, kh, kw, k1, w1)
    sch.reverse_compute_at(add, w0)
    sch.reverse_compute_at(relu, w0)
    sch.unroll(kh)
    sch.unroll(kw)
    sch.unroll(k1)
    sch.vectorize(w1)
    sch.decompose_reduction(c, ci)
    for block in (add, relu):
        sch.vectorize(sch.get_loops(block)[-1])
"""
ADA_NEAR = ADA_DISGUISED.replace("    sch.unroll(k1)\n", "")
ADA_PADDED = ADA_DISGUISED + NO_OPS  # a copy padded with instructions that change nothing
RIGHT = "TILES_PER_CHANNEL = 196\nTILE_BYTES = 1024\nWHOLE_BYTES = 3211264\nHALO_PIXELS = 324"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder.cli import main
    from autograder.course.course_dir import course_directory, load_course_config
    from autograder.rehearsal.samples import Sample, submit
    from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

    from bundled_course import COURSE

    root = copy_course(COURSE, tmp_path_factory.mktemp("similar") / "course")
    release_assignment(root, "tiling")
    submit_samples(root, "tiling", only=["ada", "ben", "mallory"])
    coursedir = course_directory(load_course_config(root))
    for student, source in (("ada-copy", ADA_DISGUISED), ("ada-near", ADA_NEAR), ("ada-padded", ADA_PADDED)):
        submit(coursedir, Sample(student, "tiling", "ada's schedule, disguised", {"schedule": source, "tile-arithmetic": RIGHT}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["grade", "tiling", "--course", str(root), "--workers", "2", "--no-feedback", "--cell-timeout", "8",
                     "--timing-rounds", "5", "--min-repeat-ms", "5", "--student-timeout-s", "3"])
    assert code == 0, out.getvalue()
    return root, out.getvalue()



@pytest.mark.slow
def test_similar_lists_copies_near_copies_and_shared_material(graded):
    from autograder.cli import main

    root, _ = graded
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["similar", "tiling", "--course", str(root)]) == 0
    text = out.getvalue()
    assert "never a verdict" in text and "tiling/schedule (tile-fused-conv): 6 submission(s) with a trace" in text
    same = text.index("the same schedule")
    assert text.index("ada, ada-copy, ada-padded: 25 loop-nest lines; this is the course's reference solution "
                      "(solutions/blocked_vectorized.py)") > same
    assert "ada, ada-copy, ada-padded ~ ada-near: 2 of 25 loop-nest lines differ" in text
    shared = text.index("shared material")
    assert text.index("ben, mallory: identical; matches the journal's tiling, shown in the lessons") > shared
    assert "ben, mallory" not in text[:shared]


@pytest.mark.slow
def test_the_grading_run_ends_with_the_pairs_worth_a_look(graded):
    _, printed = graded
    hints = printed[printed.index("Similar schedules in tiling"):]
    assert "ada, ada-copy, ada-padded: 25 loop-nest lines" in hints and "ada, ada-copy, ada-padded ~ ada-near" in hints
    assert "ben" not in hints and "tvm-course similar tiling" in hints


@pytest.mark.slow
def test_the_outline_is_stored_with_the_grade(graded):
    import json

    root, _ = graded
    notebook = json.loads((root / "autograded" / "ada-copy" / "tiling" / "tiling.ipynb").read_text())
    [result] = notebook["metadata"]["tvm_course"]["results"].values()
    assert result["status"] == "passed"
    assert result["trace_outline"][0] == "split(conv2d_nchw[1], *, 4; 1, 0)" and len(result["trace_outline"]) == 12
    # what the hints compare: the loop nest, made on the default workload whatever ada-copy's variant
    assert len(result["schedule_outline"]) == 25 and "block conv2d_nchw_update" in "\n".join(result["schedule_outline"])


def test_similar_without_a_course_is_a_usage_error_and_without_grades_says_so(tmp_path, capsys):
    from autograder.cli import main
    from autograder.rehearsal.scratch_course import copy_course

    from bundled_course import COURSE

    assert main(["similar", "tiling", "--course", str(tmp_path)]) == 2
    assert "no nbgrader course root" in capsys.readouterr().err
    assert main(["similar", "tiling", "--course", str(copy_course(COURSE, tmp_path / "course")), "--near", "1.5"]) == 2
    assert main(["similar", "tiling", "--course", str(tmp_path / "course")]) == 0
    assert "no graded submission has a schedule trace to compare" in capsys.readouterr().out
