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
    quoted = exercises.Feedback("E", exercises.NOT_YET, ["reverse_compute_at(block, <tile loop>)"])
    assert "&lt;tile loop&gt;" in quoted._repr_markdown_() and "<tile loop>" in str(quoted)  # text, not an HTML tag


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
    assert "innermost loop of `conv2d_nchw`: `rx`, not vectorised" in str(starting)
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


# --- the wrong answers that used to pass (issue 25), each with the right one beside it ---------


def test_loop_order_names_the_loops_not_just_their_extents(fused_func):
    expected = [1, 16, 28, 7, 8, 32, 3, 3, 3]
    names = ["nn", "ff", "yy_0", "xx_0", "yy_1", "xx_1", "rc", "ry", "rx"]
    assert exercises.loop_order(fused_func, tiles_8x32, "conv2d_nchw", expected, names).passed

    def columns_outermost_32x8(sch):  # 32-row x 8-column tiles, columns outermost: the same extents
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(sch.get_sblock("conv2d_nchw"))
        y_outer, y_inner = sch.split(yy, factors=[None, 32])
        x_outer, x_inner = sch.split(xx, factors=[None, 8])
        sch.reorder(x_outer, y_outer, x_inner, y_inner)

    assert exercises.loop_order(fused_func, columns_outermost_32x8, "conv2d_nchw", expected).passed  # extents alone
    feedback = exercises.loop_order(fused_func, columns_outermost_32x8, "conv2d_nchw", expected, names)
    assert feedback.status == exercises.NOT_YET and "The extents are right but not the loops" in str(feedback)
    assert "xx_0 28, yy_0 7, xx_1 8, yy_1 32" in str(feedback)


def _strided_rows(sch):
    """The top rung with the row loop innermost and vectorised: vectors of pixels a row apart."""
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 16])
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)
    sch.reorder(x_inner, rc, ry, rx, y_inner)
    sch.vectorize(y_inner)
    for name in ("T_add", "compute"):
        loops = sch.get_loops(sch.get_sblock(name))
        sch.reorder(loops[-1], loops[-2])
        sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])


def test_vectorising_strided_rows_is_not_the_rung(lab, fused_func, data):
    feedback = exercises.vectorised_tile(fused_func, _strided_rows, lab.target, data, lab.device, tile_bytes=16 * 16 * 4)
    assert feedback.status == exercises.NOT_YET, str(feedback)
    assert "innermost loop of `conv2d_nchw`: `yy_1`, vectorised, but it does not run along the row" in str(feedback)
    assert "innermost loop of `T_add`: `ax0`, vectorised, but it does not run along the row" in str(feedback)
    assert "Output correct" in str(feedback) and "Hint: vectorise the pixels of a tile row" in str(feedback)
    assert "innermost loop of `conv2d_nchw`: `xx_1`, vectorised." in str(exercises.vectorised_tile(
        fused_func, _top_rung(), lab.target, data, lab.device, tile_bytes=16 * 16 * 4))


# Lesson 1's fusion puzzle: the cell's schedule, with the line a student adds (as source: the grader
# runs it in a child of its own).
PUZZLE = """
def my_tiles(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    xx_outer, xx_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(nn, ff, yy, xx_outer, rc, ry, rx, xx_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), xx_outer)
    {line}


schedule = my_tiles
"""


@pytest.mark.parametrize("line,status,says", [
    ("pass", exercises.NO_ANSWER, "`compute` still runs at the root"),
    ('sch.reverse_compute_at(sch.get_sblock("compute"), yy)', exercises.NOT_YET, "runs under `yy`, not under the tile loop `xx_0`"),
    ('sch.reverse_compute_at(sch.get_sblock("compute"), xx_outer)', exercises.DONE, "inside the tile loop `xx_0`"),
    ('sch.reverse_compute_at(sch.get_sblock("ReLU"), xx_outer)', exercises.NOT_YET, "Cannot find a block with the name: ReLU"),
])
def test_the_fusion_puzzle_asks_for_the_tile_loop_and_shows_tvms_errors(fused_func, line, status, says):
    import autograder

    source = PUZZLE.format(line=line)
    namespace: dict = {}
    exec(source, namespace)
    result = autograder.check("tile-fused-conv", source, measure_speed=False)
    feedback = exercises.fusion_puzzle(result, fused_func, namespace["my_tiles"])
    assert feedback.status == status and says in str(feedback), str(feedback)
    if "yy)" in line:
        assert "the grader's fusion check passed" in str(feedback)  # the grader's L1 budget allows a row: not what is asked


_TVMSCRIPT = '''
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def my_head(x: T.Buffer((64, 512), "float32"), w: T.Buffer((512, 256), "float32"),
            b: T.Buffer((1, 256), "float32"), out: T.Buffer((64, 256), "float32")):
    scores = T.sblock_alloc_buffer((64, 256), "float32")
    for i, j, k in T.grid(64, 256, 512):
        with T.sblock("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                scores[vi, vj] = T.float32(0)
            scores[vi, vj] = scores[vi, vj] + x[vi, vk] * w[vk, vj]
    for i, j in T.grid(64, 256):
        with T.sblock("bias_relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = BODY
'''


def _my_head(body, tmp_path):
    import importlib.util

    path = tmp_path / f"head_{abs(hash(body))}.py"  # TVMScript parses the function's source file
    path.write_text(_TVMSCRIPT.replace("BODY", body))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.my_head


@pytest.mark.parametrize("body,status,says", [
    ("scores[vi, vj]", exercises.NOT_YET, "its output is x @ w, without the bias and the ReLU"),
    ("scores[vi, vj] + b[0, vj]", exercises.NOT_YET, "its output is x @ w + b, without the ReLU"),
    ("T.max(scores[vi, vj] + b[0, vj], T.float32(0))", exercises.DONE, "it computes relu(x @ w + b)"),
])
def test_the_tvmscript_head_is_checked_on_its_output(lab, tmp_path, body, status, says):
    from .conftest import classifier_head

    feedback = exercises.tensorir_function(_my_head(body, tmp_path), classifier_head(), lab.target, lab.device)
    assert feedback.status == status and says in str(feedback), str(feedback)
    assert "blocks: `matmul` (SSR), `bias_relu` (SS)." in str(feedback)


def test_the_design_space_must_sample_the_column_tile_and_the_order(lab):
    from autograder.lessons import cost_model

    from .conftest import classifier_head
    from .test_cost_model import head_space, starter_space

    head = classifier_head()
    data = cost_model.HeadData.make(head, lab.device)
    starting = exercises.design_space(head, starter_space, lab.target, data)
    assert starting.status == exercises.NOT_YET
    assert "one value, so the search cannot choose it" in str(starting) and "loop orders drawn: 1" in str(starting)
    done = exercises.design_space(head, head_space, lab.target, data)
    assert done.passed and "loop orders drawn: 2" in str(done), str(done)

    def only_the_tile(sch):  # the column tile sampled, the order still fixed
        matmul = sch.get_sblock("matmul")
        i, j, k = sch.get_loops(matmul)
        j_outer, j_inner = sch.split(j, sch.sample_perfect_tile(j, n=2, max_innermost_factor=64))

    assert exercises.design_space(head, only_the_tile, lab.target, data).status == exercises.NOT_YET
