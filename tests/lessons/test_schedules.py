from autograder import examples
from autograder.lessons import ir_views, schedules


def test_examples_load_as_schedule_functions():
    assert examples.names() == ["journal"]  # the assignments' solutions are not in the package
    assert callable(schedules.example("journal"))
    assert "def schedule(sch)" in schedules.example_source("journal")


def test_the_yardsticks_are_what_the_lessons_show(fused_func):
    for problem in ("tile-fused-conv", "gpu-fused-conv"):
        assert callable(schedules.yardstick(problem))
        source = schedules.yardstick_source(problem)
        assert source.startswith("def schedule(sch):") and "sch.split" in source
    tiles = schedules.apply(fused_func, schedules.yardstick("tile-fused-conv"))
    assert "xx_0" in ir_views.loop_nest(tiles.mod["main"])


def test_journal_steps_end_where_the_journal_does(fused_func):
    stepwise = schedules.apply(fused_func, schedules.journal_steps(4))
    journal = schedules.apply(fused_func, schedules.example("journal"))
    assert ir_views.loop_nest(stepwise.mod["main"]) == ir_views.loop_nest(journal.mod["main"])
    assert ir_views.loop_nest(schedules.apply(fused_func, schedules.journal_steps(0)).mod["main"]) == ir_views.loop_nest(fused_func)
    assert len(schedules.JOURNAL_STEP_NAMES) == 5


def test_pad_inlined_removes_the_padding_block(fused_func):
    nest = ir_views.loop_nest(schedules.apply(fused_func, schedules.pad_inlined).mod["main"])
    assert "pad_temp" not in nest
    assert "block conv2d_nchw" in nest


def test_vectorized_tail_marks_the_inner_loops_of_add_and_relu(fused_func):
    script = schedules.apply(fused_func, schedules.journal_with_vectorized_tail).mod["main"].script()
    assert script.count("T.vectorized(") == 2


def test_compiled_schedules_compute_the_reference(lab, small_func):
    from autograder.lessons.workload_data import WorkloadData

    from .conftest import SMALL

    data = WorkloadData.make(SMALL, seed=2)
    arguments = data.primfunc_arguments(lab.device)
    for schedule in (schedules.unscheduled, schedules.pad_inlined):
        schedules.compile_schedule(small_func, schedule, lab.target)["main"](*arguments)
        assert data.is_correct(arguments[-1])
