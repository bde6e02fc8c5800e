from autograder.lessons import session


def test_start_runs_tvm_on_one_thread_with_the_host_target(lab):
    import tvm

    assert lab.threads == 1 == tvm.runtime.num_threads()
    assert lab.target.kind.name == "llvm"
    assert str(lab.target.attrs.get("mcpu", "")) != ""  # the host CPU, not SSE2-only plain "llvm"
    assert "1 TVM thread" in lab.summary()
    assert "TVM threads used for timing: **1**" in lab._repr_markdown_()


def test_l1_data_cache_read_from_a_sysfs_layout(tmp_path):
    for name, level, kind, size in (("index0", "1", "Data", "48K"), ("index1", "1", "Instruction", "32K"), ("index2", "2", "Unified", "1024K")):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "level").write_text(level + "\n")
        (directory / "type").write_text(kind + "\n")
        (directory / "size").write_text(size + "\n")
    assert session.l1_data_cache_bytes(tmp_path) == 48 * 1024
    assert session.l1_data_cache_bytes(tmp_path / "absent") is None


def test_gpu_name_agrees_with_the_runtime(lab):
    from autograder.engine.runners import gpu_present

    assert (lab.gpu is not None) == gpu_present()


def test_the_lessons_compile_for_the_cpu_tvm_course_mcpu_names(monkeypatch):
    from autograder.lessons.session import host_target

    monkeypatch.setenv("TVM_COURSE_MCPU", "haswell")
    assert str(host_target().attrs["mcpu"]) == "haswell"
    monkeypatch.delenv("TVM_COURSE_MCPU")
    import tvm

    assert str(host_target().attrs["mcpu"]) == str(tvm.target.Target.from_device(tvm.cpu()).attrs["mcpu"])



def test_start_leaves_the_kernel_free_to_run_on_every_cpu():
    """TVM's pool, started by session.start(), binds the thread that starts it to one core unless
    told not to (engine/threads.py): a kernel bound so would run everything it starts after
    (MetaSchedule's workers, a self-check's grader) on that one core. In a fresh process, as a
    kernel starts, with nothing of the test run's environment about TVM."""
    import json
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if not key.startswith("TVM_")}
    probe = "import json, os\nfrom autograder.lessons import session\nsession.start()\nprint(json.dumps(sorted(os.sched_getaffinity(0))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == sorted(os.sched_getaffinity(0))
