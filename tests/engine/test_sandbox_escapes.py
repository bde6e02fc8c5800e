"""Hostile submissions that go after the grader itself, not the schedule: each must fail.

These are the attacks a security review tried against the sandbox (forging the evaluator's
result through /proc, outliving the grading, flooding the channel, malformed reports, reading
the grader's environment). Each test grades the attack for real and checks it gains nothing.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from autograder.engine.pipeline import grade_source

pytestmark = pytest.mark.slow

FORGE_THE_EVALUATORS_RESULT = '''
import json, os, signal
def schedule(sch):
    forged = {"kind": "result", "outcome": "ran", "correct": True, "checks": [], "messages": [],
              "speedup": {"median": 3.0, "q1": 3.0, "q3": 3.0, "minimum": 3.0, "maximum": 3.0, "cv": 0.0, "n": 15}}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            continue
        if b"autograder.engine.evaluate" in cmd:
            fd = int(cmd[cmd.index(b"autograder.engine.evaluate") + 1])
            with open(f"/proc/{pid}/fd/{fd}", "w") as channel:
                channel.write(json.dumps(forged) + "\\n")
            os.kill(int(pid), signal.SIGKILL)
            return
    raise RuntimeError("no evaluator found")
'''


def grade(source, config):
    return grade_source("tile-fused-conv", textwrap.dedent(source), config)


def test_the_evaluators_channel_cannot_be_opened_from_student_code(fast_config):
    result = grade(FORGE_THE_EVALUATORS_RESULT, fast_config)
    assert result.status == "error" and result.score == 0
    assert "PermissionError" in result.messages[0]


def test_student_code_cannot_start_processes_that_outlive_the_grading(fast_config):
    result = grade(
        """
        import os, time
        def schedule(sch):
            if os.fork() == 0:
                os.setsid()
                time.sleep(600)
        """,
        fast_config,
    )
    assert result.status == "error"
    # seccomp refuses fork (EPERM); without seccomp, RLIMIT_NPROC does (EAGAIN)
    assert "PermissionError" in result.messages[0] or "BlockingIOError" in result.messages[0]


def test_student_code_cannot_start_threads_either(fast_config):
    result = grade(
        """
        import threading
        def schedule(sch):
            threading.Thread(target=lambda: None).start()
        """,
        fast_config,
    )
    assert result.status == "error" and "thread" in result.messages[0].lower()


def test_student_code_has_no_privilege_and_under_root_a_user_of_its_own(fast_config):
    """Under a root grader, a uid and gid no other process has (what the kernel counts per user
    is its alone); elsewhere the grader's. Its privileges are none, and it cannot change user."""
    from autograder.engine import world

    result = grade("import os\ndef schedule(sch):\n    print('uid', os.getuid(), 'gid', os.getgid(), 'root', os.access('/', os.W_OK))\n"
                   "    os.setuid(12345)\n", fast_config)
    if os.geteuid() == 0 and world.supported().own_identity:
        uid = int(result.student_output.split("uid ")[1].split()[0])
        assert uid >= world.IDENTITY_BASE and f"uid {uid} gid {uid} root False" in result.student_output
    else:
        assert f"uid {os.getuid()} gid {os.getgid()} root False" in result.student_output
    # EPERM without a capability; EINVAL in a world, where no other uid even exists
    assert result.status == "error" and ("PermissionError" in result.messages[0] or "Errno 22" in result.messages[0])


def test_the_graders_environment_is_not_passed_to_student_code(fast_config, monkeypatch):
    monkeypatch.setenv("TVM_COURSE_TEST_SECRET_TOKEN", "hunter2")
    result = grade("import os\ndef schedule(sch):\n    print(sorted(os.environ))\n    print(os.environ.get('TVM_COURSE_TEST_SECRET_TOKEN'))\n", fast_config)
    assert "hunter2" not in result.student_output
    assert "TVM_COURSE_TEST_SECRET_TOKEN" not in result.student_output


def test_a_flood_on_the_private_channel_is_cut_off_and_rejected(fast_config):
    result = grade(
        """
        import os, sys
        def schedule(sch):
            fd = int(sys.argv[1])
            block = b"[" * (1 << 20)
            for _ in range(64):
                os.write(fd, block)
        """,
        fast_config,
    )
    assert result.status == "rejected" and "flooded" in result.messages[0]


@pytest.mark.parametrize(
    "report, said",
    [
        ('{"kind": "exception"}', "field 'message' is missing"),
        ('{"kind": "exception", "message": 123}', "field 'message' is int, not text"),
        ('{"kind": "schedule_error", "message": ["x"], "where": 5}', "field 'message' is list, not text"),
        ('{"kind": "trace", "trace": {"not": "a list"}}', "trace is malformed"),  # a trace's content is the schema's to refuse
        ('{"kind": "trace"}', "trace is malformed"),
        ('"just a string"', "field 'kind' is 'garbled'"),
    ],
)
def test_malformed_reports_on_the_channel_give_a_verdict_not_a_traceback(fast_config, report, said):
    """The student's child runs the submission, which can write anything on its channel: a
    report that does not read is the submission's verdict (score 0, never a grader fault),
    saying which field was wrong."""
    source = f"import os, sys\ndef schedule(sch):\n    os.write(int(sys.argv[1]), {report!r}.encode() + b'\\n')\n    os._exit(0)\n"
    result = grade(source, fast_config)
    assert result.status in ("error", "rejected", "crashed") and result.score == 0 and not result.grader_fault
    assert result.messages and all(isinstance(m, str) for m in result.messages)
    assert said in result.messages[0]


def test_long_exception_texts_are_cut(fast_config):
    result = grade("def schedule(sch):\n    raise RuntimeError('x' * 100_000)\n", fast_config)
    assert result.status == "error"
    assert len(result.messages[0]) < 2500 and "more characters cut" in result.messages[0]


def test_an_unavailable_module_says_which_ones_a_schedule_can_use(fast_config):
    result = grade("import not_a_module_of_this_course\ndef schedule(sch):\n    pass\n", fast_config)
    assert result.status == "error"
    assert "could not import 'not_a_module_of_this_course'" in result.messages[0]
    assert "numpy" in result.messages[0]


# ---- payloads of allowed primitives, sent as the trace ----------------------------------

SEND_A_TRACE = '''
import json, os, sys
def schedule(sch):
    trace = json.loads({trace!r})
    os.write(int(sys.argv[1]), (json.dumps({{"kind": "trace", "trace": trace}}) + "\\n").encode())
    os._exit(0)
'''


def forged_trace_submission(trace) -> str:
    import json

    return SEND_A_TRACE.format(trace=json.dumps(trace))


def test_an_expression_with_call_extern_in_a_trace_runs_nothing_and_scores_nothing(fast_config, tmp_path):
    """The forge: an allowed primitive whose input TVM parses into call_extern("system", ...)."""
    import tvm
    from tvm import tirx

    marker = tmp_path / "pwned"
    call = tvm.ir.save_json(tirx.call_extern("int32", "system", f"touch {marker}"))
    conv = ["GetSBlock", [], ["conv2d_nchw", "main"], ["b0"]]
    attempts = [
        [[conv, ["ReindexCacheRead", ["b0", call], [0, "local"], ["b1"]]], []],
        [[conv, ["Annotate", ["b0", call], ["pragma_auto_unroll_max_step"]]], []],
        [[conv, ["GetLoops", ["b0"], [], ["l1", "l2", "l3", "l4", "l5", "l6", "l7"]],
          ["Split", ["l4", call, 16], [True, False], ["l8", "l9"]]], []],
    ]
    for trace in attempts:
        result = grade(forged_trace_submission(trace), fast_config)
        assert result.status == "rejected" and result.score == 0, result.to_text()
        assert result.correct is None and f"instruction {len(trace[0]) - 1}" in result.messages[0]
    assert not marker.exists()


def test_disable_predication_is_rejected_not_certified(fast_config):
    result = grade(
        """
        def schedule(sch):
            loops = sch.get_loops(sch.get_sblock("conv2d_nchw"))
            sch.split(loops[3], [None, 17], disable_predication=True)
        """,
        fast_config,
    )
    assert result.status == "rejected" and "disable_predication" in result.messages[0]


def test_many_large_valid_messages_are_cut_off_and_the_grader_stays_small(fast_config):
    import threading

    import psutil

    me, peak, done = psutil.Process(), [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            done.wait(0.02)

    before = me.memory_info().rss
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = grade(
            """
            import json, os, sys
            def schedule(sch):
                message = (json.dumps({"kind": "note", "data": [1] * 300_000}) + "\\n").encode()
                for _ in range(2000):  # 1.8 GB in all, each message valid JSON
                    os.write(int(sys.argv[1]), message)
            """,
            fast_config,
        )
    finally:
        done.set()
        watcher.join()
    assert result.status == "rejected" and "flooded" in result.messages[0]
    assert (peak[0] - before) / 2**20 < 200


# ---- the machine around the sandbox -------------------------------------------------------

def test_the_solution_notebook_and_the_answer_key_cannot_be_read(fast_config):
    from pathlib import Path

    solution = Path(__file__).resolve().parents[2] / "course" / "source" / "tiling" / "tiling.ipynb"
    assert solution.exists()
    result = grade(f"def schedule(sch):\n    print(open({str(solution)!r}).read())\n", fast_config)
    assert result.status == "error" and ("PermissionError" in result.messages[0] or "FileNotFoundError" in result.messages[0])
    assert "tvm_course" not in result.student_output and "key" not in result.student_output


def test_shared_memory_and_tmp_cannot_be_written_and_nothing_outlives_the_grading(fast_config):
    import glob

    before = set(glob.glob("/dev/shm/*")) | set(glob.glob("/tmp/*"))
    result = grade(
        """
        def schedule(sch):
            for path in ("/dev/shm/hoard", "/tmp/left-behind", "scratch-file"):
                try:
                    open(path, "wb").write(b"x" * (64 << 20))
                    print("wrote", path)
                except OSError as error:
                    print("refused", path, type(error).__name__)
        """,
        fast_config,
    )
    assert "wrote" not in result.student_output
    assert result.student_output.count("refused") == 3
    assert not {p for p in set(glob.glob("/dev/shm/*")) | set(glob.glob("/tmp/*")) - before if "hoard" in p or "left-behind" in p}


def test_no_network_and_no_programs(fast_config):
    result = grade(
        """
        import os, socket, subprocess
        def schedule(sch):
            for name, attempt in [("socket", lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)),
                                  ("unix", lambda: socket.socket(socket.AF_UNIX)),
                                  ("exec", lambda: os.execv("/bin/sh", ["sh", "-c", "true"])),
                                  ("subprocess", lambda: subprocess.run(["true"]))]:
                try:
                    attempt()
                    print(name, "WORKED")
                except Exception as error:
                    print(name, type(error).__name__)
        """,
        fast_config,
    )
    assert "WORKED" not in result.student_output, result.student_output
    for name in ("socket", "unix", "exec", "subprocess"):
        assert name in result.student_output


# ---- text from the submission ---------------------------------------------------------------

def test_escape_sequences_and_lone_surrogates_cannot_repaint_or_break_the_report(fast_config, capsys):
    result = grade(
        """
        def schedule(sch):
            print("\\x1b[2J\\x1b[HPASSED  score 1.00\\r\\u202e")
            raise RuntimeError("\\x1b[32mPASSED\\x1b[0m \\ud800")
        """,
        fast_config,
    )
    assert result.status == "error" and result.score == 0
    for text in (result.to_text(), result.to_json(), result._repr_html_()):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text and "\ud800" not in text
    assert "\\x1b[32mPASSED" in result.messages[0] and "\ufffd" in result.messages[0]
    print(result.to_text())  # both output modes print, whatever the text was
    print(result.to_json())
    assert "\\x1b[2J" in capsys.readouterr().out
