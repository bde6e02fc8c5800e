"""Grading a class on a real Dask cluster (course/cluster.py): `dask scheduler` and `dask worker`
from the project's own environment on 127.0.0.1, real nbgrader, the real sandbox on the workers.

One scratch course is released and handed four samples (module fixture). The cluster tests kill
a worker while it grades, and the scheduler while its workers grade; every submission must end up
graded exactly once in the one gradebook here. The reply checks run on a real worker's reply.
"""
from __future__ import annotations

import copy
import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest

from autograder.course import cluster, cluster_worker
from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples
from autograder.course.submissions import find_submissions
from autograder.course.workers import kill_tree
from autograder.nbgrader_ext.plan import METADATA_KEY
from autograder.problems.variants import SECRET_ENV, course_secret, variant_for

from .conftest import COURSE

pytestmark = pytest.mark.slow

DASK = Path(sys.executable).parent / "dask"
SETTINGS = {"timing_rounds": 5, "min_repeat_ms": 5.0, "student_timeout_s": 3.0}
STUDENTS = ["ada", "ben", "cleo", "dev"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and `workers` single-threaded workers offering the grading resource."""

    def __init__(self, tmp: Path, workers: int = 0, env: dict | None = None):
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.log = tmp / f"dask-{self.address.rsplit(':', 1)[1]}.log"
        self.out = self.log.open("w")
        self.env = env
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
                                          stdout=self.out, stderr=subprocess.STDOUT, env=env)
        self.workers: list[subprocess.Popen] = []
        try:
            self._wait_for_port(int(port))
            for _ in range(workers):
                self.add_worker()
            if workers:
                self.wait_for_workers(workers)
        except BaseException:
            self.stop()
            raise

    def _wait_for_port(self, port: int) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"the scheduler did not start: {self.log.read_text()[-2000:]}")

    def add_worker(self, resources: bool = True) -> subprocess.Popen:
        command = [str(DASK), "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--death-timeout", "20"]
        if resources:
            command += ["--resources", f"{cluster.RESOURCE}=1"]
        # A worker whose own environment names another course's secret: the task's must win.
        env = dict(os.environ, **{SECRET_ENV: "another course's secret, not this one's"})
        worker = subprocess.Popen(command, stdout=self.out, stderr=subprocess.STDOUT, env=env)
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=60)

    def kill_when_grading(self, process: subprocess.Popen | None = None, replace: bool = False) -> threading.Thread:
        """Kill (SIGKILL, with its children) the first worker seen running a grading sandbox; or
        `process` (the scheduler) once any worker is. `replace`: then start a new worker."""
        self.killed: list[int] = []

        def watch():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not self.killed:
                for worker in self.workers:
                    try:
                        busy = bool(psutil.Process(worker.pid).children())
                    except psutil.Error:
                        continue
                    if busy:
                        victim = process or worker
                        kill_tree(victim.pid)
                        self.killed.append(victim.pid)
                        if replace:
                            self.add_worker()
                        return
                time.sleep(0.05)

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                kill_tree(process.pid)
            process.wait(timeout=10)
        self.out.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    root = copy_course(COURSE, tmp / "course")
    release_assignment(root, "tiling", students=STUDENTS)
    samples = submit_samples(root, "tiling", only=STUDENTS)
    return SimpleNamespace(root=root, tmp=tmp, samples=samples, coursedir=course_directory(load_course_config(root)))


def options(course, scheduler: str, **kwargs) -> GradingOptions:
    return GradingOptions("tiling", course=course.root, scheduler=scheduler, grader_settings=dict(SETTINGS), **{"progress": None, **kwargs})


def submission_rows(root: Path) -> dict[str, int]:
    with sqlite3.connect(root / "gradebook.db") as db:
        rows = db.execute("SELECT student.id, COUNT(*) FROM submitted_assignment JOIN student ON student.id = "
                          "submitted_assignment.student_id GROUP BY student.id").fetchall()
        grades = db.execute("SELECT COUNT(*), COUNT(DISTINCT notebook_id || cell_id) FROM grade").fetchone()
    return dict(rows), grades


def assert_graded_once_as_expected(course, report, students=STUDENTS) -> None:
    assert report.failures == {}
    rows = {row.student: row for row in report.rows}
    for student in students:
        assert course.samples[student].mismatches(rows[student].parts, rows[student].schedule) == [], student
    per_student, (grades, distinct) = submission_rows(course.root)
    assert all(per_student[s] == 1 for s in students) and set(per_student) <= set(STUDENTS)
    assert grades == distinct == len(per_student) * 4


def what_the_run_met(progress: io.StringIO, report) -> str:
    """What the cluster did to the run, as the instructor reads it: the workers lost (with the
    students they held), the submissions retried or sent again and why, the failures."""
    said = [line for line in progress.getvalue().splitlines() if line.startswith(("the cluster lost", "retried:"))]
    return "\n".join(said + [f"failed: {s}: {why}" for s, why in report.failures.items()]) or "nothing lost, nothing retried"


def assert_one_worker_lost_and_its_submission_rerun(progress: io.StringIO, report) -> None:
    met = what_the_run_met(progress, report)
    print(f"what the run met:\n{met}")  # shown on a pass too, with -rP
    assert report.failures == {}, met
    assert progress.getvalue().count("the cluster lost worker") == 1, met
    # Dask reran the one it was grading; the cluster lost nothing else that a task needed. (A
    # submission timed again on a disturbed core is retried too, for that reason: retime.py.)
    assert len([why for why in report.retried.values() if "a worker was lost" in why]) == 1, met
    assert "sent again" not in met, met


def test_a_class_graded_on_a_cluster_survives_a_worker_killed_mid_grading(course):
    dask = Cluster(course.tmp, workers=2)
    progress = io.StringIO()
    try:
        watcher = dask.kill_when_grading()
        report = grade_assignment(options(course, dask.address, force=True, progress=progress))
        watcher.join(timeout=5)
    finally:
        dask.stop()
    assert dask.killed, "no worker was seen grading"
    assert_one_worker_lost_and_its_submission_rerun(progress, report)
    assert_graded_once_as_expected(course, report)
    for student in STUDENTS:  # the Result says which machine timed it; the feedback came back
        graded = course.root / "autograded" / student / "tiling"
        results = json.loads((graded / "tiling.ipynb").read_text())["metadata"][METADATA_KEY]["results"]
        assert all(r["machine"] and socket.gethostname() in r["machine"] for r in results.values() if r["status"] != "error")
        variant = variant_for(student, course_secret(course.root))
        assert results["schedule"]["variant"] == {"student": student, **variant.to_dict()}
        assert (course.root / "feedback" / student / "tiling" / "tiling.html").is_file()
        assert (graded / "timestamp.txt").is_file()
    assert set(report.machines) == set(STUDENTS)


def test_the_class_survives_losing_the_only_worker_that_held_the_course(course):
    """The course's part of the grading is sent once and held by the workers that took it. Lost
    with the last of them (here the only worker, killed while it grades, then replaced), the
    cluster must make it again: as scattered data it was gone for good and every task that needed
    it was cancelled, the whole class with it (issue 43; under load the scheduler's Active Memory
    Manager had left a single copy of a broadcast by the time the submissions were sent)."""
    dask = Cluster(course.tmp, workers=1)
    progress = io.StringIO()
    try:
        watcher = dask.kill_when_grading(replace=True)
        report = grade_assignment(options(course, dask.address, force=True, progress=progress))
        watcher.join(timeout=5)
    finally:
        dask.stop()
    assert dask.killed, "no worker was seen grading"
    assert_one_worker_lost_and_its_submission_rerun(progress, report)
    assert_graded_once_as_expected(course, report)


def spinners(count: int, seconds: float) -> list[subprocess.Popen]:
    """`count` processes that spin on the CPU for at most `seconds` (each in its own session)."""
    spin = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(count)]


@pytest.mark.alone  # loads the machine on purpose: a lost worker under load is what it judges
def test_a_worker_killed_mid_grading_on_a_loaded_machine_costs_one_retry_not_the_class(course):
    """At a load of about 6 on 2 cores (4 spinners beside the grading's own processes: the load at
    which every test of the course must pass), everything is slow: the
    submissions are read and sent more slowly, heartbeats and replies come late. Losing a worker
    must still cost one retry, and every submission must be graded exactly once. (The grades
    themselves are not judged: timings at this load are not what the samples expect.) The load
    starts once the cluster is up: its start is not what is judged (under the load it took 9 s
    instead of 3)."""
    hogs = []
    dask = None
    progress = io.StringIO()
    try:
        dask = Cluster(course.tmp, workers=2)
        hogs = spinners(4, 600)
        watcher = dask.kill_when_grading()
        report = grade_assignment(options(course, dask.address, force=True, progress=progress))
        watcher.join(timeout=5)
    finally:
        for hog in hogs:
            kill_tree(hog.pid)
            hog.wait(timeout=10)
        if dask:
            dask.stop()
    assert dask.killed, "no worker was seen grading"
    assert_one_worker_lost_and_its_submission_rerun(progress, report)
    per_student, (grades, distinct) = submission_rows(course.root)
    assert sorted(report.graded) == STUDENTS and all(per_student[s] == 1 for s in STUDENTS), what_the_run_met(progress, report)
    assert grades == distinct == len(per_student) * 4


def test_a_lost_scheduler_loses_no_grade_and_the_next_run_grades_only_what_did_not_come_back(course):
    with pytest.raises(cluster.ClusterError, match="cannot reach the Dask scheduler"):
        cluster.connect(f"tcp://127.0.0.1:{free_port()}", timeout_s=2)
    first = Cluster(course.tmp)
    try:
        first.add_worker(resources=False)
        first.wait_for_workers(1)
        with pytest.raises(cluster.ClusterError, match="--resources grading=1"):
            cluster.connect(first.address)
        first.add_worker()
        first.wait_for_workers(2)
        watcher = first.kill_when_grading(process=first.scheduler)
        report = grade_assignment(options(course, first.address, force=True, students=["ada", "ben"]))
        watcher.join(timeout=5)
    finally:
        first.stop()
    assert first.killed
    assert report.failures and all("lost the Dask scheduler" in why for why in report.failures.values())
    failed = sorted(report.failures)
    second = Cluster(course.tmp, workers=1)
    try:
        again = grade_assignment(options(course, second.address, students=["ada", "ben"]))
    finally:
        second.stop()
    assert sorted(again.graded) == failed  # what came back before the loss is not graded twice
    assert_graded_once_as_expected(course, again, students=["ada", "ben"])


def test_a_submission_whose_grading_kills_its_worker_is_failed_not_lost_and_the_others_are_graded(course):
    """With the scheduler's allowed-failures at 0, one lost worker is Dask's verdict that the task
    kills workers (KilledWorker): that submission fails and is graded again next run. Dask says
    the same of a task only queued on that worker: that one is sent again, and graded."""
    env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    dask = Cluster(course.tmp, workers=2, env=env)
    try:
        watcher = dask.kill_when_grading()
        report = grade_assignment(options(course, dask.address, force=True, students=["ada", "dev"]))
        watcher.join(timeout=5)
    finally:
        dask.stop()
    assert dask.killed
    assert len(report.failures) == 1
    (killer, why), = report.failures.items()
    assert "killed every worker" in why
    other = ({"ada", "dev"} - {killer}).pop()
    # retried also says why a --force run graded the same submission again (its re-timing note);
    # only a resend is the cluster's doing: the other was queued behind the killer on its worker.
    if "sent again" in report.retried.get(other, ""):
        assert "never started there" in report.retried[other], report.retried
    rows = {row.student: row for row in report.rows}
    assert course.samples[other].mismatches(rows[other].parts, rows[other].schedule) == []
    assert not (course.root / "autograded" / killer / "tiling").exists()  # so the next run grades it


# ---------------------------------------------------------------- the reply is untrusted data

@pytest.fixture(scope="module")
def reply(course):
    from autograder.course.gradebook_sync import sqlite_path

    seed = cluster.seed_gradebook(sqlite_path(course.coursedir.db_url), course.tmp / "seed.db", course.coursedir.course_id)
    payload = cluster.course_payload(course.root, course.coursedir, "tiling", seed, None, SETTINGS, True, False)
    submission = next(s for s in find_submissions(course.coursedir, "tiling") if s.student == "ada")
    scratch = course.tmp / "worker-tmp"
    scratch.mkdir()
    # The scratch course is made by the worker's grading process, which finds TMPDIR as a
    # process started afresh does: a new one, since the test before this one stopped the last.
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(scratch)
    try:
        return cluster.grade_on_worker(payload, "ada", cluster._files(submission.directory)), scratch
    finally:
        if previous is None:
            os.environ.pop("TMPDIR")
        else:
            os.environ["TMPDIR"] = previous


def test_a_grading_past_the_submission_timeout_is_stopped_and_the_next_gets_a_fresh_process(course):
    from autograder.course.gradebook_sync import sqlite_path

    seed = cluster.seed_gradebook(sqlite_path(course.coursedir.db_url), course.tmp / "seed-timeout.db", course.coursedir.course_id)
    payload = cluster.course_payload(course.root, course.coursedir, "tiling", seed, None, SETTINGS, True, False,
                                     submission_timeout_s=0.5)
    submission = next(s for s in find_submissions(course.coursedir, "tiling") if s.student == "ada")
    started = time.monotonic()
    stopped = cluster.grade_on_worker(payload, "ada", cluster._files(submission.directory))
    assert time.monotonic() - started < 15
    assert not stopped["ok"] and "took longer than 0.5 s and was stopped" in stopped["error"]
    assert cluster_worker._process is None  # killed with all it started; the next task starts anew
    accepted = accept(course, stopped)  # what the instructor's run records: a failure, no grades
    assert not accepted.ok and accepted.rows is None and "was stopped" in accepted.error


def accept(course, reply):
    return cluster.accept(reply, "ada", ("tiling",), course.coursedir.db_url, "tiling", course.coursedir.course_id)


def test_a_workers_reply_is_accepted_only_when_every_part_of_it_checks(course, reply):
    good, _ = reply
    accepted = accept(course, good)
    assert accepted.ok and accepted.rows and set(accepted.notebooks) == {"tiling.ipynb"} and set(accepted.feedback) == {"tiling.html"}
    grade = next(iter(good["rows"]["notebooks"]["tiling"]["grades"]))
    notebook_json = json.loads(good["notebooks"]["tiling.ipynb"])
    broken_notebook = dict(notebook_json, cells="not cells")

    def changed(change):
        bad = copy.deepcopy(good)
        change(bad)
        return bad

    attacks = {
        "for another student": changed(lambda r: r.update(student="ben")),
        "a path for a notebook": changed(lambda r: r["notebooks"].update({"../../gradebook.db": b"x"})),
        "a feedback page for another name": changed(lambda r: r["feedback"].update({"index.html": b"x"})),
        "not a notebook": changed(lambda r: r["notebooks"].update({"tiling.ipynb": json.dumps(broken_notebook).encode()})),
        "a score above the cell's points": changed(lambda r: r["rows"]["notebooks"]["tiling"]["grades"][grade].update(auto_score=1e9)),
        "a NaN score": changed(lambda r: r["rows"]["notebooks"]["tiling"]["grades"][grade].update(auto_score=float("nan"))),
        "a flag for a score": changed(lambda r: r["rows"]["notebooks"]["tiling"]["grades"][grade].update(auto_score=True)),
        "a grade cell the assignment lacks": changed(
            lambda r: r["rows"]["notebooks"]["tiling"]["grades"].update(extra={"auto_score": 1, "needs_manual_grade": False})),
        "a grade left out": changed(lambda r: r["rows"]["notebooks"]["tiling"]["grades"].pop(grade)),
        "another notebook's rows": changed(lambda r: r["rows"]["notebooks"].update(other=r["rows"]["notebooks"]["tiling"])),
        "graded without rows": changed(lambda r: r.update(rows=None)),
        "a bad timestamp": changed(lambda r: r["rows"].update(timestamp="yesterday")),
        "a file too large": changed(lambda r: r["feedback"].update({"tiling.html": b"x" * (cluster.MAX_FILE_BYTES + 1)})),
        "not a mapping": ["tiling"],
    }
    for name, bad in attacks.items():
        with pytest.raises(cluster.Rejected):
            accept(course, bad)
            pytest.fail(f"accepted: {name}")
    escaped = accept(course, changed(lambda r: r.update(error="\x1b[2J PASSED", machine="m\x1b[31m")))
    assert "\x1b" not in escaped.error and "\x1b" not in escaped.machine


def test_a_worker_builds_its_scratch_course_from_the_task_alone_and_leaves_nothing(course, reply, tmp_path):
    good, scratch = reply
    assert good["ok"] and good["error"] == ""
    nbformat.reads(good["notebooks"]["tiling.ipynb"].decode(), as_version=4)
    assert good["machine"].startswith(socket.gethostname())
    with pytest.raises(ValueError, match="unsafe"):
        cluster_worker._write_tree(tmp_path, {"../escape": b"x"})
    assert not (tmp_path.parent / "escape").exists()
    assert not list(scratch.glob("tvm-course-worker-*"))  # the scratch course is gone


# ---------------------------------------------------------------- an oversized or odd submission costs only itself

def test_a_notebook_heavy_with_outputs_a_linked_notebook_and_an_oversized_folder_get_the_local_verdicts(course):
    """The local path reads a notebook up to 256 MiB without its outputs and refuses a link
    (nbgrader_ext/notebook_file.py): the cluster gives the same verdicts. A folder of more than a
    task may carry fails alone, saying so; the rest of the run is graded."""
    honest = course.root / "submitted" / "dev" / "tiling" / "tiling.ipynb"
    notebook = json.loads(honest.read_text())
    images = [{"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * (8 << 20)}} for _ in range(10)]
    next(c for c in notebook["cells"] if c["cell_type"] == "code")["outputs"] = images  # 80 MiB of images
    for student in ("heavy", "linked", "oversized"):
        folder = course.root / "submitted" / student / "tiling"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text((honest.parent / "timestamp.txt").read_text())
    (course.root / "submitted" / "heavy" / "tiling" / "tiling.ipynb").write_text(json.dumps(notebook))
    (course.root / "submitted" / "linked" / "tiling" / "tiling.ipynb").symlink_to(honest)
    (course.root / "submitted" / "oversized" / "tiling" / "tiling.ipynb").write_bytes(honest.read_bytes())
    (course.root / "submitted" / "oversized" / "tiling" / "data.bin").write_bytes(b"\0" * (cluster.MAX_SUBMISSION_BYTES + 1))
    sent = cluster.submission_files(course.root / "submitted" / "heavy" / "tiling")
    assert len(sent.files["tiling.ipynb"]) < 1 << 20 and sent.refused == {}
    dask = Cluster(course.tmp, workers=2)
    try:
        report = grade_assignment(options(course, dask.address, students=["dev", "heavy", "linked", "oversized"], force=True))
    finally:
        dask.stop()
    rows = {row.student: row for row in report.rows}
    assert set(report.failures) == {"oversized"}, report.failures
    assert "not sent to the cluster" in report.failures["oversized"] and "more than the 64 MiB" in report.failures["oversized"]
    for student in ("dev", "heavy"):  # graded by its code, as on this machine
        assert course.samples["dev"].mismatches(rows[student].parts, rows[student].schedule) == [], student
    assert rows["linked"].score == 0 and "tiling.ipynb not graded, 0 points: not a regular file (a symbolic link)" in rows["linked"].note
    page = (course.root / "feedback" / "linked" / "tiling" / "tiling.html").read_text()
    assert "Your tiling.ipynb was not graded: 0 points" in page and "(not a regular file (a symbolic link))" in page
    assert not (course.root / "autograded" / "oversized" / "tiling").exists()  # so the next run grades it again
