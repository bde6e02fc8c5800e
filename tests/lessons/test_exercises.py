"""Lesson 2's exercise checks: a right answer passes, a starting point or a wrong answer gets a
note saying what is missing, and nothing a student writes makes a check raise."""
import pytest

from autograder.engine.bench import Measurements
from autograder.lessons import exercises, timing
from autograder.lessons.workload_data import WorkloadData


# The completed rungs of the ladder, as a student would write them. They live here, not in the
# package or the lesson, and the slow test below grades the top rung.
def tiles_8x32(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 8])
    x_outer, x_inner = sch.split(xx, factors=[None, 32])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)


def fused_8x32(sch):
    tiles_8x32(sch)
    loops = sch.get_loops(sch.get_sblock("conv2d_nchw"))
    sch.reverse_compute_at(sch.get_sblock("T_add"), loops[3])
    sch.reverse_compute_at(sch.get_sblock("compute"), loops[3])


TOP_RUNG = '''
def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 16])
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)
    sch.reorder(y_inner, rc, ry, rx, x_inner)
    sch.vectorize(x_inner)
    for name in ("T_add", "compute"):
        sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])
'''


def _top_rung():
    namespace: dict = {}
    exec(TOP_RUNG, namespace)
    return namespace["schedule"]


def _journal(sch):
    from autograder.lessons import schedules

    schedules.example("journal")(sch)


@pytest.fixture(scope="module")
def data():
    return WorkloadData.make()


def test_feedback_renders_as_markdown_and_text():
    feedback = exercises.Feedback("Exercise 9", exercises.NOT_YET, ["one", "two"])
    assert str(feedback) == "✗ Exercise 9: not yet\n  - one\n  - two"
    assert feedback._repr_markdown_().startswith("**✗ Exercise 9: not yet**")
    assert not feedback.passed and exercises.Feedback("E", exercises.DONE).passed


def test_split_prediction(fused_func):
    untouched = exercises.split_prediction(fused_func, "conv2d_nchw", "yy", {16: None, 20: None})
    assert untouched.status == exercises.NO_ANSWER
    assert "TVM: 14 x 16 = 224, no guard" in str(untouched)
    assert "12 x 20 = 240 iterations for a loop of 224: a `T.where` guard skips the last 16" in str(untouched)
    assert exercises.split_prediction(fused_func, "conv2d_nchw", "yy", {16: (14, 16), 20: (12, 20)}).passed
    wrong = exercises.split_prediction(fused_func, "conv2d_nchw", "yy", {16: (14, 16), 20: (11, 20)})
    assert wrong.status == exercises.NOT_YET and "not what TVM did" in str(wrong)


def test_loop_order(fused_func):
    expected = [1, 16, 28, 7, 8, 32, 3, 3, 3]
    assert exercises.loop_order(fused_func, lambda sch: None, "conv2d_nchw", expected).status == exercises.NO_ANSWER
    assert exercises.loop_order(fused_func, tiles_8x32, "conv2d_nchw", expected).passed

    def unordered(sch):
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(sch.get_sblock("conv2d_nchw"))
        sch.split(yy, factors=[None, 8])
        sch.split(xx, factors=[None, 32])

    feedback = exercises.loop_order(fused_func, unordered, "conv2d_nchw", expected)
    assert feedback.status == exercises.NOT_YET and "another order" in str(feedback)

    def broken(sch):
        sch.split(sch.get_loops(sch.get_sblock("conv2d_nchw"))[2], factors=[5, 5])

    feedback = exercises.loop_order(fused_func, broken, "conv2d_nchw", expected)
    assert feedback.status == exercises.NOT_YET and "your schedule raised" in str(feedback)
    assert len(str(feedback)) < 800  # the error's first line, not TVM's whole printout


def test_fused_tile(lab, fused_func, data):
    check = lambda schedule: exercises.fused_tile(fused_func, schedule, lab.target, data, lab.device, tile_bytes=8 * 32 * 4)  # noqa: E731
    done = check(fused_8x32)
    assert done.passed, str(done)
    assert "`conv2d_nchw_intermediate`: 1 x 1 x 8 x 32, 1.0 KiB" in str(done)
    starting = check(tiles_8x32)
    assert starting.status == exercises.NOT_YET and "still allocated for the whole function" in str(starting)

    def too_high(sch):  # under ff: a whole channel plane, not a tile
        tiles_8x32(sch)
        loops = sch.get_loops(sch.get_sblock("conv2d_nchw"))
        sch.reverse_compute_at(sch.get_sblock("T_add"), loops[1])
        sch.reverse_compute_at(sch.get_sblock("compute"), loops[1])

    assert "more than one tile's" in str(check(too_high))

    def raises(sch):
        raise RuntimeError("student's mistake")

    assert "RuntimeError: student's mistake" in str(check(raises))


def test_vectorised_tile(lab, fused_func, data):
    check = lambda schedule: exercises.vectorised_tile(fused_func, schedule, lab.target, data, lab.device, tile_bytes=16 * 16 * 4)  # noqa: E731
    done = check(_top_rung())
    assert done.passed, str(done)
    starting = check(_journal)
    assert starting.status == exercises.NOT_YET
    assert "innermost loop of `conv2d_nchw`: not vectorised" in str(starting)
    assert "Hint:" in str(starting)


def _comparison():
    samples = {"base": [1.0] * 8, "fast": [0.5] * 8, "slow": [2.0] * 8, "tie": [0.9, 1.1, 0.95, 1.05, 1.0, 0.98, 1.02, 1.0]}
    return timing.Comparison(Measurements(samples), "base")


def test_speed_prediction():
    comparison = _comparison()
    assert exercises.measured_verdict(comparison, "fast") == "faster"
    assert exercises.measured_verdict(comparison, "slow") == "slower"
    assert exercises.measured_verdict(comparison, "tie") == "same"
    assert exercises.speed_prediction({"fast": None}, comparison).status == exercises.NO_ANSWER
    assert exercises.speed_prediction({"fast": "Faster", "slow": "slower", "tie": "same"}, comparison).passed
    wrong = exercises.speed_prediction({"fast": "slower", "nope": "faster"}, comparison)
    assert wrong.status == exercises.NOT_YET
    assert "not on this CPU" in str(wrong) and "not among the builds timed" in str(wrong)
    assert "TVM_COURSE_MCPU=haswell" in str(wrong)
    assert "'quick' is not one of" in str(exercises.speed_prediction({"fast": "quick"}, comparison))


def test_kernel_prediction():
    facts = {"threads per block": 256, "shared bytes per block": 2048, "barriers per thread": 64}
    assert exercises.kernel_prediction(dict.fromkeys(facts), facts).status == exercises.NO_ANSWER
    assert exercises.kernel_prediction(dict(facts), facts).passed
    assert exercises.kernel_prediction({**facts, "barriers per thread": 32}, facts).status == exercises.NOT_YET


@pytest.mark.slow
def test_the_ladders_top_rung_earns_at_most_a_third_of_the_speed_points(fast_config):
    """The lesson's exercises stop short of the tiling assignment: their completed top rung is graded."""
    from autograder.engine.pipeline import grade_source
    from autograder.problems import get_problem

    result = grade_source("tile-fused-conv", TOP_RUNG, fast_config)
    assert result.credit["correctness"] > 0 and result.credit["structure"] > 0, result.to_text()
    assert result.credit.get("speed", 0.0) <= get_problem("tile-fused-conv").weights.speed / 3 + 1e-9, result.to_text()


def test_the_speed_check_says_how_to_see_another_cpu(monkeypatch):
    monkeypatch.delenv("TVM_COURSE_MCPU", raising=False)
    assert "with TVM_COURSE_MCPU=haswell" in str(exercises.speed_prediction({"fast": None}, _comparison()))
    monkeypatch.setenv("TVM_COURSE_MCPU", "haswell")
    assert "without TVM_COURSE_MCPU" in str(exercises.speed_prediction({"fast": None}, _comparison()))
