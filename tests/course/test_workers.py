"""autograder/course/workers.py: stopping a submission's whole process tree."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil

from autograder.course.workers import Job, WorkerSetup, failure, grade_submission, kill_tree

# A child that starts a grandchild in a session of its own (as a Jupyter kernel is started), then waits.
TREE = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
print("started", flush=True)
time.sleep(120)
"""


def test_kill_tree_stops_descendants_in_other_sessions():
    parent = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        descendants = psutil.Process(parent.pid).children(recursive=True)
        assert len(descendants) == 1
        kill_tree(parent.pid)
        parent.wait(timeout=10)
        time.sleep(0.2)
        assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in descendants)
    finally:
        if parent.poll() is None:
            parent.kill()


class FakeApi:
    """NbGraderAPI's autograde and generate_feedback, recording the order of the calls."""

    def __init__(self, calls, feedback_ok=True):
        self.calls, self.feedback_ok = calls, feedback_ok

    def autograde(self, assignment, student, force, create):
        self.calls.append("autograde")
        return {"success": True}

    def generate_feedback(self, assignment, student, force):
        self.calls.append("feedback")
        return {"success": self.feedback_ok, "error": "feedback broke"}


def test_the_grades_are_reported_before_the_feedback_runs_and_even_when_it_fails(tmp_path):
    setup = WorkerSetup(tmp_path, "tiling", None, {}, feedback=True)
    job = Job("ada", tmp_path / "ada.db")
    calls = []
    outcome = grade_submission(lambda db: FakeApi(calls, feedback_ok=False), setup, job, lambda: calls.append("autograded"))
    assert calls == ["autograde", "autograded", "feedback"]
    assert not outcome.ok and "nbgrader feedback failed" in outcome.error
    calls.clear()
    outcome = grade_submission(lambda db: FakeApi(calls), WorkerSetup(tmp_path, "tiling", None, {}, feedback=False), job, lambda: calls.append("autograded"))
    assert calls == ["autograde", "autograded"] and outcome.ok


# What NbGraderAPI.autograde returns when a preprocessor raised: the cause in the log, indented
# in nbgrader's traceback, and as the error only nbgrader's own exception
NBGRADER_LOG = """[INFO] Sanitizing /course/submitted/ann/tiling/tiling.ipynb
[ERROR] There was an error processing assignment: /course/submitted/ann/tiling
[ERROR] Traceback (most recent call last):
      File "nbgrader/converters/base.py", line 390, in convert_notebooks
        self.convert_single_notebook(notebook_filename)
    nbgrader.api.MissingEntry: No such grade cell
    During handling of the above exception, another exception occurred:
    Traceback (most recent call last):
    KeyError: 'points'
[WARNING] Removing failed assignment: /course/autograded/ann/tiling
[ERROR] Please see the the above traceback for details on the specific errors on the above failures.
"""
NBGRADER_ERROR = """Traceback (most recent call last):
  File "nbgrader/utils.py", line 542, in capture_log
nbgrader.converters.base.NbGraderException: Please see the the above traceback for details on the specific errors on the above failures.
"""


def test_a_failed_step_names_the_cause_from_nbgraders_log_first():
    said = failure("autograde", {"success": False, "log": NBGRADER_LOG, "error": NBGRADER_ERROR})
    first, *rest = said.splitlines()
    assert first == "nbgrader autograde failed: KeyError: 'points'"
    assert "    nbgrader.api.MissingEntry: No such grade cell" in rest and NBGRADER_ERROR.splitlines()[-1] in rest  # the log follows
    assert failure("feedback", {"success": False, "error": "RuntimeError: boom"}).splitlines()[0] == "nbgrader feedback failed: RuntimeError: boom"
    assert failure("feedback", {"success": False}) == "nbgrader feedback failed: no log\nno log"


def test_a_grading_process_starts_its_fork_server_before_it_steps_back():
    """What a local worker and a Dask worker do first: the fork server, and the runners it leads
    to, keep the priority the process had; the process itself then steps back behind them."""
    import json
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import json, os
        from autograder.course.workers import behind_timings
        from autograder.engine.config import GraderConfig
        from autograder.engine.forkserver import shared_server
        base = os.getpriority(os.PRIO_PROCESS, 0)   # the suite may run at any nice value
        behind_timings(GraderConfig())
        behind_timings(GraderConfig())   # again, as a Dask worker does before every submission
        server = shared_server()
        server_session = "0"   # its own session, not stepped back (no such file: the kernel has no autogroup)
        if os.path.exists(f"/proc/{server._process.pid}/autogroup"):
            with open(f"/proc/{server._process.pid}/autogroup") as group:
                server_session = group.read().split("nice")[-1].strip() or "0"
        print(json.dumps({"self": os.getpriority(os.PRIO_PROCESS, 0), "server_session": int(server_session),
                          "server": os.getpriority(os.PRIO_PROCESS, server._process.pid), "base": base}))
        server.close()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          start_new_session=True, check=True)
    from autograder.engine.config import GraderConfig

    seen = json.loads(done.stdout.splitlines()[-1])
    base = seen.pop("base")
    assert seen == {"self": max(base, GraderConfig().background_nice), "server": base, "server_session": 0}
