"""autograder/lessons/cost_model.py, on the classifier head lesson 1 searches (its cells build it
and write the design space; these tests build the same)."""
import numpy as np
import pytest

from autograder.lessons import cost_model

from .conftest import classifier_head

LABELS = ("rows", "columns", "sum", "sum outside")


def head_space(sch):
    """Lesson 1's design space for the head (the cell's code)."""
    matmul = sch.get_sblock("matmul")
    sch.compute_inline(sch.get_sblock("T_add"))
    i, j, k = sch.get_loops(matmul)
    i_outer, i_inner = sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=8))
    j_outer, j_inner = sch.split(j, sch.sample_perfect_tile(j, n=2, max_innermost_factor=64))
    k_outer, k_inner = sch.split(k, sch.sample_perfect_tile(k, n=2, max_innermost_factor=16))
    if int(sch.get(sch.sample_categorical([0, 1], probs=[0.25, 0.75]))):
        sch.reorder(i_outer, j_outer, k_outer, k_inner, i_inner, j_inner)
        sch.vectorize(j_inner)
    else:
        sch.reorder(i_outer, j_outer, k_outer, i_inner, j_inner, k_inner)
    sch.reverse_compute_at(sch.get_sblock("compute"), j_outer)
    sch.decompose_reduction(matmul, k_outer)


@pytest.fixture(scope="module")
def head(lab):
    return classifier_head()


def test_candidates_are_distinct_samples_of_the_design_space(head):
    candidates = cost_model.sample_candidates(head, 8, head_space, LABELS)
    decisions = [c.decisions for c in candidates]
    assert len(set(decisions)) == 8
    for candidate in candidates:
        rows, columns, total, sum_outside = candidate.decisions
        assert rows[0] * rows[1] == 64 and columns[0] * columns[1] == 256 and total[0] * total[1] == 512
        assert rows[1] <= 8 and columns[1] <= 64 and total[1] <= 16 and sum_outside in (0, 1)
        kinds = [inst.kind.name for inst in candidate.schedule.trace.insts]
        assert kinds.count("SamplePerfectTile") == 3 and kinds.count("SampleCategorical") == 1
        assert candidate.describe().startswith(f"rows {rows[0]}x{rows[1]}, columns {columns[0]}x{columns[1]}")


def test_a_design_space_that_yields_too_few_candidates_says_so(head):
    with pytest.raises(RuntimeError, match="only 1 distinct"):
        cost_model.sample_candidates(head, 2, lambda sch: None)


def test_ranking_quality_counts_measurements_until_the_fastest():
    seconds = np.array([4.0, 1.0, 3.0, 2.0])
    perfect = cost_model.ranking_quality(1 / seconds, seconds)
    assert perfect.spearman == pytest.approx(1.0) and perfect.kendall == pytest.approx(1.0)
    assert perfect.measurements_to_best == 1 and perfect.expected_random == 2.5
    backwards = cost_model.ranking_quality(seconds, seconds)
    assert backwards.spearman == pytest.approx(-1.0)
    assert backwards.measurements_to_best == 4
    assert backwards.table().column("value")[-1] == "0"


def test_best_so_far_curves():
    np.testing.assert_array_equal(cost_model.best_so_far([3.0, 4.0, 1.0, 2.0]), [3.0, 3.0, 1.0, 1.0])
    curve = cost_model.random_order_best_so_far(np.array([3.0, 4.0, 1.0, 2.0]), trials=500)
    assert curve[-1] == 1.0
    assert curve[0] == pytest.approx(2.5, abs=0.3)  # the mean of the four times
    assert np.all(np.diff(curve) <= 0)


@pytest.mark.slow
def test_features_count_the_padding_tests_the_fusion_moves_into_the_conv(lab, fused_func):
    from autograder.lessons import schedules

    context = cost_model.tune_context(fused_func, lab.target)
    kept = cost_model.arithmetic_counts(context, schedules.apply(fused_func))
    inlined = cost_model.arithmetic_counts(context, schedules.apply(fused_func, schedules.pad_inlined))
    pad_elements = 3 * 226 * 226
    conv_terms = 16 * 224 * 224 * 27
    # if_then_else is a pure float call: one per padded element, or one per multiply-add once inlined
    assert kept["float_math_func"] == pytest.approx(pad_elements, rel=1e-4)
    assert inlined["float_math_func"] == pytest.approx(conv_terms, rel=1e-4)
    assert kept["float_mul"] == pytest.approx(conv_terms, rel=1e-4)
    table = cost_model.arithmetic_table(context, {"kept": schedules.apply(fused_func)})
    assert "float_math_func" in table.column("feature (operations executed)")


@pytest.mark.slow
def test_xgboost_model_fits_and_ranks_measured_candidates(lab, head):
    import tvm

    candidates = cost_model.sample_candidates(head, 12, head_space, LABELS)
    data = cost_model.HeadData.make(head, lab.device)
    seconds = cost_model.measure(candidates, lab.target, lab.device, data.arguments, repeats=1)
    assert seconds.shape == (12,) and np.all(seconds > 0)
    tvm.compile(candidates[int(np.argmin(seconds))].schedule.mod, lab.target)["main"](*data.arguments)
    assert data.max_error() < 1e-3  # the fastest computes relu(x @ w + b)
    context = cost_model.tune_context(head, lab.target)
    model = cost_model.fit(context, candidates[:8], seconds[:8])
    scores = cost_model.predict(model, context, candidates[8:])
    assert scores.shape == (4,) and np.all(np.isfinite(scores))
    # Not random guesses: the same candidates get the same scores twice.
    np.testing.assert_array_equal(scores, cost_model.predict(model, context, candidates[8:]))


# MetaSchedule's own context, in an interpreter that imports only TVM: its constructor's import of
# the tensor intrinsics parses hundreds of TVMScript functions, each calling inspect.stack(), whose
# cost grows with the caller's stack and its loaded modules (231 s inside a loaded pytest process).
_THEIRS = """
import sys
import numpy as np
import tvm
from tvm.s_tir import Schedule, meta_schedule as ms

func, target, *scheduled = tvm.ir.load_json(open(sys.argv[1]).read())
theirs = ms.TuneContext(mod=func, target=target, num_threads=1)
args_info = ms.arg_info.ArgInfo.from_prim_func(func)
measure = [ms.search_strategy.MeasureCandidate(Schedule(mod), args_info) for mod in scheduled]
features = ms.feature_extractor.PerStoreFeature().extract_from(theirs, measure)
np.savez(sys.argv[2], *[f.numpy() for f in features], script=np.array(theirs.mod.script()),
         target=np.array(str(theirs.target)), threads=np.array(theirs.num_threads))
"""


@pytest.mark.slow
def test_lesson_context_gives_the_same_features_as_metaschedules_own(lab, fused_func, tmp_path):
    """tune_context skips TuneContext.__init__'s tensor-intrinsic import; nothing else may differ."""
    import subprocess
    import sys

    import tvm
    from tvm.s_tir import meta_schedule as ms

    candidates = [c.schedule for c in cost_model.sample_candidates(fused_func, 3, _conv_space)]
    (tmp_path / "mods.json").write_text(tvm.ir.save_json([fused_func, lab.target, *(c.mod for c in candidates)]))
    out = tmp_path / "theirs.npz"
    done = subprocess.run([sys.executable, "-c", _THEIRS, str(tmp_path / "mods.json"), str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = np.load(out)
    ours = cost_model.tune_context(fused_func, lab.target)
    assert ours.mod.script() == str(theirs["script"]) and str(ours.target) == str(theirs["target"])
    assert ours.num_threads == int(theirs["threads"]) == 1
    args_info = ms.arg_info.ArgInfo.from_prim_func(fused_func)
    mine = ms.feature_extractor.PerStoreFeature().extract_from(ours, [ms.search_strategy.MeasureCandidate(s, args_info) for s in candidates])
    assert len(mine) == 3
    for index, features in enumerate(mine):
        np.testing.assert_array_equal(features.numpy(), theirs[f"arr_{index}"])


def _conv_space(sch):
    """A one-decision design space on the convolution, for comparing feature extraction."""
    conv = sch.get_sblock("conv2d_nchw")
    xx = sch.get_loops(conv)[3]
    sch.split(xx, sch.sample_perfect_tile(xx, n=2, max_innermost_factor=32))


def starter_space(sch):
    """Lesson 1's design space as the exercise hands it out: the column tile and the order fixed."""
    matmul = sch.get_sblock("matmul")
    sch.compute_inline(sch.get_sblock("T_add"))
    i, j, k = sch.get_loops(matmul)
    i_outer, i_inner = sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=8))
    j_outer, j_inner = sch.split(j, factors=[None, 16])
    k_outer, k_inner = sch.split(k, sch.sample_perfect_tile(k, n=2, max_innermost_factor=16))
    sch.reorder(i_outer, j_outer, k_outer, k_inner, i_inner, j_inner)
    sch.vectorize(j_inner)
    sch.reverse_compute_at(sch.get_sblock("compute"), j_outer)
    sch.decompose_reduction(matmul, k_outer)


def test_a_small_space_gives_what_it_holds_and_names_its_decisions(head):
    candidates = cost_model.sample_candidates(head, 48, starter_space)
    # 64 rows with inner tiles of at most 8 (1, 2, 4, 8) times 512 with at most 16 (1 ... 16): 20
    assert len(candidates) == 20 and len({c.decisions for c in candidates}) == 20
    assert candidates[0].describe().startswith("tile of i0 ") and ", tile of k " in candidates[0].describe()
    labelled = cost_model.sample_candidates(head, 4, head_space)
    assert labelled[0].describe().split(", ")[3].startswith("choice ")
