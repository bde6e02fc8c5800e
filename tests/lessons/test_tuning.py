"""autograder/lessons/tuning.py: MetaSchedule's search fitted to a busy machine, and its report."""
import pytest

from autograder.lessons import cost_model, tuning

from .conftest import classifier_head
from .test_cost_model import head_space


@pytest.fixture(scope="module")
def head(lab):
    return classifier_head()


def tvm_module(func):
    import tvm

    return tvm.IRModule({"main": func})


def test_the_kernel_builder_builds_here_and_keeps_errors(lab, head):
    import os

    from tvm.s_tir import meta_schedule as ms

    builder = tuning.KernelBuilder()
    [result] = builder.build([ms.builder.BuilderInput(tvm_module(head), lab.target)])
    assert result.error_msg is None and os.path.isfile(result.artifact_path)
    import tvm

    broken = tvm.target.Target({"kind": "llvm", "mtriple": "nonsense-unknown-nowhere"})  # LLVM has no such target
    [failed] = builder.build([ms.builder.BuilderInput(tvm_module(head), broken)])
    assert failed.artifact_path is None and builder.errors and failed.error_msg == builder.errors[0]
    assert builder.built == 1


def test_the_context_is_built_without_the_tensor_intrinsics(lab, head):
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, 'tests'); import autograder.lessons; from autograder.lessons import tuning; "
            "from lessons.conftest import classifier_head; import tvm; "
            "c = tuning.context(classifier_head(), tvm.target.Target.from_device(tvm.cpu())); "
            "print(c.task_name, 'tvm.s_tir.tensor_intrin' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["main", "False"], out.stderr[-2000:]


def test_the_runner_limit_is_fitted_and_has_a_floor(lab, head):
    data = cost_model.HeadData.make(head, lab.device)
    limit, measured = tuning.fitted_runner_timeout(head, lab.target, lab.device, data.arguments)
    assert measured > 0 and limit == max(tuning.RUNNER_FLOOR_S, tuning.RUNNER_FACTOR * measured)


def test_the_report_says_what_happened():
    failed = tuning.TuningReport(8, 406.0, 0, 0, ["TimeoutError: built too slowly"] * 8, [], found=False)
    text = str(failed)
    assert text.startswith("MetaSchedule's search: 8 trials asked for, 0 built, 0 ran, in 406 s.")
    assert "It found no schedule" in text and "8 builds failed; the first: TimeoutError: built too slowly" in text
    found = str(tuning.TuningReport(8, 20.0, 8, 7, [], ["LocalRunner: Timeout, killed after 30 seconds"], found=True))
    assert "It found a schedule" in found and "1 runs failed; the first: LocalRunner: Timeout" in found


def test_progress_to_log_tells_metaschedule_it_is_not_in_jupyter_for_its_duration(monkeypatch):
    import builtins

    from tvm.s_tir.meta_schedule import utils

    class ZMQInteractiveShell:  # what a Jupyter kernel's get_ipython() returns
        pass

    monkeypatch.setattr(builtins, "get_ipython", ZMQInteractiveShell, raising=False)
    assert utils._using_ipython() is True
    with tuning.progress_to_log():
        assert utils._using_ipython() is False
    assert utils._using_ipython() is True and "get_ipython" not in vars(utils)


@pytest.mark.slow
def test_a_search_over_the_lessons_design_space_builds_and_runs_every_trial(lab, head, capfd, monkeypatch):
    import builtins
    import pathlib
    import tempfile

    import tvm
    from tvm.s_tir import meta_schedule as ms

    target = tvm.target.Target({**lab.target.export(), "num-cores": 1})
    builder, runner = tuning.KernelBuilder(), tuning.RecordingRunner(timeout_sec=60)
    search = ms.search_strategy.EvolutionarySearch(population_size=8, init_min_unmeasured=4, genetic_num_iters=1)

    class ZMQInteractiveShell:  # as in the lesson's Jupyter kernel, where the task table would be displayed
        pass

    monkeypatch.setattr(builtins, "get_ipython", ZMQInteractiveShell, raising=False)
    import logging

    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    monkeypatch.setattr(ms_logger, "level", ms_logger.level)  # restored after
    ms_logger.setLevel(logging.WARNING)  # as the lesson: its log goes to work_dir's files
    capfd.readouterr()
    with tempfile.TemporaryDirectory() as work_dir, tuning.progress_to_log():
        task = tuning.context(head, target, space=ms.space_generator.ScheduleFn(
            head_space, sch_rules=[], postprocs=[], mutator_probs={ms.mutator.MutateTileSize(): 1.0}), strategy=search,
                              work_dir=work_dir)
        database = ms.tune_tasks(tasks=[task], task_weights=[1.0], work_dir=work_dir, max_trials_global=4,
                                 num_trials_per_iter=4, builder=builder, runner=runner)
        tuned = ms.tir_integration.compile_tir(database, head, target)
        logged = "".join(p.read_text(errors="replace") for p in pathlib.Path(work_dir).rglob("*.log"))
    shown = capfd.readouterr()
    assert "Total trials" not in shown.out + shown.err  # not in the notebook: "Total trials: 0" before the first trial
    assert "Total trials: 4" in logged  # in the search's log instead
    assert (builder.built, runner.ran, builder.errors, runner.errors) == (4, 4, [], [])
    kinds = [inst.kind.name for inst in tuned.trace.insts]
    assert kinds.count("Split") == 3 and "ComputeInline" in kinds  # the lesson's own design space, decided
