import numpy as np
import pytest

from autograder.lessons import cost_model


def test_candidates_are_distinct_samples_of_the_design_space(fused_func):
    candidates = cost_model.sample_candidates(fused_func, count=8)
    decisions = [c.decisions for c in candidates]
    assert len(set(decisions)) == 8
    for candidate in candidates:
        ff, yy, xx, reduction_outside = candidate.decisions
        assert ff[0] * ff[1] == 16 and yy[0] * yy[1] == 224 and xx[0] * xx[1] == 224
        assert ff[1] <= 8 and yy[1] <= 4 and xx[1] <= 32
        assert reduction_outside in (0, 1)
        kinds = [inst.kind.name for inst in candidate.schedule.trace.insts]
        assert kinds.count("SamplePerfectTile") == 3 and kinds.count("SampleCategorical") == 1
        assert f"ff {ff[0]}x{ff[1]}" in candidate.describe()


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
def test_xgboost_model_fits_and_ranks_measured_candidates(lab, fused_func):
    from autograder.lessons.workload_data import WorkloadData

    candidates = cost_model.sample_candidates(fused_func, count=12)
    arguments = WorkloadData.make().primfunc_arguments(lab.device)
    seconds = cost_model.measure(candidates, lab.target, lab.device, arguments, repeats=1)
    assert seconds.shape == (12,) and np.all(seconds > 0)
    context = cost_model.tune_context(fused_func, lab.target)
    model = cost_model.fit(context, candidates[:8], seconds[:8])
    scores = cost_model.predict(model, context, candidates[8:])
    assert scores.shape == (4,) and np.all(np.isfinite(scores))
    # Not random guesses: the same candidates get the same scores twice.
    np.testing.assert_array_equal(scores, cost_model.predict(model, context, candidates[8:]))


@pytest.mark.slow
def test_lesson_context_gives_the_same_features_as_metaschedules_own(lab, fused_func):
    """tune_context skips TuneContext.__init__'s tensor-intrinsic import; nothing else may differ."""
    from tvm.s_tir import meta_schedule as ms

    ours = cost_model.tune_context(fused_func, lab.target)
    theirs = ms.TuneContext(mod=fused_func, target=lab.target, num_threads=1)
    assert ours.mod.script() == theirs.mod.script() and str(ours.target) == str(theirs.target)
    assert ours.num_threads == theirs.num_threads == 1
    candidates = [c.schedule for c in cost_model.sample_candidates(fused_func, count=3)]
    args_info = ms.arg_info.ArgInfo.from_prim_func(fused_func)
    measure = [ms.search_strategy.MeasureCandidate(s, args_info) for s in candidates]
    extractor = ms.feature_extractor.PerStoreFeature()
    for a, b in zip(extractor.extract_from(ours, measure), extractor.extract_from(theirs, measure)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
